/** Assertion helpers over a tokenized document: find a token by its text and check its scopes. */
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Token } from "./tokenizer";
import { EXTENSION_ROOT, tokenize } from "./tokenizer";

const IDENTIFIER_CHAR = /[A-Za-z0-9_$.]/;

/**
 * Columns where `text` occurs as a whole: if it starts (ends) with an
 * identifier character, the character before (after) it must not be one.
 * So the "i" in "affine_map" is not an occurrence of "i".
 */
function occurrences(source: string, text: string, partOfWord: boolean): number[] {
  const columns: number[] = [];
  for (let column = source.indexOf(text); column !== -1; column = source.indexOf(text, column + 1)) {
    const before = source.charAt(column - 1);
    const after = source.charAt(column + text.length);
    const startsClean = !IDENTIFIER_CHAR.test(text.charAt(0)) || !IDENTIFIER_CHAR.test(before);
    const endsClean = !IDENTIFIER_CHAR.test(text.charAt(text.length - 1)) || !IDENTIFIER_CHAR.test(after);
    if (partOfWord || (startsClean && endsClean)) {
      columns.push(column);
    }
  }
  return columns;
}

export class TokenizedDocument {
  private constructor(
    private readonly sourceLines: string[],
    private readonly tokens: Token[][],
  ) {}

  static async of(text: string, scopeName = "source.mlir"): Promise<TokenizedDocument> {
    return new TokenizedDocument(text.split(/\r?\n/), await tokenize(text, scopeName));
  }

  /** Index of the first line containing `marker`. */
  lineOf(marker: string): number {
    const index = this.sourceLines.findIndex((line) => line.includes(marker));
    assert.notEqual(index, -1, `no line contains ${JSON.stringify(marker)}`);
    return index;
  }

  /**
   * The token for the `occurrence`-th whole appearance of `text` (counting
   * from 0) on the first line containing `lineMarker`. Fails unless one token
   * covers exactly `text`. With `partOfWord`, occurrences inside a word
   * count too (for tokens such as the `4` in `4xf32`).
   */
  token(lineMarker: string, text: string, occurrence = 0, partOfWord = false): Token {
    const line = this.lineOf(lineMarker);
    const source = this.sourceLines[line];
    const columns = occurrences(source, text, partOfWord);
    assert.ok(occurrence < columns.length, `${JSON.stringify(text)} occurs fewer than ${occurrence + 1} times in: ${source}`);
    const column = columns[occurrence];
    const token = this.tokens[line].find((candidate) => candidate.startIndex === column);
    assert.ok(token, `no token starts at ${JSON.stringify(text)} in: ${source}\n${this.describeLine(line)}`);
    assert.equal(token.text, text, `token at ${JSON.stringify(text)} is ${JSON.stringify(token.text)} in: ${source}`);
    return token;
  }

  /** Asserts the token has `scope` (exactly, as one element of its scope stack). */
  expectScope(lineMarker: string, text: string, scope: string, occurrence = 0, partOfWord = false): void {
    const token = this.token(lineMarker, text, occurrence, partOfWord);
    assert.ok(
      token.scopes.includes(scope),
      `${JSON.stringify(text)} on "${this.sourceLines[token.line].trim()}" has scopes [${token.scopes.join(", ")}], expected ${scope}`,
    );
  }

  /** Asserts no element of the token's scope stack starts with `prefix`. */
  expectNoScopeStartingWith(lineMarker: string, text: string, prefix: string, occurrence = 0): void {
    const token = this.token(lineMarker, text, occurrence);
    const offending = token.scopes.find((scope) => scope.startsWith(prefix));
    assert.equal(offending, undefined, `${JSON.stringify(text)} unexpectedly has ${offending}`);
  }

  /** All tokens of all lines. */
  allTokens(): Token[] {
    return this.tokens.flat();
  }

  private describeLine(line: number): string {
    return this.tokens[line].map((token) => `${JSON.stringify(token.text)}: ${token.scopes.slice(1).join(" ")}`).join("\n");
  }
}

/** Reads a fixture from `test/fixtures/`. */
export function readFixture(name: string): string {
  return fs.readFileSync(path.join(EXTENSION_ROOT, "test", "fixtures", name), "utf8");
}
