/**
 * Regular-expression fragments for MLIR's lexical structure, shared by the
 * grammar rules. All fragments are Oniguruma syntax (what VS Code runs).
 */

/** A character that may continue an MLIR `bare-id`. */
export const ID_CHAR = String.raw`[A-Za-z0-9_$.]`;

/** MLIR `bare-id`: a letter or `_`, then letters, digits, `_`, `$` or `.`. */
export const BARE_ID = String.raw`[A-Za-z_][A-Za-z0-9_$.]*`;

/** One dot-free segment of a dotted name, e.g. the dialect in `affine.for`. */
export const NAME_SEGMENT = String.raw`[A-Za-z_][A-Za-z0-9_$]*`;

/** MLIR `suffix-id` (after `%` or `^`): digits, or a letter/`$._-` then letters, digits, `$._-`. */
export const SUFFIX_ID = String.raw`(?:[0-9]+|[A-Za-z$._-][A-Za-z0-9$._-]*)`;

/** A token may start here: not inside an identifier and not right after a sigil. */
export const TOKEN_START = String.raw`(?<![A-Za-z0-9_$.%#@^!])`;

/** The token ends here: no identifier character follows. */
export const TOKEN_END = String.raw`(?!${ID_CHAR})`;

/**
 * A type may start here: at a token start, or right after the `x` that ends a
 * shape dimension (`4xf32`, `?xi8`, `[4]xf32`, `*xf32`).
 */
export const TYPE_START = String.raw`(?:${TOKEN_START}|(?<=[0-9?*\]]x))`;

/** Builtin scalar type names (integers, floats, `index`, `none`). */
export const BUILTIN_SCALAR_TYPE = String.raw`(?:index|none|[su]?i[0-9]+|bf16|tf32|f16|f32|f64|f80|f128|f[468]E[0-9A-Za-z]+)`;

/** The `>` that closes an `affine_map<...>`/`affine_set<...>`: not part of `->` or `>=`. */
export const CLOSING_ANGLE = String.raw`(?<!-)>(?!=)`;

/** A regex alternation of literal words. */
export function anyOf(words: readonly string[]): string {
  return `(?:${words.join("|")})`;
}
