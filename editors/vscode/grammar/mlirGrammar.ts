/**
 * The TextMate grammar `source.mlir` for MLIR's textual format, built as data.
 *
 * Scope naming scheme (every scope ends in `.mlir`; the roots are the
 * standard TextMate ones so that any theme colours them):
 *
 * | construct                              | scope                                               |
 * |----------------------------------------|-----------------------------------------------------|
 * | op name `affine.for`, `"test.op"`      | `entity.name.function.operation.<dialect>.mlir`     |
 * | SSA value `%x`, `%0#1`                 | `variable.other.ssa.mlir`                            |
 * | block label `^bb0`                     | `entity.name.label.block.mlir`                       |
 * | symbol `@f`                            | `variable.other.constant.symbol.mlir`                |
 * | attribute alias `#map`                 | `constant.other.attribute.alias.mlir`                |
 * | dialect attribute `#gpu.x<...>`        | `constant.other.attribute.dialect.mlir`              |
 * | builtin attribute `dense<`, `affine_map<` | `storage.type.attribute.<name>.mlir`             |
 * | builtin type `f32`, `memref`           | `support.type.builtin.mlir`                          |
 * | type alias `!t`                        | `entity.name.type.alias.mlir`                        |
 * | dialect type `!llvm.ptr`               | `support.type.dialect.mlir`                          |
 * | map/set dims (declared / used)         | `variable.parameter.dimension.affine.mlir` / `variable.other.dimension.affine.mlir` |
 * | map/set symbols (declared / used)      | `variable.parameter.symbol.affine.mlir` / `variable.other.symbol.affine.mlir` |
 * | `floordiv` `ceildiv` `mod`             | `keyword.operator.word.affine.mlir`                  |
 * | `symbol(`                              | `keyword.other.symbol.affine.mlir`                   |
 * | `to` `step` `iter_args` `max` `min` `reduce` in affine op headers | `keyword.control.affine.mlir` |
 * | the same words elsewhere (e.g. `scf.for`, casts) | `keyword.other.mlir`                      |
 * | `else`                                 | `keyword.control.else.mlir`                          |
 * | strings / numbers                      | `string.quoted.double.mlir` / `constant.numeric.{integer,float}.mlir` |
 * | comments / `// -----`                  | `comment.line.double-slash.mlir` / `comment.line.double-slash.split-marker.mlir` |
 */
import { affineMapRules } from "./affineMaps";
import {
  BARE_ID,
  BUILTIN_SCALAR_TYPE,
  NAME_SEGMENT,
  SUFFIX_ID,
  TOKEN_END,
  TOKEN_START,
  TYPE_START,
  anyOf,
} from "./lexical";
import type { Grammar, Rule } from "./textmate";
import { ref, scope } from "./textmate";

/** Scope of an operation name; `$N` is replaced by capture N (the dialect). */
function operationScope(dialectCapture: number): string {
  return `entity.name.function.operation.$${dialectCapture}.mlir`;
}

/** Where a custom-form op name can start: at the start of a line or after the `=` of its results. */
const OP_POSITION = String.raw`(?:^|(?<==))\s*`;

/**
 * A line that starts another operation, a block label or a closing brace: an
 * affine op header missing its `{` must not swallow the following lines.
 */
const NEXT_OPERATION_LINE = String.raw`^(?=\s*(?:[%^}]|${NAME_SEGMENT}\.[A-Za-z_]|"${NAME_SEGMENT}\.))`;

/** Words with a meaning in affine op headers (`affine.for`, `affine.parallel`, `affine.if`). */
const AFFINE_HEADER_KEYWORDS = ["to", "step", "iter_args", "max", "min", "reduce"];

function comments(): Record<string, Rule> {
  return {
    "split-marker": {
      comment: "`// -----` separates independent chunks (mlir-opt --split-input-file).",
      match: String.raw`^\s*(// -----)\s*$`,
      captures: { "1": scope("comment.line.double-slash.split-marker.mlir") },
    },
    comment: {
      name: "comment.line.double-slash.mlir",
      begin: "//",
      beginCaptures: { "0": scope("punctuation.definition.comment.mlir") },
      end: "$",
      patterns: [
        {
          comment: "FileCheck directives such as `CHECK:`, `CHECK-LABEL:`, `RUN:`.",
          match: String.raw`(?<![A-Za-z0-9_-])[A-Z][A-Z0-9_]*(?:-(?:NEXT|SAME|NOT|LABEL|DAG|EMPTY|COUNT-[0-9]+))?:`,
          name: "keyword.other.directive.filecheck.mlir",
        },
        {
          comment: "mlir-opt -verify-diagnostics annotations.",
          match: String.raw`\bexpected-(?:error|warning|remark|note)(?:@[-+a-z0-9]+)?`,
          name: "keyword.other.directive.diagnostic.mlir",
        },
      ],
    },
  };
}

function operations(): Record<string, Rule> {
  return {
    "affine-op-header": {
      comment: "`affine.for`/`affine.parallel`/`affine.if` up to their region, where header keywords apply.",
      begin: String.raw`${OP_POSITION}((affine)\.(?:for|parallel|if))${TOKEN_END}`,
      beginCaptures: { "1": scope(operationScope(2)) },
      end: String.raw`(?=\{)|${NEXT_OPERATION_LINE}`,
      patterns: [
        {
          match: String.raw`${TOKEN_START}${anyOf(AFFINE_HEADER_KEYWORDS)}${TOKEN_END}`,
          name: "keyword.control.affine.mlir",
        },
        ref("values"),
      ],
    },
    "operation-name": {
      comment: "Custom-form op name `dialect.op`; the dialect becomes part of the scope.",
      match: String.raw`${OP_POSITION}((${NAME_SEGMENT})\.${BARE_ID})${TOKEN_END}`,
      captures: { "1": scope(operationScope(2)) },
    },
    "builtin-operation-name": {
      comment: "Ops printed without their dialect prefix.",
      patterns: [
        { match: String.raw`^\s*(module)${TOKEN_END}`, captures: { "1": scope("entity.name.function.operation.builtin.mlir") } },
        { match: String.raw`^\s*(func|return)${TOKEN_END}`, captures: { "1": scope("entity.name.function.operation.func.mlir") } },
        { match: String.raw`${OP_POSITION}(call|call_indirect)${TOKEN_END}`, captures: { "1": scope("entity.name.function.operation.func.mlir") } },
      ],
    },
    "generic-operation-name": {
      comment: 'Generic-form op name `"dialect.op"(...)`.',
      match: String.raw`(")((${NAME_SEGMENT})\.${BARE_ID})(")(?=\s*\()`,
      captures: {
        "1": scope("punctuation.definition.string.begin.mlir"),
        "2": scope(operationScope(3)),
        "4": scope("punctuation.definition.string.end.mlir"),
      },
    },
  };
}

function identifiers(): Record<string, Rule> {
  return {
    "ssa-value": {
      match: String.raw`(%${SUFFIX_ID})(?:(#)([0-9]+))?`,
      captures: {
        "1": scope("variable.other.ssa.mlir"),
        "2": scope("punctuation.separator.result-index.mlir"),
        "3": scope("constant.numeric.integer.result-index.mlir"),
      },
    },
    "block-label": { match: String.raw`\^${SUFFIX_ID}`, name: "entity.name.label.block.mlir" },
    "symbol-ref": {
      match: String.raw`@(?:${SUFFIX_ID}|"(?:[^"\\]|\\.)*")`,
      name: "variable.other.constant.symbol.mlir",
    },
  };
}

/** A `<...>` body that may nest further angle brackets. */
function angleBody(): Rule[] {
  return [ref("nested-angle"), ref("values")];
}

function attributes(): Record<string, Rule> {
  return {
    "builtin-attribute": {
      patterns: [
        {
          begin: String.raw`${TOKEN_START}(dense_resource|dense|sparse|array|strided|opaque)\s*(<)`,
          beginCaptures: {
            "1": scope("storage.type.attribute.$1.mlir"),
            "2": scope("punctuation.definition.attribute.begin.mlir"),
          },
          end: ">",
          endCaptures: { "0": scope("punctuation.definition.attribute.end.mlir") },
          patterns: angleBody(),
        },
        {
          begin: String.raw`${TOKEN_START}(distinct)(\[)([0-9]+)(\])(<)`,
          beginCaptures: {
            "1": scope("storage.type.attribute.distinct.mlir"),
            "2": scope("punctuation.section.brackets.begin.mlir"),
            "3": scope("constant.numeric.integer.mlir"),
            "4": scope("punctuation.section.brackets.end.mlir"),
            "5": scope("punctuation.definition.attribute.begin.mlir"),
          },
          end: ">",
          endCaptures: { "0": scope("punctuation.definition.attribute.end.mlir") },
          patterns: angleBody(),
        },
        { match: String.raw`${TOKEN_START}loc(?=\s*\()`, name: "storage.type.attribute.loc.mlir" },
      ],
    },
    "dialect-attribute": {
      patterns: [
        {
          begin: String.raw`(#${NAME_SEGMENT}(?:\.${BARE_ID})?)(<)`,
          beginCaptures: {
            "1": scope("constant.other.attribute.dialect.mlir"),
            "2": scope("punctuation.definition.attribute.begin.mlir"),
          },
          end: ">",
          endCaptures: { "0": scope("punctuation.definition.attribute.end.mlir") },
          patterns: angleBody(),
        },
        {
          comment: "A `#name` containing a dot is a dialect attribute, never an alias.",
          match: String.raw`#${NAME_SEGMENT}\.${BARE_ID}`,
          name: "constant.other.attribute.dialect.mlir",
        },
      ],
    },
    "attribute-alias": { match: String.raw`#${BARE_ID}`, name: "constant.other.attribute.alias.mlir" },
    "attribute-key": {
      patterns: [
        {
          comment: "`name` in an attribute dictionary entry `{name = value}`.",
          match: String.raw`(?:(?<=\{)|(?<=,))\s*(${BARE_ID})(?=\s*=(?![=>]))`,
          captures: { "1": scope("entity.other.attribute-name.mlir") },
        },
        {
          comment:
            "A unit attribute `{name}` or `{a = 1, name}`. Right after `{` no space is allowed, " +
            "so that an op in a one-line region `{ affine.yield }` is not taken for a key.",
          match: String.raw`(?:(?<=\{)|(?<=,)\s*)(${BARE_ID})(?=\s*[,}])`,
          captures: { "1": scope("entity.other.attribute-name.mlir") },
        },
      ],
    },
  };
}

function types(): Record<string, Rule> {
  return {
    "shaped-type": {
      comment: "Types never span lines, so an unclosed `<` ends at the end of the line.",
      begin: String.raw`${TYPE_START}(memref|tensor|vector)\s*(<)`,
      beginCaptures: {
        "1": scope("support.type.builtin.mlir"),
        "2": scope("punctuation.definition.type.begin.mlir"),
      },
      end: ">|$",
      endCaptures: { "0": scope("punctuation.definition.type.end.mlir") },
      patterns: [ref("shape"), ...angleBody()],
    },
    shape: {
      comment: "Dimension list `4x?x[8]x` at the start of a shaped type.",
      match: String.raw`\G\s*((?:(?:[0-9]+|\?|\*|\[[0-9]+\])x)+)`,
      captures: {
        "1": {
          patterns: [
            { match: "[0-9]+", name: "constant.numeric.integer.dimension.mlir" },
            { match: String.raw`\?`, name: "constant.language.dynamic.mlir" },
            { match: String.raw`\*`, name: "constant.language.unranked.mlir" },
            { match: String.raw`\[`, name: "punctuation.section.brackets.scalable.begin.mlir" },
            { match: String.raw`\]`, name: "punctuation.section.brackets.scalable.end.mlir" },
            { match: "x", name: "punctuation.separator.dimension.mlir" },
          ],
        },
      },
    },
    "container-type": {
      begin: String.raw`${TYPE_START}(complex|tuple)\s*(<)`,
      beginCaptures: {
        "1": scope("support.type.builtin.mlir"),
        "2": scope("punctuation.definition.type.begin.mlir"),
      },
      end: ">|$",
      endCaptures: { "0": scope("punctuation.definition.type.end.mlir") },
      patterns: angleBody(),
    },
    "scalar-type": {
      match: String.raw`${TYPE_START}${BUILTIN_SCALAR_TYPE}${TOKEN_END}`,
      name: "support.type.builtin.mlir",
    },
    "dialect-type": {
      comment: "Like builtin types, a dialect type's body ends at the end of its line.",
      patterns: [
        {
          begin: String.raw`(!${NAME_SEGMENT}(?:\.${BARE_ID})?)(<)`,
          beginCaptures: {
            "1": scope("support.type.dialect.mlir"),
            "2": scope("punctuation.definition.type.begin.mlir"),
          },
          end: ">|$",
          endCaptures: { "0": scope("punctuation.definition.type.end.mlir") },
          patterns: angleBody(),
        },
        {
          comment: "A `!name` containing a dot is a dialect type, never an alias.",
          match: String.raw`!${NAME_SEGMENT}\.${BARE_ID}`,
          name: "support.type.dialect.mlir",
        },
      ],
    },
    "type-alias": { match: String.raw`!${BARE_ID}`, name: "entity.name.type.alias.mlir" },
  };
}

function literalsAndKeywords(): Record<string, Rule> {
  return {
    string: {
      name: "string.quoted.double.mlir",
      begin: '"',
      beginCaptures: { "0": scope("punctuation.definition.string.begin.mlir") },
      end: '"',
      endCaptures: { "0": scope("punctuation.definition.string.end.mlir") },
      patterns: [
        { match: String.raw`\\(?:[nt"\\]|[0-9A-Fa-f]{2})`, name: "constant.character.escape.mlir" },
      ],
    },
    number: {
      patterns: [
        { match: String.raw`${TOKEN_START}0x[0-9A-Fa-f]+${TOKEN_END}`, name: "constant.numeric.integer.hexadecimal.mlir" },
        { match: String.raw`${TOKEN_START}[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?${TOKEN_END}`, name: "constant.numeric.float.mlir" },
        { match: String.raw`${TOKEN_START}[0-9]+${TOKEN_END}`, name: "constant.numeric.integer.mlir" },
      ],
    },
    keyword: {
      patterns: [
        ref("affine-word-operator"),
        { match: String.raw`${TOKEN_START}symbol(?=\s*\()`, name: "keyword.other.symbol.affine.mlir" },
        { match: String.raw`${TOKEN_START}else${TOKEN_END}`, name: "keyword.control.else.mlir" },
        { match: String.raw`${TOKEN_START}${anyOf(AFFINE_HEADER_KEYWORDS)}${TOKEN_END}`, name: "keyword.other.mlir" },
        { match: String.raw`${TOKEN_START}attributes${TOKEN_END}`, name: "keyword.other.attributes.mlir" },
        { match: String.raw`${TOKEN_START}(?:private|public|nested)(?=\s+@)`, name: "storage.modifier.visibility.mlir" },
        { match: String.raw`${TOKEN_START}(?:true|false)${TOKEN_END}`, name: "constant.language.boolean.mlir" },
        { match: String.raw`${TOKEN_START}unit${TOKEN_END}`, name: "constant.language.unit.mlir" },
      ],
    },
    operator: {
      patterns: [
        { match: "->", name: "keyword.operator.arrow.mlir" },
        { match: "::", name: "punctuation.separator.namespace.mlir" },
        { match: "(?:>=|==|<=)", name: "keyword.operator.comparison.mlir" },
        { match: "=", name: "keyword.operator.assignment.mlir" },
        { match: String.raw`[-+*]`, name: "keyword.operator.arithmetic.mlir" },
        { match: String.raw`\?`, name: "constant.language.dynamic.mlir" },
      ],
    },
    punctuation: {
      patterns: [
        { match: ",", name: "punctuation.separator.comma.mlir" },
        { match: ":", name: "punctuation.separator.colon.mlir" },
        { match: String.raw`\(`, name: "punctuation.section.parens.begin.mlir" },
        { match: String.raw`\)`, name: "punctuation.section.parens.end.mlir" },
        { match: String.raw`\[`, name: "punctuation.section.brackets.begin.mlir" },
        { match: String.raw`\]`, name: "punctuation.section.brackets.end.mlir" },
        { match: String.raw`\{`, name: "punctuation.section.braces.begin.mlir" },
        { match: String.raw`\}`, name: "punctuation.section.braces.end.mlir" },
      ],
    },
    "properties-delimiter": {
      comment: "`<{` and `}>` around an op's properties; top level only, so `}>` never eats a closing `>`.",
      patterns: [
        { match: String.raw`<\{`, name: "punctuation.definition.properties.begin.mlir" },
        { match: String.raw`\}>`, name: "punctuation.definition.properties.end.mlir" },
      ],
    },
    "nested-angle": {
      begin: "<",
      beginCaptures: { "0": scope("punctuation.definition.angle.begin.mlir") },
      end: ">",
      endCaptures: { "0": scope("punctuation.definition.angle.end.mlir") },
      patterns: angleBody(),
    },
  };
}

/** Everything that can appear inside an operation (operands, attributes, types, ...). */
const VALUES: Rule = {
  patterns: [
    ref("comment"),
    ref("string"),
    ref("ssa-value"),
    ref("block-label"),
    ref("symbol-ref"),
    ref("affine-map"),
    ref("affine-set"),
    ref("builtin-attribute"),
    ref("dialect-attribute"),
    ref("attribute-alias"),
    ref("shaped-type"),
    ref("container-type"),
    ref("scalar-type"),
    ref("dialect-type"),
    ref("type-alias"),
    ref("attribute-key"),
    ref("keyword"),
    ref("number"),
    ref("operator"),
    ref("punctuation"),
  ],
};

/** Builds the complete `source.mlir` grammar. */
export function buildMlirGrammar(): Grammar {
  return {
    name: "MLIR",
    scopeName: "source.mlir",
    fileTypes: ["mlir"],
    patterns: [
      ref("split-marker"),
      ref("comment"),
      ref("affine-op-header"),
      ref("operation-name"),
      ref("builtin-operation-name"),
      ref("generic-operation-name"),
      ref("properties-delimiter"),
      ref("values"),
    ],
    repository: {
      ...comments(),
      ...operations(),
      ...identifiers(),
      ...attributes(),
      ...types(),
      ...affineMapRules(),
      ...literalsAndKeywords(),
      values: VALUES,
    },
  };
}
