"""Soft constraints on the labels of one head's children (Anzaroot et al. 2014).

Each constraint counts labels among the children of a head: ``c(y) = sum_i A[y_i] - b``,
violated by ``max(0, c(y))`` units; a learned penalty per unit (:mod:`depparse.learn.labeler`)
makes it soft, and :func:`depparse.decode.label_chain.soft_label_chain` enforces all of them jointly
with the label chain.  The constraints name universal relations (``nsubj`` covers
``nsubj:pass``; LAS compares universal labels); constraints whose labels a treebank does not
have are left out.  The set is generic, and the learned penalties decide which constraints
matter for a language: one that the treebank's own trees often violate ends with a penalty
near zero.

* ``at most one <rel>``, for every universal relation of the label set except ``root``;
* ``one subject``: ``nsubj + csubj <= 1``;
* ``one clausal complement``: ``ccomp + xcomp <= 1``;
* ``iobj needs a complement``: ``iobj <= obj + ccomp + xcomp`` (the dev errors iobj -> obj
  and two objects of one verb).
"""

from __future__ import annotations

import numpy as np

__all__ = ["constraint_set"]

# (name, {universal relation: coefficient}, bound)
_COMBINED = (
    ("one subject (nsubj, csubj)", {"nsubj": 1.0, "csubj": 1.0}, 1.0),
    ("one clausal complement (ccomp, xcomp)", {"ccomp": 1.0, "xcomp": 1.0}, 1.0),
    ("iobj needs obj, ccomp or xcomp", {"iobj": 1.0, "obj": -1.0, "ccomp": -1.0, "xcomp": -1.0},
     0.0),
)


def universal(label: str) -> str:
    """The universal part of a UD relation (``nsubj:pass`` -> ``nsubj``)."""
    return label.split(":", 1)[0]


def constraint_set(labels, lo):
    """The constraints over a label vocabulary.

    Parameters
    ----------
    labels : list of str
        The labeler's label strings by id.
    lo : int
        Ids below ``lo`` are reserved (never chosen): they get no coefficient.

    Returns
    -------
    names : list of str
    A : (K, len(labels)) float64
        ``A[k, y]``: what label ``y`` adds to constraint ``k``'s count.
    b : (K,) float64
        The bounds.
    """
    univ = [universal(x) if i >= lo else None for i, x in enumerate(labels)]
    present = sorted({u for u in univ if u is not None and u != "root"})
    rows, names, bounds = [], [], []

    def row(coef):
        a = np.zeros(len(labels))
        for y, u in enumerate(univ):
            if u is not None:
                a[y] = coef.get(u, 0.0)
        return a

    for u in present:
        names.append(f"at most one {u}")
        rows.append(row({u: 1.0}))
        bounds.append(1.0)
    for name, coef, bound in _COMBINED:
        if all(u in present for u, c in coef.items() if c > 0):
            names.append(name)
            rows.append(row(coef))
            bounds.append(bound)
    A = np.array(rows, dtype=np.float64).reshape(len(rows), len(labels))
    return names, A, np.array(bounds, dtype=np.float64)
