"""Editor features as plain data, independent of the Language Server Protocol.

Everything here works on byte offsets of a `SourceDocument`; the server layer
converts to and from LSP positions.
"""
