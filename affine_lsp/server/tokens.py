"""LSP's relative encoding of semantic tokens."""

from __future__ import annotations

from lsprotocol import types

from affine_lsp.ide import semantic_tokens as tokens
from affine_lsp.syntax import SourceDocument, column_units

LEGEND = types.SemanticTokensLegend(
    token_types=tokens.TOKEN_TYPES, token_modifiers=tokens.TOKEN_MODIFIERS
)


class TokenEncoder:
    """LSP's relative token encoding (line delta, start delta, length, type,
    modifier bits), fed tokens in document order."""

    def __init__(self, document: SourceDocument) -> None:
        self._document = document
        self._types = {name: i for i, name in enumerate(tokens.TOKEN_TYPES)}
        self._bits = {name: 1 << i for i, name in enumerate(tokens.TOKEN_MODIFIERS)}
        self._line = self._start = 0
        self.data: list[int] = []

    def add(self, found: list[tokens.Token]) -> None:
        document = self._document
        for token in found:
            line, character = document.position(token.start)
            piece = bytes(document.data[token.start : token.end])
            length = column_units(piece, document.encoding)
            if length <= 0:
                continue
            delta_line = line - self._line
            delta_start = character - self._start if delta_line == 0 else character
            bits = 0
            for modifier in token.modifiers:
                bits |= self._bits.get(modifier, 0)
            self.data += [delta_line, delta_start, length, self._types[token.type], bits]
            self._line, self._start = line, character
