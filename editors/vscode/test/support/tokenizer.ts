/**
 * Tokenizes text with the extension's grammars through vscode-textmate and
 * vscode-oniguruma, the same engine VS Code uses.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as oniguruma from "vscode-oniguruma";
import * as vsctm from "vscode-textmate";

/** The extension root: compiled tests run from `out/test/support/`. */
export const EXTENSION_ROOT = path.resolve(__dirname, "..", "..", "..");

/** One token: its text and the scope stack from outermost to innermost. */
export interface Token {
  text: string;
  scopes: string[];
  line: number;
  startIndex: number;
}

const MARKDOWN_GRAMMAR = require.resolve("tm-grammars/grammars/markdown.json");

/** Grammar files by scope name: ours from `syntaxes/`, Markdown's from tm-grammars. */
const GRAMMAR_PATHS: Record<string, string> = {
  "source.mlir": path.join(EXTENSION_ROOT, "syntaxes/mlir.tmLanguage.json"),
  "markdown.mlir.codeblock": path.join(EXTENSION_ROOT, "syntaxes/mlir.markdown.tmLanguage.json"),
  "text.html.markdown": MARKDOWN_GRAMMAR,
};

let registryPromise: Promise<vsctm.Registry> | undefined;

let wasmLoaded: Promise<void> | undefined;

/** Loads oniguruma's WebAssembly once per process. */
function loadOniguruma(): Promise<void> {
  wasmLoaded ??= (async () => {
    const wasm = fs.readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  })();
  return wasmLoaded;
}

/** A registry that knows this extension's grammars and Markdown's; `theme` enables colours. */
export async function createRegistry(theme?: vsctm.IRawTheme): Promise<vsctm.Registry> {
  await loadOniguruma();
  return new vsctm.Registry({
    theme,
    onigLib: Promise.resolve({
      createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text: string) => new oniguruma.OnigString(text),
    }),
    loadGrammar: (scopeName: string) => {
      const file = GRAMMAR_PATHS[scopeName];
      if (file === undefined) {
        return Promise.resolve(null);
      }
      return Promise.resolve(vsctm.parseRawGrammar(fs.readFileSync(file, "utf8"), file));
    },
    getInjections: (scopeName: string) =>
      scopeName === "text.html.markdown" ? ["markdown.mlir.codeblock"] : undefined,
  });
}

/** The shared registry (oniguruma's WASM is loaded once per process). */
export function registry(): Promise<vsctm.Registry> {
  registryPromise ??= createRegistry();
  return registryPromise;
}

/** Loads a grammar by scope name, failing loudly if it is missing. */
export async function loadGrammar(scopeName: string): Promise<vsctm.IGrammar> {
  const grammar = await (await registry()).loadGrammar(scopeName);
  if (grammar === null) {
    throw new Error(`grammar ${scopeName} could not be loaded`);
  }
  return grammar;
}

/** The tokens of one line and the depth of the rule stack after it (1 = top level). */
export interface TokenizedLine {
  tokens: Token[];
  depthAfter: number;
}

/** Tokenizes a whole document, line by line, carrying the rule stack across lines. */
export async function tokenizeLines(text: string, scopeName = "source.mlir"): Promise<TokenizedLine[]> {
  const grammar = await loadGrammar(scopeName);
  let ruleStack = vsctm.INITIAL;
  return text.split(/\r?\n/).map((lineText, line) => {
    const result = grammar.tokenizeLine(lineText, ruleStack, 1000);
    if (result.stoppedEarly) {
      throw new Error(`tokenization stopped early on line ${line + 1}`);
    }
    ruleStack = result.ruleStack;
    const tokens = result.tokens.map((token) => ({
      text: lineText.substring(token.startIndex, token.endIndex),
      scopes: token.scopes,
      line,
      startIndex: token.startIndex,
    }));
    return { tokens, depthAfter: ruleStack.depth };
  });
}

/** Tokenizes a whole document and returns only the tokens of each line. */
export async function tokenize(text: string, scopeName = "source.mlir"): Promise<Token[][]> {
  return (await tokenizeLines(text, scopeName)).map((line) => line.tokens);
}
