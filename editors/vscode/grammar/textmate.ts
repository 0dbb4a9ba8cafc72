/**
 * Minimal typings for the TextMate grammar JSON that VS Code loads.
 * Only the keys this project's grammars use are modelled.
 */

/** Scope name and optional nested patterns applied to one capture group. */
export interface Capture {
  name?: string;
  patterns?: Rule[];
}

/** Capture group number (as a string key) to its scope. */
export type Captures = Record<string, Capture>;

/** One grammar rule: a single-line match, a begin/end or begin/while region, or an include. */
export interface Rule {
  comment?: string;
  name?: string;
  contentName?: string;
  match?: string;
  begin?: string;
  end?: string;
  while?: string;
  captures?: Captures;
  beginCaptures?: Captures;
  endCaptures?: Captures;
  whileCaptures?: Captures;
  patterns?: Rule[];
  include?: string;
  applyEndPatternLast?: boolean;
}

/** A complete grammar file. */
export interface Grammar {
  name?: string;
  scopeName: string;
  fileTypes?: string[];
  injectionSelector?: string;
  patterns: Rule[];
  repository: Record<string, Rule>;
}

/** Shorthand for a `{ include: "#name" }` reference to a repository rule. */
export function ref(name: string): Rule {
  return { include: `#${name}` };
}

/** Shorthand for a capture that only assigns a scope. */
export function scope(name: string): Capture {
  return { name };
}
