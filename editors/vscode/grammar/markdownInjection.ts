/**
 * Injection grammar that highlights fenced ```mlir code blocks in Markdown
 * with `source.mlir`. It is injected into `text.html.markdown` with the `L:`
 * prefix so that its fence rule wins over Markdown's generic fenced block.
 */
import type { Grammar } from "./textmate";
import { scope } from "./textmate";

/** Scope name of the injection grammar. */
export const MARKDOWN_INJECTION_SCOPE = "markdown.mlir.codeblock";

/** Scope of the code inside the fence; mapped to the `mlir` language in package.json. */
export const EMBEDDED_MLIR_SCOPE = "meta.embedded.block.mlir";

/** Builds the Markdown injection grammar. */
export function buildMarkdownInjectionGrammar(): Grammar {
  return {
    scopeName: MARKDOWN_INJECTION_SCOPE,
    injectionSelector: "L:text.html.markdown",
    patterns: [{ include: "#mlir-fenced-code-block" }],
    repository: {
      "mlir-fenced-code-block": {
        comment: "An opening fence of three or more backticks or tildes whose info string starts with `mlir`.",
        name: "markup.fenced_code.block.markdown",
        begin: String.raw`(^|\G)(\s*)(\x60{3,}|~{3,})\s*(?i:(mlir)((?:\s+|[:,{?])[^\x60~]*)?$)`,
        beginCaptures: {
          "3": scope("punctuation.definition.markdown"),
          "4": scope("fenced_code.block.language.markdown"),
          "5": scope("fenced_code.block.language.attributes.markdown"),
        },
        end: String.raw`(^|\G)(\2|\s{0,3})(\3)\s*$`,
        endCaptures: { "3": scope("punctuation.definition.markdown") },
        patterns: [
          {
            begin: String.raw`(^|\G)(\s*)(.*)`,
            while: String.raw`(^|\G)(?!\s*([\x60~]{3,})\s*$)`,
            contentName: EMBEDDED_MLIR_SCOPE,
            patterns: [{ include: "source.mlir" }],
          },
        ],
      },
    },
  };
}
