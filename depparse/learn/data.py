"""The one check of training and dev data (every sentence has a gold tree), and the folds of
the jackknifes that score training data by models that did not see it."""

from __future__ import annotations

import numpy as np

from ..decode.trees import validate_tree
from ..errors import TrainingDataError

__all__ = ["check_training_sentences", "jackknife_folds"]


def check_training_sentences(sentences, what="training", single_root=True):
    """Raise :class:`~depparse.errors.TrainingDataError` unless every sentence has a gold tree.

    Parameters
    ----------
    sentences : list of :class:`~depparse.conllu.Sentence`
    what : str
        ``"training"`` or ``"dev"``, for the message.
    single_root : bool
        Also require exactly one word attached to the root (the UD convention; what a model
        decoding with ``single_root`` learns from).

    Raises
    ------
    TrainingDataError
        Naming the file and line: no sentences, a word without HEAD (``_``), or heads that
        are not a tree (cycle, head out of range, several roots when ``single_root``).
    """
    if not sentences:
        raise TrainingDataError(f"no {what} sentences")
    for s in sentences:
        missing = np.flatnonzero(np.asarray(s.heads)[1:] < 0)
        if missing.size:
            m = int(missing[0]) + 1
            raise TrainingDataError(f"{s.source}:{int(s.word_line_nos[m])}: {what} sentence "
                                    f"has no gold HEAD ('_') for word {m}")
        msg = validate_tree(s.heads, single_root=single_root)
        if msg:
            hint = (" (allow several with --multi-root, or single_root=False)"
                    if "attached to the root" in msg else "")
            raise TrainingDataError(f"{s.source}:{s.line_no}: {what} sentence: {msg}{hint}")


def jackknife_folds(n, folds, seed, salt) -> np.ndarray:
    """The fold (``0 .. folds - 1``) of each of ``n`` training items: a permutation seeded by
    ``(seed, salt)``, modulo ``folds`` (the folds' sizes differ by at most one).  ``salt``
    gives each jackknife (pruner, labeler, network) a split of its own."""
    return np.random.default_rng([seed, salt]).permutation(n) % folds
