/**
 * Tree-sitter grammar for MLIR's textual format, with real structure for the
 * affine dialect: affine maps, integer sets and the subscripts of affine memory
 * operations are parsed into dimension lists, symbol lists and expression trees.
 *
 * Layout of this file:
 *   1. helpers (comma lists, the two flavours of affine expressions)
 *   2. top level: aliases, resource blocks, operations
 *   3. generic operations, regions and blocks
 *   4. custom forms: builtin, func, arith, affine, memref, scf, cf, legacy
 *   5. the fallback for any other custom-form operation
 *   6. affine maps, integer sets, bounds and subscripts
 *   7. types and attributes
 *
 * The external scanner (src/scanner.c) provides tokens that need look-ahead:
 * the end of a fallback operation, the body of a dialect type/attribute, and
 * whether a `{` inside a fallback operation opens a region or a dictionary.
 */

const PREC = {
  add: 1,
  mul: 2,
  neg: 3,
};

const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)));
const commaSep = (rule) => optional(commaSep1(rule));
const parens = (rule) => seq('(', rule, ')');
const brackets = (rule) => seq('[', rule, ']');

/** Keywords that continue a fallback operation on its next line. */
const ARITH_BINARY = [
  'addf', 'addi', 'andi', 'ceildivsi', 'ceildivui', 'divf', 'divsi', 'divui',
  'floordivsi', 'maxnumf', 'maxsi', 'maxui', 'maximumf', 'minnumf', 'minsi',
  'minui', 'minimumf', 'mulf', 'muli', 'ori', 'remf', 'remsi', 'remui', 'shli',
  'shrsi', 'shrui', 'subf', 'subi', 'xori', 'mulsi_extended', 'mului_extended',
  'addui_extended',
].map((n) => 'arith.' + n);

const ARITH_UNARY = ['negf'].map((n) => 'arith.' + n);

const ARITH_CAST = [
  'bitcast', 'extf', 'extsi', 'extui', 'fptosi', 'fptoui', 'index_cast',
  'index_castui', 'sitofp', 'truncf', 'trunci', 'uitofp', 'scaling_extf',
  'scaling_truncf',
].map((n) => 'arith.' + n);

/** memref ops of the shape `name operands attr-dict : type (to|into|-> type)?`. */
const MEMREF_SIMPLE = [
  'memref.rank', 'memref.realloc', 'memref.reshape', 'memref.memory_space_cast',
  'memref.extract_aligned_pointer_as_index', 'memref.extract_strided_metadata',
];

/** An identifier in a map or set; it may be spelled like an operator (`[mod]`). */
const mapIdentifier = ($, name) => choice(
  alias($.bare_id, name),
  ...['mod', 'floordiv', 'ceildiv'].map((keyword) => alias(keyword, name)),
);

/**
 * The two flavours of affine expressions share one precedence structure:
 * inside maps and sets the leaves are bare identifiers (`d0`, `s0`); inside
 * subscripts and parallel bounds they are SSA values (`%i`, `symbol(%n)`).
 */
function affineExprRules(prefix, leaf) {
  const expr = ($) => $[`_${prefix}expr`];
  return {
    [`_${prefix}expr`]: ($) => choice(
      $[`${prefix}binary_expr`],
      $[`${prefix}neg_expr`],
      $[`${prefix}paren_expr`],
      $[`${prefix}legacy_call_expr`],
      $.integer,
      ...leaf($),
    ),
    [`${prefix}binary_expr`]: ($) => choice(
      prec.left(PREC.add, seq(
        field('left', expr($)), field('operator', choice('+', '-')), field('right', expr($)),
      )),
      prec.left(PREC.mul, seq(
        field('left', expr($)),
        field('operator', choice('*', 'floordiv', 'ceildiv', 'mod')),
        field('right', expr($)),
      )),
    ),
    [`${prefix}neg_expr`]: ($) => prec(PREC.neg, seq('-', field('operand', expr($)))),
    [`${prefix}paren_expr`]: ($) => seq('(', field('inner', expr($)), ')'),
    // The 2019 syntax wrote `floordiv(d0, 8)` as a call.
    [`${prefix}legacy_call_expr`]: ($) => seq(
      field('operator', choice('floordiv', 'ceildiv', 'mod')),
      '(', field('left', expr($)), ',', field('right', expr($)), ')',
    ),
  };
}

module.exports = grammar({
  name: 'mlir',

  word: ($) => $.bare_id,

  extras: ($) => [/\s/, $.comment, $.split_marker],

  externals: ($) => [
    $._fallback_end,
    $.dialect_body,
    $._fallback_region_open,
    $._fallback_dict_open,
    $._error_sentinel,
    $._fallback_brace_open,
    $._region_end_of_input,
    $._left_arrow,
  ],

  supertypes: ($) => [],

  inline: ($) => [],

  conflicts: ($) => [
    // `#a = () -> ...`: a legacy affine map or a function type attribute.
    [$.dim_list, $.type_list_parens],
    // 2019 op names that are also bare ops of other dialects (see custom_operation).
    [$.memref_alloc, $._legacy_op_word],
    [$.memref_dealloc, $._legacy_op_word],
    [$.memref_load, $._legacy_op_word],
    [$.memref_store, $._legacy_op_word],
    [$.memref_dim, $._legacy_op_word],
  ],

  rules: {
    source_file: ($) => repeat($._toplevel_item),

    _toplevel_item: ($) => choice(
      $.attribute_alias_def,
      $.type_alias_def,
      $.resource_block,
      $.operation,
    ),

    // `// -----` alone on its line (or followed by a `//` comment), as mlir-opt's
    // --split-input-file recognises it. It comes before `comment` with the same
    // precedence: on a tie in length the marker wins, and a longer comment
    // (`// ------`, `// ----- x`) stays a comment.
    split_marker: (_) => token(seq('//', / -----[ \t\r]*(\/\/[^\n]*)?/)),
    comment: (_) => token(seq('//', /[^\n]*/)),

    // {-# dialect_resources: { ... } #-}
    resource_block: (_) => token(seq('{-#', /([^#]|#+[^#-])*#*/, '#-}')),

    attribute_alias_def: ($) => seq(
      field('name', $.attribute_alias),
      '=',
      field('value', choice($._attribute_value, $.legacy_affine_map, $.legacy_integer_set)),
    ),

    type_alias_def: ($) => seq(field('name', $.type_alias), '=', field('value', $._type)),

    // ------------------------------------------------------------------
    // Operations
    // ------------------------------------------------------------------

    operation: ($) => seq(
      optional(seq(field('results', $.op_result_list), '=')),
      field('body', $._op_body),
      optional(field('location', $.location)),
    ),

    op_result_list: ($) => commaSep1($.op_result),
    op_result: ($) => seq(
      field('value', alias($.ssa_value, $.value_def)),
      optional(seq(':', field('count', $.integer))),
    ),

    _op_body: ($) => choice(
      $.generic_operation,
      $.builtin_module,
      $.func_func,
      $.func_return,
      $.func_call,
      $.arith_constant,
      $.arith_binary,
      $.arith_unary,
      $.arith_cmp,
      $.arith_cast,
      $.arith_select,
      $.affine_apply,
      $.affine_min_max,
      $.affine_delinearize_index,
      $.affine_linearize_index,
      $.affine_for,
      $.affine_if,
      $.affine_parallel,
      $.affine_load,
      $.affine_store,
      $.affine_vector_load,
      $.affine_vector_store,
      $.affine_prefetch,
      $.affine_yield,
      $.affine_dma_start,
      $.affine_dma_wait,
      $.memref_alloc,
      $.memref_alloca_scope,
      $.memref_dealloc,
      $.memref_load,
      $.memref_store,
      $.memref_dim,
      $.memref_cast,
      $.memref_copy,
      $.memref_subview,
      $.memref_view,
      $.memref_reinterpret_cast,
      $.memref_global,
      $.memref_get_global,
      $.memref_atomic_rmw,
      $.memref_generic_atomic_rmw,
      $.memref_reshape_op,
      $.memref_transpose,
      $.memref_prefetch,
      $.memref_assume_alignment,
      $.memref_dma_start,
      $.memref_dma_wait,
      $.memref_simple_op,
      $.terminator_with_values,
      $.scf_for,
      $.scf_if,
      $.scf_while,
      $.scf_parallel,
      $.scf_condition,
      $.scf_forall,
      $.scf_execute_region,
      $.scf_index_switch,
      $.scf_reduce,
      $.gpu_launch,
      $.linalg_generic,
      $.transform_sequence,
      $.transform_match,
      $.cf_br,
      $.cf_cond_br,
      $.custom_operation,
    ),

    // "dialect.op"(%a, %b)[^succ] <{props}> ({regions}) {attrs} : (t) -> t
    generic_operation: ($) => seq(
      field('name', $.string),
      '(', optional(field('operands', $.value_use_list)), ')',
      optional(field('successors', $.successor_list)),
      optional(field('properties', $.properties)),
      optional(field('regions', $.region_list)),
      optional(field('attributes', $.dictionary)),
      ':',
      field('type', $.function_type),
    ),

    value_use_list: ($) => commaSep1($._value_use),
    _value_use: ($) => alias($.ssa_value, $.value_use),
    successor_list: ($) => brackets(commaSep1($.successor)),
    successor: ($) => seq(
      field('label', $.block_id),
      optional(seq('(', field('operands', $.value_use_list), ':', field('types', $.type_list), ')')),
    ),
    properties: ($) => seq('<', $.dictionary, '>'),
    region_list: ($) => seq('(', commaSep1($.region), ')'),

    region: ($) => seq(
      '{',
      repeat($.operation),
      repeat($.block),
      $._region_close,
    ),
    // A region still open at the end of the input (while typing) keeps its
    // structure; `unclosed_region` (empty) is reported as a missing `}`.
    _region_close: ($) => choice('}', $.unclosed_region),
    unclosed_region: ($) => $._region_end_of_input,

    block: ($) => seq(field('label', $.block_label), repeat($.operation)),
    block_label: ($) => seq(
      field('name', $.block_id),
      optional(seq('(', commaSep(field('argument', $.block_argument)), ')')),
      ':',
    ),
    block_argument: ($) => seq(
      field('name', alias($.ssa_value, $.value_def)),
      ':',
      field('type', $._type),
      optional(field('location', $.location)),
    ),

    location: ($) => seq('loc', '(', repeat($._balanced), ')'),

    // ------------------------------------------------------------------
    // builtin and func
    // ------------------------------------------------------------------

    builtin_module: ($) => seq(
      field('name', choice('builtin.module', 'module')),
      optional(field('symbol', $.symbol_ref)),
      optional(seq('attributes', field('attributes', $.dictionary))),
      field('body', $.region),
    ),

    func_func: ($) => prec.right(seq(
      field('name', choice('func.func', 'transform.named_sequence', alias('func', $.legacy_keyword))),
      optional(field('visibility', choice('private', 'public', 'nested', $.string))),
      field('symbol', $.symbol_ref),
      field('arguments', $.func_arguments),
      optional(seq(':', field('legacy_types', $.type_list_parens))),
      optional(seq('->', field('results', $.func_results))),
      optional(seq('attributes', field('attributes', $.dictionary))),
      optional(field('body', $.region)),
    )),

    func_arguments: ($) => seq('(', commaSep(choice($.func_argument, $.func_argument_type)), optional(seq(',', '...')), ')'),
    func_argument: ($) => seq(
      field('name', alias($.ssa_value, $.value_def)),
      optional(seq(':', field('type', $._type))),
      optional(field('attributes', $.dictionary)),
      optional(field('location', $.location)),
    ),
    func_argument_type: ($) => seq(field('type', $._type), optional(field('attributes', $.dictionary))),

    func_results: ($) => choice(
      $._non_function_type,
      seq('(', commaSep($.func_result), ')'),
    ),
    func_result: ($) => seq(field('type', $._type), optional(field('attributes', $.dictionary))),

    func_return: ($) => prec.right(seq(
      field('name', choice('func.return', 'return')),
      optional(field('attributes', $.dictionary)),
      optional(seq(field('operands', $.value_use_list), ':', field('types', $.type_list))),
    )),

    func_call: ($) => prec.right(seq(
      field('name', choice('func.call', 'call')),
      field('callee', $.symbol_ref),
      '(', optional(field('operands', $.value_use_list)), ')',
      optional(field('attributes', $.dictionary)),
      optional(seq(':', field('type', $.function_type))),
    )),

    // ------------------------------------------------------------------
    // arith
    // ------------------------------------------------------------------

    // `attr-dict $value`: a dictionary right after the name is the attr-dict.
    arith_constant: ($) => prec.right(1, seq(
      field('name', 'arith.constant'),
      optional(field('attributes', $.dictionary)),
      field('value', $._attribute_value),
    )),

    arith_binary: ($) => seq(
      field('name', choice(...ARITH_BINARY)),
      field('lhs', $._value_use), ',', field('rhs', $._value_use),
      repeat(field('flag', $.op_flag)),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $.type_list),
    ),

    arith_unary: ($) => seq(
      field('name', choice(...ARITH_UNARY)),
      field('operand', $._value_use),
      repeat(field('flag', $.op_flag)),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    // fastmath<fast>, overflow<nsw, nuw>, exact
    op_flag: ($) => choice(
      seq(field('kind', choice('fastmath', 'overflow', 'roundingmode')), '<', commaSep($.bare_id), '>'),
      'exact',
    ),

    arith_cmp: ($) => seq(
      field('name', choice('arith.cmpi', 'arith.cmpf')),
      field('predicate', choice($.bare_id, $.string)), ',',
      field('lhs', $._value_use), ',', field('rhs', $._value_use),
      repeat(field('flag', $.op_flag)),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    // `$in (, $scale)? ($roundingmode)? (fastmath<...>)? attr-dict : type (, type)? to type`
    arith_cast: ($) => seq(
      field('name', choice(...ARITH_CAST)),
      field('operand', $._value_use),
      optional(seq(',', field('scale', $._value_use))),
      optional(field('rounding_mode', $.bare_id)),
      repeat(field('flag', $.op_flag)),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type),
      optional(seq(',', field('scale_type', $._type))),
      'to', field('to', $._type),
    ),

    arith_select: ($) => seq(
      field('name', 'arith.select'),
      field('condition', $._value_use), ',',
      field('true_value', $._value_use), ',',
      field('false_value', $._value_use),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $.type_list),
    ),

    // ------------------------------------------------------------------
    // affine
    // ------------------------------------------------------------------

    affine_apply: ($) => seq(
      field('name', 'affine.apply'),
      field('map', $._map_ref),
      field('operands', $.dim_and_symbol_operands),
      optional(field('attributes', $.dictionary)),
    ),

    affine_min_max: ($) => seq(
      field('name', choice('affine.min', 'affine.max')),
      field('map', $._map_ref),
      field('operands', $.dim_and_symbol_operands),
      optional(field('attributes', $.dictionary)),
      optional(seq(':', field('type', $._type))),
    ),

    affine_delinearize_index: ($) => seq(
      field('name', 'affine.delinearize_index'),
      field('linear_index', $._value_use),
      'into',
      field('basis', $.index_basis),
      optional(field('attributes', $.dictionary)),
      ':', field('types', $.type_list),
    ),

    affine_linearize_index: ($) => seq(
      field('name', 'affine.linearize_index'),
      optional(field('disjoint', 'disjoint')),
      '[', optional(field('indices', $.value_use_list)), ']',
      'by',
      field('basis', $.index_basis),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    index_basis: ($) => seq('(', commaSep(choice($._value_use, $.integer)), ')'),

    affine_for: ($) => seq(
      field('name', 'affine.for'),
      field('induction_variable', alias($.ssa_value, $.value_def)),
      optional(field('location', $.location)),
      '=',
      field('lower', $.lower_bound),
      'to',
      field('upper', $.upper_bound),
      optional(seq('step', field('step', $._signed_integer))),
      optional(field('iter_args', $.iter_args)),
      optional(seq('->', field('result_types', $._result_types))),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),

    iter_args: ($) => seq(
      'iter_args', '(', commaSep1($.iter_arg), ')',
    ),
    iter_arg: ($) => seq(
      field('name', alias($.ssa_value, $.value_def)), '=', field('init', $._value_use),
    ),

    _result_types: ($) => choice($._non_function_type, $.type_list_parens),

    lower_bound: ($) => choice(
      field('shorthand', $._shorthand_bound),
      seq(optional(field('max', 'max')), field('map', $._map_ref), field('operands', $.dim_and_symbol_operands)),
    ),
    upper_bound: ($) => choice(
      field('shorthand', $._shorthand_bound),
      seq(optional(field('min', 'min')), field('map', $._map_ref), field('operands', $.dim_and_symbol_operands)),
    ),
    _shorthand_bound: ($) => choice($._value_use, $._signed_integer),

    affine_if: ($) => seq(
      field('name', 'affine.if'),
      field('condition', $._set_ref),
      field('operands', $.dim_and_symbol_operands),
      optional(seq('->', field('result_types', $._result_types))),
      field('then', $.region),
      optional(seq('else', field('else', $.region))),
      optional(field('attributes', $.dictionary)),
    ),

    affine_parallel: ($) => seq(
      field('name', 'affine.parallel'),
      field('induction_variables', $.parallel_ivs),
      '=',
      field('lower', $.parallel_bounds),
      'to',
      field('upper', $.parallel_bounds),
      optional(seq('step', field('steps', $.parallel_steps))),
      optional(seq('reduce', field('reductions', $.parallel_reductions))),
      optional(seq('->', field('result_types', $._result_types))),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),
    parallel_ivs: ($) => seq('(', commaSep(alias($.ssa_value, $.value_def)), ')'),
    parallel_bounds: ($) => seq('(', commaSep($.parallel_bound), ')'),
    parallel_bound: ($) => choice(
      field('expr', $._subscript_expr),
      seq(field('kind', choice('max', 'min')), '(', commaSep1(field('expr', $._subscript_expr)), ')'),
    ),
    parallel_steps: ($) => seq('(', commaSep($.integer), ')'),
    parallel_reductions: ($) => seq('(', commaSep($.string), ')'),

    affine_load: ($) => seq(
      field('name', 'affine.load'),
      field('memref', $._value_use),
      field('subscripts', $.subscript_list),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    affine_store: ($) => seq(
      field('name', 'affine.store'),
      field('value', $._value_use), ',',
      field('memref', $._value_use),
      field('subscripts', $.subscript_list),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    affine_vector_load: ($) => seq(
      field('name', 'affine.vector_load'),
      field('memref', $._value_use),
      field('subscripts', $.subscript_list),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type), ',', field('vector_type', $._type),
    ),

    affine_vector_store: ($) => seq(
      field('name', 'affine.vector_store'),
      field('value', $._value_use), ',',
      field('memref', $._value_use),
      field('subscripts', $.subscript_list),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type), ',', field('vector_type', $._type),
    ),

    affine_prefetch: ($) => seq(
      field('name', 'affine.prefetch'),
      field('memref', $._value_use),
      field('subscripts', $.subscript_list), ',',
      field('rw', choice('read', 'write')), ',',
      'locality', '<', field('locality', $.integer), '>', ',',
      field('cache', choice('data', 'instr')),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    affine_yield: ($) => prec.right(seq(
      field('name', 'affine.yield'),
      optional(field('attributes', $.dictionary)),
      optional(seq(field('operands', $.value_use_list), ':', field('types', $.type_list))),
    )),

    affine_dma_start: ($) => seq(
      field('name', 'affine.dma_start'),
      field('source', $._value_use), field('source_subscripts', $.subscript_list), ',',
      field('destination', $._value_use), field('destination_subscripts', $.subscript_list), ',',
      field('tag', $._value_use), field('tag_subscripts', $.subscript_list), ',',
      field('num_elements', $._value_use),
      optional($._dma_stride_operands),
      optional(field('attributes', $.dictionary)),
      ':', field('types', $.type_list),
    ),
    // MLIR parses them as a trailing operand list: `, %stride, %per_stride`, or a lone `,`.
    _dma_stride_operands: ($) => seq(
      ',',
      optional(seq(field('stride', $._value_use), ',', field('elements_per_stride', $._value_use))),
    ),

    affine_dma_wait: ($) => seq(
      field('name', 'affine.dma_wait'),
      field('tag', $._value_use), field('tag_subscripts', $.subscript_list), ',',
      field('num_elements', $._value_use),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    // ------------------------------------------------------------------
    // memref
    // ------------------------------------------------------------------

    memref_alloc: ($) => seq(
      field('name', choice('memref.alloc', 'memref.alloca', alias(choice('alloc', 'alloca'), $.legacy_keyword))),
      '(', optional(field('dynamic_sizes', $.value_use_list)), ')',
      optional(seq('[', optional(field('symbols', $.value_use_list)), ']')),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    memref_alloca_scope: ($) => seq(
      field('name', 'memref.alloca_scope'),
      optional(seq('->', field('result_types', $._result_types))),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),

    memref_dealloc: ($) => seq(
      field('name', choice('memref.dealloc', alias('dealloc', $.legacy_keyword))),
      field('memref', $._value_use),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    // Indices are parsed as subscript expressions so that a legacy
    // `load %A[%i - 1]` still has structure; the checker requires plain values.
    memref_load: ($) => seq(
      field('name', choice('memref.load', alias('load', $.legacy_keyword))),
      field('memref', $._value_use),
      field('indices', $.subscript_list),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    memref_store: ($) => seq(
      field('name', choice('memref.store', alias('store', $.legacy_keyword))),
      field('value', $._value_use), ',',
      field('memref', $._value_use),
      field('indices', $.subscript_list),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    memref_dim: ($) => seq(
      field('name', choice('memref.dim', alias('dim', $.legacy_keyword))),
      optional(field('attributes', $.dictionary)),
      field('source', $._value_use), ',',
      field('index', choice($._value_use, $.integer)),
      ':', field('type', $._type),
    ),

    memref_cast: ($) => seq(
      field('name', 'memref.cast'),
      field('source', $._value_use),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type), 'to', field('to', $._type),
    ),

    memref_copy: ($) => seq(
      field('name', 'memref.copy'),
      field('source', $._value_use), ',', field('target', $._value_use),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type), 'to', field('to', $._type),
    ),

    // %0[offsets][sizes][strides]; entries are values or integers.
    memref_subview: ($) => seq(
      field('name', 'memref.subview'),
      field('source', $._value_use),
      field('offsets', $.mixed_index_list),
      field('sizes', $.mixed_index_list),
      field('strides', $.mixed_index_list),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type), 'to', field('to', $._type),
    ),
    mixed_index_list: ($) => seq('[', commaSep(choice($._value_use, $._signed_integer)), ']'),

    memref_view: ($) => seq(
      field('name', 'memref.view'),
      field('source', $._value_use),
      '[', field('byte_shift', $._value_use), ']',
      '[', optional(field('sizes', $.value_use_list)), ']',
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type), 'to', field('to', $._type),
    ),

    memref_reinterpret_cast: ($) => seq(
      field('name', 'memref.reinterpret_cast'),
      field('source', $._value_use),
      'to',
      'offset', ':', field('offset', $.mixed_index_list), ',',
      'sizes', ':', field('sizes', $.mixed_index_list), ',',
      'strides', ':', field('strides', $.mixed_index_list),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type), 'to', field('to', $._type),
    ),

    memref_global: ($) => prec.right(seq(
      field('name', 'memref.global'),
      optional(field('visibility', $.string)),
      optional(field('constant', 'constant')),
      field('symbol', $.symbol_ref),
      ':', field('type', $._type),
      optional(seq('=', field('initial_value', choice('uninitialized', $._attribute_value)))),
      optional(field('attributes', $.dictionary)),
    )),

    memref_get_global: ($) => seq(
      field('name', 'memref.get_global'),
      field('symbol', $.symbol_ref),
      ':', field('type', $._type),
      optional(field('attributes', $.dictionary)),
    ),

    memref_atomic_rmw: ($) => seq(
      field('name', 'memref.atomic_rmw'),
      field('kind', choice($.string, $.bare_id)),
      field('value', $._value_use), ',',
      field('memref', $._value_use),
      field('indices', $.subscript_list),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $.function_type),
    ),

    memref_generic_atomic_rmw: ($) => seq(
      field('name', 'memref.generic_atomic_rmw'),
      field('memref', $._value_use),
      field('indices', $.subscript_list),
      ':', field('type', $._type),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),

    // expand_shape / collapse_shape
    memref_reshape_op: ($) => seq(
      field('name', choice('memref.expand_shape', 'memref.collapse_shape')),
      field('source', $._value_use),
      field('reassociation', $.reassociation),
      optional(seq('output_shape', field('output_shape', $.mixed_index_list))),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type), 'into', field('to', $._type),
    ),
    reassociation: ($) => seq('[', commaSep(seq('[', commaSep($.integer), ']')), ']'),

    memref_transpose: ($) => seq(
      field('name', 'memref.transpose'),
      field('source', $._value_use),
      field('permutation', choice($.legacy_affine_map, $.affine_map, $.attribute_alias)),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type), 'to', field('to', $._type),
    ),

    memref_prefetch: ($) => seq(
      field('name', 'memref.prefetch'),
      field('memref', $._value_use),
      field('indices', $.subscript_list), ',',
      field('rw', choice('read', 'write')), ',',
      'locality', '<', field('locality', $.integer), '>', ',',
      field('cache', choice('data', 'instr')),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    memref_assume_alignment: ($) => seq(
      field('name', 'memref.assume_alignment'),
      field('memref', $._value_use), ',', field('alignment', $._signed_integer),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    memref_dma_start: ($) => seq(
      field('name', 'memref.dma_start'),
      field('source', $._value_use), field('source_indices', $.subscript_list), ',',
      field('destination', $._value_use), field('destination_indices', $.subscript_list), ',',
      field('num_elements', $._value_use), ',',
      field('tag', $._value_use), field('tag_indices', $.subscript_list),
      optional($._dma_stride_operands),
      optional(field('attributes', $.dictionary)),
      ':', field('types', $.type_list),
    ),

    memref_dma_wait: ($) => seq(
      field('name', 'memref.dma_wait'),
      field('tag', $._value_use), field('tag_indices', $.subscript_list), ',',
      field('num_elements', $._value_use),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $._type),
    ),

    memref_simple_op: ($) => prec.right(seq(
      field('name', choice(...MEMREF_SIMPLE)),
      field('source', $._value_use),
      optional(seq('(', optional(field('operands', $.value_use_list)), ')')),
      optional(field('attributes', $.dictionary)),
      ':', field('from', $._type),
      optional(seq(choice('to', '->'), field('to', $.type_list))),
      optional(field('trailing_attributes', $.dictionary)),
    )),

    // Terminators of the shape `name (operands : types)?`.
    terminator_with_values: ($) => prec.right(seq(
      field('name', choice(
        'memref.atomic_yield', 'memref.alloca_scope.return', 'scf.yield', 'scf.reduce.return',
      )),
      optional(field('attributes', $.dictionary)),
      optional(seq(field('operands', $.value_use_list), ':', field('types', $.type_list))),
    )),

    // ------------------------------------------------------------------
    // scf
    // ------------------------------------------------------------------

    scf_for: ($) => seq(
      field('name', 'scf.for'),
      optional(field('unsigned', 'unsigned')),
      field('induction_variable', alias($.ssa_value, $.value_def)),
      optional(field('location', $.location)),
      '=', field('lower', $._value_use),
      'to', field('upper', $._value_use),
      'step', field('step', $._value_use),
      optional(field('iter_args', $.iter_args)),
      optional(seq('->', field('result_types', $._result_types))),
      optional(seq(':', field('type', $._type))),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),

    scf_if: ($) => seq(
      field('name', 'scf.if'),
      field('condition', $._value_use),
      optional(seq('->', field('result_types', $._result_types))),
      field('then', $.region),
      optional(seq('else', field('else', $.region))),
      optional(field('attributes', $.dictionary)),
    ),

    scf_while: ($) => seq(
      field('name', 'scf.while'),
      optional(seq('(', commaSep($.iter_arg), ')')),
      ':', field('type', $.function_type),
      field('before', $.region),
      'do',
      field('after', $.region),
      optional(seq('attributes', field('attributes', $.dictionary))),
    ),

    scf_parallel: ($) => seq(
      field('name', 'scf.parallel'),
      field('induction_variables', $.parallel_ivs),
      '=', '(', optional(field('lower', $.value_use_list)), ')',
      'to', '(', optional(field('upper', $.value_use_list)), ')',
      'step', '(', optional(field('steps', $.value_use_list)), ')',
      optional(seq('init', '(', field('inits', $.value_use_list), ')')),
      optional(seq('->', field('result_types', $._result_types))),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),

    scf_condition: ($) => prec.right(seq(
      field('name', 'scf.condition'),
      '(', field('condition', $._value_use), ')',
      optional(field('attributes', $.dictionary)),
      optional(seq(field('operands', $.value_use_list), ':', field('types', $.type_list))),
    )),

    // `(%i, %j) in (%n, 4)` or `= (lbs) to (ubs) step (steps)`, then the values
    // the body shares with the result (`shared_outs(%o = %t)`).
    scf_forall: ($) => seq(
      field('name', 'scf.forall'),
      field('induction_variables', $.parallel_ivs),
      choice(
        seq('in', field('upper', $.mixed_value_list)),
        seq(
          '=', field('lower', $.mixed_value_list),
          'to', field('upper', $.mixed_value_list),
          'step', field('steps', $.mixed_value_list),
        ),
      ),
      optional(seq('shared_outs', '(', commaSep(field('shared_out', $.iter_arg)), ')')),
      optional(seq('->', field('result_types', $._result_types))),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),
    mixed_value_list: ($) => seq('(', commaSep(choice($._value_use, $._signed_integer)), ')'),

    scf_execute_region: ($) => seq(
      field('name', 'scf.execute_region'),
      optional(seq('->', field('result_types', $._result_types))),
      optional(field('no_inline', 'no_inline')),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),

    scf_index_switch: ($) => seq(
      field('name', 'scf.index_switch'),
      field('argument', $._value_use),
      optional(field('attributes', $.dictionary)),
      optional(seq('->', field('result_types', $.type_list))),
      repeat(field('case', $.switch_case)),
      'default', field('default', $.region),
    ),
    switch_case: ($) => seq('case', field('value', $._signed_integer), field('body', $.region)),

    // `scf.reduce(%a, %b : f32, i32) { ^bb0(...): ... }, { ... }`
    scf_reduce: ($) => prec.right(seq(
      field('name', 'scf.reduce'),
      optional(seq('(', field('operands', $.value_use_list), ':', field('types', $.type_list), ')')),
      optional(seq(field('body', $.region), repeat(seq(',', field('body', $.region))))),
    )),

    // ------------------------------------------------------------------
    // gpu
    // ------------------------------------------------------------------

    gpu_launch: ($) => seq(
      field('name', 'gpu.launch'),
      optional(field('async', 'async')),
      optional(seq('[', optional(field('dependencies', $.value_use_list)), ']')),
      repeat1(field('clause', choice(
        $.launch_dimensions,
        $.launch_attribution,
        seq('dynamic_shared_memory_size', field('shared_memory_size', $._value_use)),
        seq(choice('module', 'function'), '(', $.symbol_ref, ')'),
      ))),
      field('body', $.region),
      optional(field('attributes', $.dictionary)),
    ),
    // `blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)`
    launch_dimensions: ($) => seq(
      field('kind', choice('clusters', 'blocks', 'threads')),
      '(', commaSep(field('id', alias($.ssa_value, $.value_def))), ')',
      'in', '(', commaSep(field('size', $.iter_arg)), ')',
    ),
    // `workgroup(%w : memref<32xf32, 3>)`, `private(...)`
    launch_attribution: ($) => seq(
      field('kind', choice('workgroup', 'private')),
      '(', commaSep(field('argument', $.block_argument)), ')',
    ),

    // ------------------------------------------------------------------
    // linalg
    // ------------------------------------------------------------------

    // `linalg.generic {indexing_maps = ..., iterator_types = ...} ins(...) outs(...)
    // attrs = {...} { ^bb0(...): ... } -> types`; the traits may be an alias.
    linalg_generic: ($) => seq(
      field('name', 'linalg.generic'),
      field('traits', choice($.dictionary, $.attribute_alias)),
      optional(field('inputs', $.linalg_inputs)),
      optional(field('outputs', $.linalg_outputs)),
      optional(seq('attrs', '=', field('attributes', $.dictionary))),
      field('body', $.region),
      optional(seq('->', field('result_types', $._result_types))),
    ),
    linalg_inputs: ($) => seq(
      'ins', '(', optional(seq(field('operands', $.value_use_list), ':', field('types', $.type_list))), ')',
    ),
    linalg_outputs: ($) => seq(
      'outs', '(', optional(seq(field('operands', $.value_use_list), ':', field('types', $.type_list))), ')',
    ),

    // ------------------------------------------------------------------
    // transform
    // ------------------------------------------------------------------

    // `transform.sequence %root : !transform.any_op -> !transform.any_op
    //  failures(propagate) attributes {...} { ^bb0(%arg0: ...): ... }`
    transform_sequence: ($) => seq(
      field('name', 'transform.sequence'),
      optional(seq(
        field('operands', $.value_use_list), ':',
        field('operand_types', choice($.type_list, $.type_list_parens)),
      )),
      optional(seq('->', field('result_types', $.type_list))),
      'failures', '(', field('failures', choice('propagate', 'suppress')), ')',
      optional(seq('attributes', field('attributes', $.dictionary))),
      field('body', $.region),
    ),

    // `transform.structured.match ops{["scf.for"]} interface{LinalgOp}
    //  attributes{...} filter_result_type = t filter_operand_types = [...] in %h : (t) -> t`
    transform_match: ($) => seq(
      field('name', 'transform.structured.match'),
      repeat(field('filter', choice(
        seq('ops', '{', $.array_attribute, '}'),
        seq('interface', '{', $.bare_id, '}'),
        seq('attributes', $.dictionary),
        seq('filter_result_type', '=', $._type),
        seq('filter_operand_types', '=', $.array_attribute),
      ))),
      'in', field('target', $._value_use),
      optional(field('attributes', $.dictionary)),
      ':', field('type', $.function_type),
    ),

    // ------------------------------------------------------------------
    // cf
    // ------------------------------------------------------------------

    cf_br: ($) => seq(
      field('name', 'cf.br'),
      field('target', $.successor),
      optional(field('attributes', $.dictionary)),
    ),

    cf_cond_br: ($) => seq(
      field('name', 'cf.cond_br'),
      field('condition', $._value_use),
      optional(seq('weights', '(', field('weights', $._attribute_value), ')')),
      ',',
      field('true_target', $.successor), ',',
      field('false_target', $.successor),
      optional(field('attributes', $.dictionary)),
    ),

    // ------------------------------------------------------------------
    // Fallback for every other custom-form operation. It ends at the end of
    // its line unless the next line visibly continues it (the scanner decides),
    // so it never swallows the next operation.
    // ------------------------------------------------------------------

    custom_operation: ($) => choice(
      seq(field('name', $.bare_id), repeat($._custom_item), $._fallback_end),
      // A 2019 op name (`load`) is also a bare op of some dialect's default
      // namespace (emitc's `load %v : <i32>`): both parses are tried, and the
      // legacy rule wins where both succeed.
      prec.dynamic(-1, seq(
        field('name', alias($._legacy_op_word, $.bare_id)),
        repeat($._custom_item),
        $._fallback_end,
      )),
    ),
    _legacy_op_word: (_) => choice('load', 'store', 'dim', 'alloc', 'alloca', 'dealloc'),

    // Separators bind to the item after them, so an operation whose line ends
    // in `:`, `,`, `=`, `->` or `<-` cannot end there: it continues on the next line.
    // At the top level of an operation a `>` is one too (`} >^bb1`: a successor
    // after a region's closing brace); in a group it closes `<`.
    _custom_item: ($) => choice(
      $._custom_atom,
      seq(repeat1(choice($._custom_separator, '>')), $._custom_atom),
    ),
    // `<-` (omp.tile); the scanner tells it from `<` before a negative number (`dense<-1>`).
    _custom_separator: ($) => choice(',', ':', '=', '->', alias($._left_arrow, '<-'), '|'),

    // Anything MLIR's lexer can produce, with brackets balanced: SSA values,
    // blocks, types, attributes, keywords, groups, regions and dictionaries.
    _custom_atom: ($) => choice(
      $._value_use,
      $.block_id,
      $._non_function_type,
      $._custom_attribute,
      $.bare_id,
      alias($._keyword_word, $.bare_id),
      $.custom_group,
      alias($._fallback_region, $.region),
      alias($._fallback_dictionary, $.dictionary),
      '*', '+', '-', '?', '...',
    ),

    // Words that start a type or an attribute elsewhere but are plain keywords
    // in a custom format (`acc.loop vector`, `sparse(%m : ...)`, `loc([%root])`).
    // When `<` follows, the type or attribute wins.
    _keyword_word: (_) => prec(-1, choice(
      'memref', 'tensor', 'vector', 'complex', 'tuple', 'affine_map', 'affine_set',
      'array', 'dense', 'sparse', 'dense_resource', 'strided', 'distinct', 'loc',
    )),

    custom_group: ($) => choice(
      seq('(', repeat($._custom_nested_item), ')'),
      seq('[', repeat($._custom_nested_item), ']'),
      $._angle_group,
      seq($._fallback_brace_open, repeat($._custom_nested_item), '}'),
    ),
    _angle_group: ($) => seq('<', repeat($._custom_nested_item), '>'),
    _custom_nested_item: ($) => choice($._custom_atom, $._custom_separator),

    _fallback_region: ($) => seq(
      $._fallback_region_open,
      repeat($.operation),
      repeat($.block),
      $._region_close,
    ),
    _fallback_dictionary: ($) => seq(
      $._fallback_dict_open,
      commaSep($.dictionary_entry),
      '}',
    ),

    // A balanced token soup for locations.
    _balanced: ($) => choice(
      $.string, $.integer, $.float, $.bare_id, $.attribute_alias, $.symbol_ref, $._value_use,
      $.type_alias, ':', ',', '-', '>', '<', '=', '->', '*', '+', '?', '|',
      seq('(', repeat($._balanced), ')'),
      seq('[', repeat($._balanced), ']'),
      seq('{', repeat($._balanced), '}'),
    ),

    // ------------------------------------------------------------------
    // Affine maps, integer sets, bounds and subscripts
    // ------------------------------------------------------------------

    _map_ref: ($) => choice($.attribute_alias, $.affine_map, $.legacy_affine_map),
    _set_ref: ($) => choice($.attribute_alias, $.integer_set, $.legacy_integer_set),

    affine_map: ($) => seq(
      'affine_map', '<',
      field('dimensions', $.dim_list),
      optional(field('symbols', $.symbol_list)),
      '->',
      field('results', $.affine_result_list),
      '>',
    ),

    integer_set: ($) => seq(
      'affine_set', '<',
      field('dimensions', $.dim_list),
      optional(field('symbols', $.symbol_list)),
      ':',
      field('constraints', $.constraint_list),
      '>',
    ),

    // The 2019 syntax: `(d0)[s0] -> (d0 + s0)` without `affine_map<...>`.
    legacy_affine_map: ($) => seq(
      field('dimensions', $.dim_list),
      optional(field('symbols', $.symbol_list)),
      '->',
      field('results', $.affine_result_list),
    ),
    legacy_integer_set: ($) => seq(
      field('dimensions', $.dim_list),
      optional(field('symbols', $.symbol_list)),
      ':',
      field('constraints', $.constraint_list),
    ),

    dim_list: ($) => seq('(', commaSep(mapIdentifier($, $.dim_id)), ')'),
    symbol_list: ($) => seq('[', commaSep(mapIdentifier($, $.symbol_id)), ']'),
    affine_result_list: ($) => seq('(', commaSep($._affine_expr), ')'),
    constraint_list: ($) => seq('(', commaSep($.constraint), ')'),
    constraint: ($) => seq(
      field('left', $._affine_expr),
      field('operator', choice('>=', '<=', '==')),
      field('right', $._affine_expr),
    ),

    // Identifiers may be spelled like the operators (`[mod, floordiv]`).
    ...affineExprRules('affine_', ($) => [mapIdentifier($, $.affine_id)]),

    // Subscripts of affine.load/store and bounds of affine.parallel.
    subscript_list: ($) => seq('[', commaSep($._subscript_expr), ']'),
    ...affineExprRules('subscript_', ($) => [$._value_use, $.symbol_use]),
    symbol_use: ($) => seq('symbol', '(', field('value', $._value_use), ')'),

    dim_and_symbol_operands: ($) => seq(
      field('dims', $.dim_operands),
      optional(field('symbols', $.symbol_operands)),
    ),
    dim_operands: ($) => seq('(', commaSep($._value_use), ')'),
    symbol_operands: ($) => seq('[', commaSep($._value_use), ']'),

    // ------------------------------------------------------------------
    // Types
    // ------------------------------------------------------------------

    _type: ($) => choice($._non_function_type, $.function_type),

    _non_function_type: ($) => choice(
      $.integer_type,
      $.float_type,
      $.index_type,
      $.none_type,
      $.memref_type,
      $.tensor_type,
      $.vector_type,
      $.complex_type,
      $.tuple_type,
      $.type_alias,
      $.dialect_type,
    ),

    integer_type: (_) => token(prec(1, /[su]?i[0-9]+/)),
    float_type: (_) => token(prec(1, choice(
      /f[0-9]+/, 'bf16', 'tf32',
      /f[0-9]+E[0-9]+M[0-9]+[A-Z0-9]*/,
    ))),
    index_type: (_) => 'index',
    none_type: (_) => 'none',

    // `(a) -> b, c` after `:` is a function type and another type, not `(a)` with
    // two results (transform.sequence's operand types).
    function_type: ($) => prec.right(1, seq(
      field('inputs', $.type_list_parens),
      '->',
      field('results', choice($._non_function_type, $.type_list_parens, $.function_type)),
    )),
    type_list_parens: ($) => seq('(', commaSep($._type), ')'),
    type_list: ($) => commaSep1($._type),

    // memref<4x?xf32, #layout, 1>, memref<*xf32> (unranked: the IR decides)
    memref_type: ($) => seq(
      'memref', '<',
      optional(field('shape', $.shape)),
      field('element_type', $._type),
      // One trailing attribute may be a layout or a memory space; the IR decides.
      optional(seq(
        ',', field('layout', $._attribute_value),
        optional(seq(',', field('memory_space', $._attribute_value))),
      )),
      '>',
    ),
    tensor_type: ($) => seq(
      'tensor', '<',
      optional(field('shape', $.shape)),
      field('element_type', $._type),
      optional(seq(',', field('encoding', $._attribute_value))),
      '>',
    ),
    vector_type: ($) => seq(
      'vector', '<',
      optional(field('shape', $.shape)),
      field('element_type', $._type),
      '>',
    ),
    // A whole dimension list with its trailing `x` is one token (`4x?x`,
    // `*x`, `[4]x8x`): MLIR's lexer also splits `4x4xf32` specially.
    shape: (_) => token(/(\[[0-9]+\]|[0-9]+|\?|\*)([ \t]*x[ \t]*(\[[0-9]+\]|[0-9]+|\?|\*))*[ \t]*x/),

    complex_type: ($) => seq('complex', '<', field('element_type', $._type), '>'),
    tuple_type: ($) => seq('tuple', '<', commaSep($._type), '>'),

    dialect_type: ($) => seq(field('name', $.type_alias), field('body', $.dialect_body)),

    // ------------------------------------------------------------------
    // Attributes
    // ------------------------------------------------------------------

    dictionary: ($) => seq('{', commaSep($.dictionary_entry), '}'),
    dictionary_entry: ($) => seq(
      field('name', choice($.bare_id, $.string)),
      optional(seq('=', field('value', choice(
        $._attribute_value, $.bare_id, $._value_use, alias($._angle_group, $.custom_group),
      )))),
    ),

    _attribute_value: ($) => choice($._attribute_value_not_type, $._type),

    _attribute_value_not_type: ($) => choice(
      $.typed_literal,
      $._literal,
      $.array_attribute,
      $.dictionary,
      $.affine_map,
      $.integer_set,
      $.dense_attribute,
      $.dense_array_attribute,
      $.strided_layout,
      $.symbol_ref,
      $.attribute_alias,
      $.dialect_attribute,
      $.unit_attribute,
      $.location,
      $.distinct_attribute,
    ),

    // Attributes inside fallback operations: `[...]` and `{...}` are handled
    // by the fallback's own groups, regions and dictionaries.
    _custom_attribute: ($) => choice(
      $._literal,
      $.affine_map,
      $.integer_set,
      $.dense_attribute,
      $.dense_array_attribute,
      $.strided_layout,
      $.symbol_ref,
      $.attribute_alias,
      $.dialect_attribute,
      $.unit_attribute,
      $.location,
      $.distinct_attribute,
    ),

    typed_literal: ($) => prec(1, seq(
      field('value', choice($._literal, $.dense_attribute, $.attribute_alias, $.dialect_attribute)),
      ':',
      field('type', $._type),
    )),

    _literal: ($) => choice(
      $._signed_integer,
      $._signed_float,
      $.boolean,
      $.string,
    ),

    _signed_integer: ($) => choice($.integer, alias($._negative_integer, $.integer)),
    _negative_integer: ($) => prec(1, seq('-', $.integer)),
    _signed_float: ($) => choice($.float, alias($._negative_float, $.float)),
    _negative_float: ($) => prec(1, seq('-', $.float)),

    boolean: (_) => choice('true', 'false'),
    unit_attribute: (_) => 'unit',

    // SSA values appear in the arrays of some custom formats (`exclude = [%a, %b]`).
    array_attribute: ($) => seq('[', commaSep(choice($._attribute_value, $._value_use)), ']'),

    // dense<...>, sparse<...>, dense_resource<...>
    dense_attribute: ($) => seq(
      field('kind', choice('dense', 'sparse', 'dense_resource')),
      '<', optional(commaSep($._dense_element)), '>',
    ),
    _dense_element: ($) => choice(
      $._literal,
      $.bare_id,
      seq('[', commaSep($._dense_element), ']'),
      seq('(', commaSep($._dense_element), ')'),
    ),

    // array<i32: 1, 2, 3>
    dense_array_attribute: ($) => seq(
      'array', '<', field('element_type', $._type),
      optional(seq(':', commaSep($._literal))), '>',
    ),

    // strided<[1, ?], offset: ?>
    strided_layout: ($) => seq(
      'strided', '<',
      '[', commaSep(choice($._signed_integer, '?')), ']',
      optional(seq(',', 'offset', ':', choice($._signed_integer, '?'))),
      '>',
    ),

    distinct_attribute: ($) => seq('distinct', '[', $.integer, ']', '<', optional($._attribute_value), '>'),

    dialect_attribute: ($) => seq(field('name', $.attribute_alias), field('body', $.dialect_body)),

    // ------------------------------------------------------------------
    // Tokens
    // ------------------------------------------------------------------

    bare_id: (_) => /[a-zA-Z_][a-zA-Z0-9_$.]*/,
    ssa_value: (_) => /%[a-zA-Z0-9_$.\-]+(#[0-9]+)?/,
    block_id: (_) => /\^[a-zA-Z0-9_$.\-]+/,
    symbol_ref: (_) => token(seq(
      '@', choice(/[a-zA-Z_][a-zA-Z0-9_$.\-]*/, /"([^"\\\n]|\\.)*"/),
      repeat(seq('::@', choice(/[a-zA-Z_][a-zA-Z0-9_$.\-]*/, /"([^"\\\n]|\\.)*"/))),
    )),
    attribute_alias: (_) => /#[a-zA-Z_][a-zA-Z0-9_$.\-]*/,
    type_alias: (_) => /![a-zA-Z_][a-zA-Z0-9_$.\-]*/,
    integer: (_) => token(choice(/[0-9]+/, /0x[0-9a-fA-F]+/)),
    float: (_) => token(/[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?/),
    string: (_) => token(seq('"', repeat(choice(/[^"\\\n]/, /\\./)), '"')),
  },
});
