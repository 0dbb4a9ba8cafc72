/**
 * The generated grammar files under `syntaxes/`, each with the function that
 * builds its content. `scripts/writeGrammars.ts` writes them; a test checks
 * that the committed files match.
 */
import { buildMarkdownInjectionGrammar } from "./markdownInjection";
import { buildMlirGrammar } from "./mlirGrammar";
import type { Grammar } from "./textmate";

/** Path of a generated grammar file, relative to the extension root. */
export interface GrammarFile {
  relativePath: string;
  build: () => Grammar;
}

export const GRAMMAR_FILES: readonly GrammarFile[] = [
  { relativePath: "syntaxes/mlir.tmLanguage.json", build: buildMlirGrammar },
  { relativePath: "syntaxes/mlir.markdown.tmLanguage.json", build: buildMarkdownInjectionGrammar },
];

/** The exact text written for a grammar (stable key order, trailing newline). */
export function serializeGrammar(grammar: Grammar): string {
  return JSON.stringify(grammar, null, 2) + "\n";
}
