; Scopes, definitions and references of SSA values and blocks.

(region) @local.scope
(func_func) @local.scope

(value_def) @local.definition.var
(block_label name: (block_id) @local.definition.label)
(attribute_alias_def name: (attribute_alias) @local.definition.constant)
(type_alias_def name: (type_alias) @local.definition.type)

(value_use) @local.reference
(successor label: (block_id) @local.reference)
