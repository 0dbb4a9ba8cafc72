/**
 * Rules for `affine_map<...>` and `affine_set<...>` attributes.
 *
 * Inside a map or set, dimension identifiers are the names declared in the
 * leading `(...)` list and symbol identifiers the names declared in the
 * optional `[...]` list. TextMate rules cannot remember a list of names for a
 * later match rule, but an `end` pattern may refer back to its own `begin`
 * captures. We use that as follows:
 *
 * - A chain of nested "layers" all begins, zero-width, at the map's header.
 *   Each layer's `begin` looks ahead over the header and captures up to
 *   {@link NAME_SLOTS} dimension names and as many symbol names.
 * - Each layer's `end` matches the next occurrence of any captured name and
 *   scopes it as a dimension or a symbol, then hands over to the enclosing
 *   layer, which does the same for the following occurrence.
 * - {@link LAYERS} layers therefore classify the first {@link LAYERS} name
 *   uses after the header by declaration. Past that, or when the header does
 *   not fit on one line, uses fall back to MLIR's printed convention: `dN` is
 *   a dimension and `sN` a symbol.
 * - Headers that already follow the convention skip the layers: each layer
 *   compiles its own regex, and the convention gives the same answer.
 */
import { BARE_ID, CLOSING_ANGLE, ID_CHAR, TOKEN_START } from "./lexical";
import type { Rule } from "./textmate";
import { ref, scope } from "./textmate";

/** How many declared dimension (and, separately, symbol) names a layer remembers. */
export const NAME_SLOTS = 8;

/** How many name uses after the header are classified by declaration. */
export const LAYERS = 16;

/** Scope of a dimension identifier where it is declared. */
export const DIMENSION_DECLARATION = "variable.parameter.dimension.affine.mlir";
/** Scope of a symbol identifier where it is declared. */
export const SYMBOL_DECLARATION = "variable.parameter.symbol.affine.mlir";
/** Scope of a dimension identifier used in a result expression or constraint. */
export const DIMENSION_USE = "variable.other.dimension.affine.mlir";
/** Scope of a symbol identifier used in a result expression or constraint. */
export const SYMBOL_USE = "variable.other.symbol.affine.mlir";

/** A name list with `slots` capturing groups followed by any number of extra names. */
function capturedNameList(slots: number): string {
  let tail = "";
  for (let i = 1; i < slots; i++) {
    tail += String.raw`(?:\s*,\s*(${BARE_ID})`;
  }
  tail += ")?".repeat(slots - 1);
  return String.raw`(?:(${BARE_ID})${tail}(?:\s*,\s*${BARE_ID})*)?`;
}

/** Lookahead over a whole header `(dims)[syms] ->` or `(dims)[syms] :`, capturing the names. */
function headerLookahead(): string {
  const dims = capturedNameList(NAME_SLOTS);
  const syms = capturedNameList(NAME_SLOTS);
  return String.raw`\G(?=\s*\(\s*${dims}\s*\)\s*(?:\[\s*${syms}\s*\])?\s*(?:->|:))`;
}

/**
 * A header whose dimensions are all named `dN` and symbols `sN`, as MLIR
 * prints them. The convention already classifies those names, so the layers
 * (which cost a compiled regex each) are skipped for such headers.
 */
function conventionalHeader(): string {
  const names = (letter: string) => String.raw`(?:${letter}[0-9]+(?:\s*,\s*${letter}[0-9]+)*)?`;
  return String.raw`\s*\(\s*${names("d")}\s*\)\s*(?:\[\s*${names("s")}\s*\])?\s*(?:->|:)`;
}

/**
 * Matches one use of a captured name. An unused slot's backreference is
 * empty; the guards (no identifier character before the start, one right
 * before the end) make an empty alternative impossible to match.
 */
function capturedNameUse(): string {
  const backrefs = (first: number) =>
    Array.from({ length: NAME_SLOTS }, (_, i) => `\\${first + i}`).join("|");
  const dims = backrefs(1);
  const syms = backrefs(NAME_SLOTS + 1);
  return String.raw`(?<!${ID_CHAR})(?:(${dims})|(${syms}))(?<=${ID_CHAR})(?!${ID_CHAR})`;
}

/** Repository key of layer `n` (1-based). */
function layerKey(n: number): string {
  return `affine-layer-${n}`;
}

/** The nested layers that classify name uses by the header's declarations. */
function layers(): Record<string, Rule> {
  const rules: Record<string, Rule> = {};
  for (let n = 1; n <= LAYERS; n++) {
    const inner: Rule[] = n < LAYERS ? [ref(layerKey(n + 1))] : [];
    rules[layerKey(n)] = {
      comment: `Classifies name use number ${LAYERS + 1 - n} after the header (see affineMaps.ts).`,
      begin: n === 1 ? String.raw`\G(?!${conventionalHeader()})${headerLookahead().slice(2)}` : headerLookahead(),
      end: String.raw`${capturedNameUse()}|(?=${CLOSING_ANGLE})`,
      endCaptures: { "1": scope(DIMENSION_USE), "2": scope(SYMBOL_USE) },
      patterns: [...inner, ref("affine-header"), ref("affine-expression")],
    };
  }
  return rules;
}

/** `affine_map<` or `affine_set<` up to the matching `>`. */
function affineAttribute(keyword: string, kind: string): Rule {
  return {
    name: `meta.${kind}.affine.mlir`,
    begin: String.raw`${TOKEN_START}(${keyword})\s*(<)`,
    beginCaptures: {
      "1": scope(`storage.type.attribute.${keyword}.mlir`),
      "2": scope("punctuation.definition.attribute.begin.mlir"),
    },
    end: String.raw`(${CLOSING_ANGLE})`,
    endCaptures: { "1": scope("punctuation.definition.attribute.end.mlir") },
    patterns: [ref(layerKey(1)), ref("affine-header"), ref("affine-expression")],
  };
}

/** A comma-separated list of declared names with the given scope. */
function declarationList(nameScope: string): Rule[] {
  return [
    { match: BARE_ID, name: nameScope },
    { match: ",", name: "punctuation.separator.comma.mlir" },
  ];
}

/** All rules for maps and sets, keyed for the grammar repository. */
export function affineMapRules(): Record<string, Rule> {
  return {
    "affine-map": affineAttribute("affine_map", "affine-map"),
    "affine-set": affineAttribute("affine_set", "affine-set"),
    "affine-header": {
      comment: "The declaration part `(d0, d1)[s0] ->` of a map, or `(d0)[s0] :` of a set.",
      match: String.raw`\G\s*(\()([^()\[\]<>]*)(\))\s*(?:(\[)([^()\[\]<>]*)(\]))?\s*(->|:)`,
      captures: {
        "1": scope("punctuation.section.parens.begin.mlir"),
        "2": { patterns: declarationList(DIMENSION_DECLARATION) },
        "3": scope("punctuation.section.parens.end.mlir"),
        "4": scope("punctuation.section.brackets.begin.mlir"),
        "5": { patterns: declarationList(SYMBOL_DECLARATION) },
        "6": scope("punctuation.section.brackets.end.mlir"),
        "7": {
          patterns: [
            { match: "->", name: "keyword.operator.arrow.mlir" },
            { match: ":", name: "punctuation.separator.colon.mlir" },
          ],
        },
      },
    },
    "affine-expression": {
      comment: "Result expressions of a map and constraints of a set.",
      patterns: [
        ref("affine-word-operator"),
        { match: String.raw`(?<!${ID_CHAR})d[0-9]+(?!${ID_CHAR})`, name: DIMENSION_USE },
        { match: String.raw`(?<!${ID_CHAR})s[0-9]+(?!${ID_CHAR})`, name: SYMBOL_USE },
        { match: String.raw`(?<!${ID_CHAR})${BARE_ID}`, name: "variable.other.affine.mlir" },
        { match: "(?:>=|==|<=)", name: "keyword.operator.comparison.affine.mlir" },
        { match: "->", name: "keyword.operator.arrow.mlir" },
        { match: String.raw`[-+*]`, name: "keyword.operator.arithmetic.mlir" },
        { match: String.raw`(?<!${ID_CHAR})[0-9]+(?!${ID_CHAR})`, name: "constant.numeric.integer.mlir" },
        ref("punctuation"),
      ],
    },
    "affine-word-operator": {
      match: String.raw`(?<!${ID_CHAR})(?:floordiv|ceildiv|mod)(?!${ID_CHAR})`,
      name: "keyword.operator.word.affine.mlir",
    },
    ...layers(),
  };
}
