"""Source-to-source transformations (loop fusion), as minimal text edits."""
