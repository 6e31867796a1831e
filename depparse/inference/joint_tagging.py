"""Joint tagging and parsing on the parse path: the settings and the tag candidates.

:meth:`depparse.inference.parser.Parser.set_joint` turns it on; a sentence whose UPOS the
model's tagger predicts is then decoded by :func:`depparse.decode.joint.decode_joint`: its
tree and its UPOS together, over the candidates chosen here from the tagger's chain, the
tagger's scores weighted by :attr:`JointSettings.weight` against the parser's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..decode.tag_chain import max_marginals
from ..errors import ConfigError

__all__ = ["JointSettings", "tag_candidates"]


@dataclass(frozen=True)
class JointSettings:
    """How joint decoding chooses and weighs the tags.

    Attributes
    ----------
    weight : float
        The tagger's chain scores are multiplied by this against the parser's part scores
        (the joint weight; :mod:`depparse.decode.joint`).
    k : int
        At most this many candidate tags per word (1: the pipeline).
    margin : float
        A tag is a candidate when its max-marginal under the tagger's chain is within this of
        the best sequence's score (in the tagger's own units, before ``weight``).
    """

    # tuned on en_ewt dev with the shipped model (benchmarks/bench_joint.py; the
    # experiments README, "Joint tagging and parsing"): weights 1 ... 0.03, margins 20-60, K
    # 2-4 on its first 1,000 sentences, then weights 0.3, 0.2, 0.15, 0.1 at K 2, margin 40
    # on all of it; below 0.1 the UPOS accuracy falls under the pipeline's
    weight: float = 0.2
    k: int = 2
    margin: float = 40.0

    def __post_init__(self):
        if not (np.isfinite(self.weight) and self.weight > 0):
            raise ConfigError("joint-weight", f"must be a positive number, got {self.weight}")
        if int(self.k) != self.k or self.k < 1:
            raise ConfigError("joint-candidates", f"must be an integer >= 1, got {self.k}")
        if not (np.isfinite(self.margin) and self.margin >= 0):
            raise ConfigError("joint-margin", f"must be a number >= 0, got {self.margin}")


def tag_candidates(emit, ptr, ids, trans, best, k, margin):
    """Each word's candidate tags: the best tag of the tagger's sequence first, then the
    others by decreasing max-marginal (:func:`~depparse.decode.tag_chain.max_marginals`) while
    within ``margin`` of the best sequence's score, at most ``k`` in all.

    Parameters
    ----------
    emit, ptr, ids, trans
        The tagger's chain (:func:`~depparse.decode.tag_chain.viterbi`'s arguments).
    best : (N,) int64
        The tagger's tags (``viterbi``'s result).

    Returns
    -------
    cptr : (N + 1,) int64
        Word ``i`` has the candidates ``cptr[i] .. cptr[i+1]-1`` (none for the root).
    sel : (M',) int64
        The chosen candidates, as indices into ``ids`` and ``emit``.
    """
    N = ptr.shape[0] - 1
    mm = max_marginals(emit, ptr, ids, trans)
    cptr = np.zeros(N + 1, dtype=np.int64)
    sel = []
    for i in range(1, N):
        lo, hi = int(ptr[i]), int(ptr[i + 1])
        top = float(mm[lo:hi].max())
        b = lo + int(np.flatnonzero(ids[lo:hi] == best[i])[0])
        chosen = [b]
        for c in lo + np.argsort(-mm[lo:hi], kind="stable"):
            if len(chosen) >= k or mm[c] < top - margin:
                break
            if c != b:
                chosen.append(int(c))
        sel.extend(chosen)
        cptr[i + 1] = len(sel)
    return cptr, np.array(sel, dtype=np.int64)
