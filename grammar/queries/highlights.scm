; Syntax highlighting for MLIR. Standard capture names, plus distinct captures
; for the affine dialect: dimension and symbol identifiers of maps and sets,
; loop induction variables, and every affine.* operation name.

(comment) @comment
(split_marker) @comment.special
(resource_block) @comment

(string) @string
(integer) @number
(float) @number.float
(boolean) @boolean
(unit_attribute) @constant.builtin

; ---- SSA values, blocks, symbols, aliases --------------------------------
(value_use) @variable
(value_def) @variable
(block_id) @label
(symbol_ref) @function
(attribute_alias) @constant.macro
(type_alias) @type.definition
(attribute_alias_def name: (attribute_alias) @constant.macro)
(type_alias_def name: (type_alias) @type.definition)

; ---- induction variables (affine first, so they win) ------------------------
(affine_for induction_variable: (value_def) @variable.induction)
(affine_parallel induction_variables: (parallel_ivs (value_def) @variable.induction))
(scf_for induction_variable: (value_def) @variable.induction)
(scf_parallel induction_variables: (parallel_ivs (value_def) @variable.induction))

; ---- affine maps and sets: dimensions vs symbols ---------------------------
(dim_id) @variable.parameter.dimension
(symbol_id) @variable.parameter.symbol
(affine_id) @variable.parameter
(symbol_use "symbol" @keyword.function)

[
  "floordiv"
  "ceildiv"
  "mod"
] @keyword.operator

[
  "affine_map"
  "affine_set"
] @type.builtin

[
  "+" "-" "*" "=" "->" ">=" "<=" "=="
] @operator

; ---- operation names --------------------------------------------------------
(affine_apply name: _ @function.affine)
(affine_min_max name: _ @function.affine)
(affine_delinearize_index name: _ @function.affine)
(affine_linearize_index name: _ @function.affine)
(affine_for name: _ @function.affine)
(affine_if name: _ @function.affine)
(affine_parallel name: _ @function.affine)
(affine_load name: _ @function.affine)
(affine_store name: _ @function.affine)
(affine_vector_load name: _ @function.affine)
(affine_vector_store name: _ @function.affine)
(affine_prefetch name: _ @function.affine)
(affine_yield name: _ @function.affine)
(affine_dma_start name: _ @function.affine)
(affine_dma_wait name: _ @function.affine)

(generic_operation name: (string) @function.call)
(custom_operation name: (bare_id) @function.call)
(builtin_module name: _ @keyword)
(func_func name: _ @keyword.function)
(func_return name: _ @keyword.return)
(func_call name: _ @function.call)
(arith_constant name: _ @function.builtin)
(arith_binary name: _ @function.builtin)
(arith_unary name: _ @function.builtin)
(arith_cmp name: _ @function.builtin)
(arith_cast name: _ @function.builtin)
(arith_select name: _ @function.builtin)
(memref_alloc name: _ @function.builtin)
(memref_alloca_scope name: _ @function.builtin)
(memref_dealloc name: _ @function.builtin)
(memref_load name: _ @function.builtin)
(memref_store name: _ @function.builtin)
(memref_dim name: _ @function.builtin)
(memref_cast name: _ @function.builtin)
(memref_copy name: _ @function.builtin)
(memref_subview name: _ @function.builtin)
(memref_view name: _ @function.builtin)
(memref_reinterpret_cast name: _ @function.builtin)
(memref_global name: _ @function.builtin)
(memref_get_global name: _ @function.builtin)
(memref_atomic_rmw name: _ @function.builtin)
(memref_generic_atomic_rmw name: _ @function.builtin)
(memref_reshape_op name: _ @function.builtin)
(memref_transpose name: _ @function.builtin)
(memref_prefetch name: _ @function.builtin)
(memref_assume_alignment name: _ @function.builtin)
(memref_dma_start name: _ @function.builtin)
(memref_dma_wait name: _ @function.builtin)
(memref_simple_op name: _ @function.builtin)
(terminator_with_values name: _ @keyword.return)
(scf_for name: _ @keyword.repeat)
(scf_while name: _ @keyword.repeat)
(scf_parallel name: _ @keyword.repeat)
(scf_if name: _ @keyword.conditional)
(scf_condition name: _ @function.builtin)
(cf_br name: _ @keyword.return)
(cf_cond_br name: _ @keyword.conditional)
(arith_cmp predicate: (bare_id) @constant)

; ---- keywords ---------------------------------------------------------------
[
  "to" "step" "iter_args" "max" "min" "else" "reduce" "into" "by" "disjoint"
  "attributes" "private" "public" "nested" "loc" "constant" "uninitialized"
  "read" "write" "data" "instr" "locality" "offset" "sizes" "strides" "output_shape"
  "do" "init" "unsigned"
] @keyword

(legacy_keyword) @keyword.deprecated

; ---- types ------------------------------------------------------------------
[
  (integer_type)
  (float_type)
  (index_type)
  (none_type)
] @type.builtin
(shape) @number
[
  "memref" "tensor" "vector" "complex" "tuple" "strided" "dense" "sparse"
  "dense_resource" "array" "distinct"
] @type.builtin
(dialect_type name: (type_alias) @type)
(dialect_body) @string.special
(dialect_attribute name: (attribute_alias) @attribute)

; ---- attributes ---------------------------------------------------------------
(dictionary_entry name: (bare_id) @property)
(dictionary_entry name: (string) @property)
(op_flag) @attribute

; ---- punctuation ---------------------------------------------------------------
["(" ")" "[" "]" "{" "}" "<" ">"] @punctuation.bracket
["," ":"] @punctuation.delimiter
