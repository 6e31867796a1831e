"""Shared set-up of the experiment scripts: which depparse tree to import, where en_ewt is.

Every script takes ``--code DIR``: the checkout whose ``depparse`` is imported (a worktree
of the measured commit with one of the patches here applied, or the repository itself).
"""
import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def corpus(split, code="en_ewt"):
    """The treebank file (:func:`depparse.paths.treebank_file` of the checkout in use)."""
    from depparse.paths import treebank_file

    return str(treebank_file(code, split))


def settings(items):
    """``["epochs=8", "dense_scale=3", "update=pa"]`` -> ``{"epochs": 8, "dense_scale": 3.0,
    "update": "pa"}``: numbers where they parse as such, strings otherwise."""
    kw = {}
    for item in items:
        k, v = item.split("=", 1)
        for conv in (int, float):
            try:
                v = conv(v)
                break
            except ValueError:
                pass
        kw[k] = v
    return kw


def parser(doc):
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--code", default=str(REPO), help="checkout whose depparse is imported")
    return ap


def use_code(args):
    sys.path.insert(0, args.code)


def uas(heads, sentences):
    """UAS (%) of predicted head arrays (index 0 = root) against the gold trees."""
    import numpy as np

    ok = sum(int((np.asarray(h)[1:] == np.asarray(s.heads)[1:]).sum())
             for h, s in zip(heads, sentences, strict=True))
    return 100.0 * ok / sum(s.n for s in sentences)
