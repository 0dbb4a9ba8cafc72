; Indentation: a region indents its operations; `}` closes it, and a block
; label sits at the region's own level.
(region) @indent.begin
(dictionary) @indent.begin
(func_arguments) @indent.begin
"}" @indent.branch @indent.end
")" @indent.branch
(block_label) @indent.branch
(comment) @indent.auto
