"""Shared set-up of the experiment scripts: which depparse tree to import, where en_ewt is.

Every script takes ``--code DIR``: the checkout whose ``depparse`` is imported (a worktree
of the measured commit with one of the patches here applied, or the repository itself).
"""
import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def corpus(split):
    root = Path(os.environ.get("DEPPARSE_CORPORA", REPO.parent / "shared" / "corpora"))
    return str(root / "en_ewt" / f"en_ewt-ud-{split}.conllu")


def parser(doc):
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--code", default=str(REPO), help="checkout whose depparse is imported")
    return ap


def use_code(args):
    sys.path.insert(0, args.code)
