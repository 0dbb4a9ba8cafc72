/** The Markdown injection: ```mlir fences are highlighted with source.mlir inside VS Code's Markdown grammar. */
import * as assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { TokenizedDocument } from "./support/document";

const MARKDOWN = [
  "# Loop fusion",
  "",
  "```mlir",
  "%0 = affine.load %A[%i] : memref<8xf32>",
  "```",
  "",
  "Text after the block with affine.for in it.",
  "",
  "~~~ MLIR",
  "affine.for %j = 0 to 4 {",
  "~~~",
  "",
  "```python",
  "x = affine.load(a)",
  "```",
].join("\n");

let doc: TokenizedDocument;

before(async () => {
  doc = await TokenizedDocument.of(MARKDOWN, "text.html.markdown");
});

describe("Markdown ```mlir code blocks", () => {
  it("MLIR inside the fence gets source.mlir scopes within the embedded block", () => {
    doc.expectScope("%0 = affine.load", "affine.load", "entity.name.function.operation.affine.mlir");
    doc.expectScope("%0 = affine.load", "affine.load", "meta.embedded.block.mlir");
    doc.expectScope("%0 = affine.load", "%A", "variable.other.ssa.mlir");
    doc.expectScope("%0 = affine.load", "memref", "support.type.builtin.mlir");
  });

  it("the fence and its language name are Markdown punctuation", () => {
    doc.expectScope("```mlir", "```", "punctuation.definition.markdown");
    doc.expectScope("```mlir", "mlir", "fenced_code.block.language.markdown");
  });

  it("tilde fences and an upper-case info string work too", () => {
    doc.expectScope("affine.for %j", "affine.for", "entity.name.function.operation.affine.mlir");
    doc.expectScope("affine.for %j", "to", "keyword.control.affine.mlir");
  });

  it("text after the closing fence is Markdown again", () => {
    const line = doc.lineOf("Text after the block");
    const scopes = doc.allTokens().filter((token) => token.line === line).flatMap((token) => token.scopes);
    assert.ok(!scopes.some((scope) => scope.endsWith(".mlir")), `unexpected MLIR scopes: ${scopes.join(" ")}`);
  });

  it("other languages' fences are left alone", () => {
    const line = doc.lineOf("x = affine.load(a)");
    const scopes = doc.allTokens().filter((token) => token.line === line).flatMap((token) => token.scopes);
    assert.ok(!scopes.some((scope) => scope.endsWith(".mlir")), `unexpected MLIR scopes: ${scopes.join(" ")}`);
  });
});
