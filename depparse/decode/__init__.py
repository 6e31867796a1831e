"""Exact decoders: Chu-Liu-Edmonds, Eisner, head automata, dual decomposition (subgradient or
AD3) and branch and bound, which together prove every parse optimal."""

from .ad3 import ad3_decompose
from .automata import grandparent_head_automaton, sibling_head_automaton
from .bnb import PROOFS, ExactResult, decode_exact
from .dual import DualResult, dual_decompose, dual_decompose_dense
from .eisner import eisner
from .mst import NoSpanningTreeError, chu_liu_edmonds
from .parts import PartTable, compile_dense, score_tree

__all__ = [
    "ad3_decompose",
    "DualResult",
    "ExactResult",
    "NoSpanningTreeError",
    "PROOFS",
    "PartTable",
    "chu_liu_edmonds",
    "compile_dense",
    "decode_exact",
    "dual_decompose",
    "dual_decompose_dense",
    "eisner",
    "grandparent_head_automaton",
    "score_tree",
    "sibling_head_automaton",
]
