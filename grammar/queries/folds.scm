; Fold regions, multi-line maps, sets, dictionaries and resource blocks.
[
  (region)
  (affine_map)
  (integer_set)
  (dictionary)
  (func_arguments)
  (resource_block)
] @fold
