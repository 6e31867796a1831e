"""Lossless CoNLL-U input and output.

:mod:`.sentence` (the :class:`Sentence` and the validation of one block), :mod:`.reader`
(files and streams into sentences), :mod:`.writer` (sentences back into CoNLL-U, atomically),
:mod:`.spaces` (a text's exact whitespace in MISC, and the text rebuilt from CoNLL-U),
:mod:`.formats` (UDPipe's ``horizontal`` and ``vertical`` input as sentences).
Reading and then writing an unmodified file reproduces it byte for byte (comments, multiword
token lines ``1-2``, empty nodes ``8.1``, FEATS, DEPS, MISC, the final newline and the
blank-line structure included); parsing replaces only HEAD and DEPREL.
"""

from ..errors import ConlluError, ConlluWarning
from .formats import TOKEN_FORMATS, iter_horizontal, iter_vertical, iter_words
from .reader import encoding_problem, iter_conllu, read_conllu, read_sentence
from .sentence import COLUMNS, ROOT, Sentence
from .spaces import (
    document_text,
    escape_spaces,
    space_fields,
    token_spaces,
    tokens_with_misc,
    unescape_spaces,
)
from .writer import SentenceText, write_conllu

__all__ = ["COLUMNS", "ROOT", "TOKEN_FORMATS", "ConlluError", "ConlluWarning", "Sentence",
           "SentenceText", "document_text", "encoding_problem", "escape_spaces", "iter_conllu",
           "iter_horizontal", "iter_vertical", "iter_words", "read_conllu", "read_sentence",
           "space_fields", "token_spaces", "tokens_with_misc", "unescape_spaces",
           "write_conllu"]
