"""Exact decoders: Chu-Liu-Edmonds, Eisner, head automata, dual decomposition (subgradient or
AD3) and branch and bound, which together prove every parse optimal; joint tagging and parsing
(:mod:`.joint`) proves tree and tags together."""

from .ad3 import ad3_decompose
from .automata import grandparent_head_automaton, sibling_head_automaton
from .bnb import PROOFS, ExactResult, decode_exact
from .dual import DualResult, dual_decompose, dual_decompose_dense
from .eisner import eisner
from .joint import JointExact, TagTable, decode_joint, joint_decompose
from .mst import NoSpanningTreeError, chu_liu_edmonds
from .part_table import PartTable, compile_dense, score_tree

__all__ = [
    "ad3_decompose",
    "DualResult",
    "ExactResult",
    "JointExact",
    "NoSpanningTreeError",
    "PROOFS",
    "PartTable",
    "TagTable",
    "chu_liu_edmonds",
    "compile_dense",
    "decode_exact",
    "decode_joint",
    "dual_decompose",
    "dual_decompose_dense",
    "eisner",
    "grandparent_head_automaton",
    "joint_decompose",
    "score_tree",
    "sibling_head_automaton",
]
