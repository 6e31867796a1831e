"""Hashed features (Numba): the registry of template ids (:mod:`.templates`), the hashing
helpers (:mod:`.hashing`), the parser's part features (:mod:`.parts`) and the labeler's
(:mod:`.labels`); the one scoring interface of the part tables (:mod:`.scoring`)."""

from .labels import LABELER_KIND
from .parts import (
    FEATURE_SET,
    MAX_FEATS,
    arc_features,
    fill_scores,
    grand_features,
    gsib_features,
    score_all_arcs,
    score_arcs,
    sib_features,
    structure_features,
)
from .scoring import build_parts, score

__all__ = ["FEATURE_SET", "LABELER_KIND", "MAX_FEATS", "arc_features", "build_parts",
           "fill_scores", "grand_features", "gsib_features", "score_all_arcs", "score_arcs",
           "score", "sib_features", "structure_features"]
