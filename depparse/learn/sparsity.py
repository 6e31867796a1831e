"""Structured sparsity over the parser's feature templates (Martins, Smith, Aguiar and
Figueiredo 2011, "Structured Sparsity in Structured Prediction", Sec. 4-5).

Every parser feature template (:func:`depparse.features.parts.parser_templates`) is one group
of weights: all the hashed indices it emits.  The group-lasso penalty
``sum_m d_m ||w_m||_2`` (``d_m = log2 |G_m|``) is applied by proximal steps between the
perceptron's steps (Martins et al.'s Algorithm 1, the "sparseptron"): every ``every``
examples, each group is scaled by ``max(0, 1 - tau_j d_m / ||w_m||)``, which sets the
weakest groups to zero.  ``tau_j`` comes from a *budget* (their "budget-driven shrinkage"):
the groups fall into disjoint sets ``G_j`` with budgets ``B_j``, and when more than ``B_j``
groups of ``G_j`` are non-zero, ``tau_j`` is the mean of the ``B_j``-th and ``B_j+1``-th
largest ``||w_m|| / d_m`` among them, so at most ``B_j`` survive each step.  The sets are the
part families (arc, sibling, grandparent, grand-sibling), the budget ``B`` shared among them
in proportion to their sizes: with one budget over all templates the grandparent family, whose
weights are small next to the arc templates' (the grand-sibling parts share their evidence),
lost 16-21 of its 24 templates and en_ewt dev UAS fell 0.14-0.27; with a budget per family it
did not move (benchmarks/experiments/README.md).  The templates still non-zero after the last
step are the choice; the model is then trained afresh on those only ("debiasing": Martins et
al. refit without the penalty).

Groups are learned as training touches the weights: the feature kernels write each index
with its template's id (``RECORD`` switches, :func:`depparse.features.hashing.put`), and
:class:`TemplateGroups` keeps the owner of every index.  Two templates whose features hash to
the same index share it; the index counts for the template that wrote it last.  Such sharing
is common: the shipped parser has 6.4 million non-zero weights among its 2^23 entries, a 76%
occupancy, which for a uniform hash means about 1.4 updated features per entry and about half
of the non-zero entries reached by more than one; so the group norms are approximate (a
group's norm also counts what other templates' features moved at its indices).

The proximal step is an additive change ``delta`` of the weights made after ``c`` examples,
so the lazily averaged weights stay exact: ``acc += c * delta`` like any other update
(:mod:`depparse.learn.perceptron`).
"""

from __future__ import annotations

import numpy as np

from ..features.hashing import split_recorded
from ..features.parts import FAMILY_NAMES, HB, N_TEMPLATE_IDS, parser_templates

__all__ = ["TemplateGroups", "budget_threshold", "family_budgets"]


def budget_threshold(ratio, budget):
    """``tau`` of budget-driven shrinkage: 0 when at most ``budget`` of the ``ratio``
    (``||w_m|| / d_m``) are positive, else the mean of the ``budget``-th and
    ``budget + 1``-th largest."""
    r = np.sort(ratio[ratio > 0])[::-1]
    if r.size <= budget:
        return 0.0
    return 0.5 * float(r[budget - 1] + r[budget])


def family_budgets(budget, families=FAMILY_NAMES[:HB]):
    """``[(template ids, B_j)]`` per part family of ``families`` (those a model emits:
    :func:`~depparse.features.parts.model_families`): ``budget`` shared in proportion to the
    families' sizes (at least one each)."""
    names = parser_templates(families)
    out = []
    for fam in families:
        ids = np.array([t for n, t in names.items() if n.split("_")[0] == fam])
        out.append((ids, max(1, round(budget * ids.size / len(names)))))
    return out


class TemplateGroups:
    """The template of every weight index touched so far, and the group-lasso steps.

    Parameters
    ----------
    size : int
        Number of weights (``2**bits``).
    budget : int
        About this many templates (at least 1) keep non-zero weights after each step: the
        sum of the families' shares (:func:`family_budgets`), which may differ from it by
        rounding.
    every : int
        Examples between proximal steps (Martins et al.'s K; 1,000 there and here).
    families : tuple of str
        The part families of the model's templates.
    """

    def __init__(self, size, budget, every=1000, families=FAMILY_NAMES[:HB]):
        self.owner = np.full(size, -1, dtype=np.int16)
        self.budget = int(budget)
        self.names = parser_templates(families)
        self.families = family_budgets(self.budget, families)
        self.every = int(every)
        self.steps = 0
        self.last = None  # examples seen at the last step

    def record(self, raw):
        """The weight indices of kernel output written with ``RECORD`` switches; notes the
        template of each."""
        idx, tid = split_recorded(raw)
        self.owner[idx] = tid
        return idx

    def norms(self, w, idx=None):
        """``(||w_m||_2, |G_m|)`` per template id (arrays of length ``N_TEMPLATE_IDS``);
        ``idx``: the indices with an owner, where the caller has them."""
        if idx is None:
            idx = np.flatnonzero(self.owner >= 0)
        own = self.owner[idx]
        sq = np.bincount(own, weights=w[idx] ** 2, minlength=N_TEMPLATE_IDS)
        size = np.bincount(own, minlength=N_TEMPLATE_IDS)
        return np.sqrt(sq), size

    def prox(self, w, acc, c):
        """One budget-driven proximal step on the weights ``w`` (their running sum for the
        average, ``acc``, after ``c`` examples: see the module docstring).  Returns the
        number of templates left with non-zero weights.  A second call after the same ``c``
        (the end of an epoch that ended on a step) does not shrink again."""
        idx = np.flatnonzero(self.owner >= 0)
        norm, size = self.norms(w, idx)
        if c == self.last:
            return int((norm > 0).sum())
        self.last = c
        d = np.maximum(np.log2(np.maximum(size, 1)), 1.0)
        ratio = norm / d
        tau = np.zeros(N_TEMPLATE_IDS)
        for ids, bj in self.families:
            tau[ids] = budget_threshold(ratio[ids], bj)
        self.steps += 1
        if tau.any():
            factor = np.ones(N_TEMPLATE_IDS)
            live = norm > 0
            factor[live] = np.maximum(0.0, 1.0 - tau[live] * d[live] / norm[live])
            delta = (factor[self.owner[idx]] - 1.0) * w[idx]
            w[idx] += delta
            acc[idx] += c * delta
            norm = norm * factor
        return int((norm > 0).sum())

    def report(self, w):
        """Per template (by name): its group norm in ``w``, its size, and whether it is
        kept (non-zero); sorted by norm."""
        norm, size = self.norms(w)
        rows = [{"template": name, "norm": float(norm[tid]), "features": int(size[tid]),
                 "kept": bool(norm[tid] > 0)} for name, tid in self.names.items()]
        return sorted(rows, key=lambda r: -r["norm"])
