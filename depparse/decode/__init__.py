"""Exact decoders: Chu-Liu-Edmonds, Eisner, head automata and dual decomposition."""

from .automata import grandparent_head_automaton, sibling_head_automaton
from .dual import DualResult, dual_decompose, dual_decompose_dense
from .eisner import eisner
from .mst import NoSpanningTreeError, chu_liu_edmonds
from .parts import PartTable, compile_dense, score_tree

__all__ = [
    "DualResult",
    "NoSpanningTreeError",
    "PartTable",
    "chu_liu_edmonds",
    "compile_dense",
    "dual_decompose",
    "dual_decompose_dense",
    "eisner",
    "grandparent_head_automaton",
    "score_tree",
    "sibling_head_automaton",
]
