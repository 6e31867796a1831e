"""depparse: non-projective dependency parsing with head automata and dual decomposition.

Koo, Rush, Collins, Jaakkola and Sontag (2010), "Dual Decomposition for Parsing with
Non-Projective Head Automata", EMNLP.
"""

from .conllu_io import ConlluError, Sentence, iter_conllu, read_conllu, write_conllu

__version__ = "0.1.0"

__all__ = [
    "ConlluError",
    "Sentence",
    "iter_conllu",
    "read_conllu",
    "write_conllu",
]
