"""Structured sparsity (issue 14, item 3): what a model trained with ``template_budget=B``
chose, and what that saves.  For each saved G+S model: the templates kept per family, the
non-zero parser weights, the size of its parser weights in the model format (the file with
only the parser and pruner), the templates kept by the kind of information they read (as
Martins et al. 2011, Table 3: words or lemmas, affixes, morphological features, XPOS,
contextual classes, UPOS only), and, from the training log in the model, the group-lasso
epochs; with ``--top N`` the N strongest and the weakest kept templates by group norm.

    python template_selection.py [--code DIR] [--top N] A.npz [B.npz ...]

Train the models with ``dense_variant.py OUT.json 8 --save A.npz ... template_budget=B``
(en_ewt; ``--treebank`` for another treebank), time them with ``decode_speed.py``.
"""
import collections
import os
import tempfile

import numpy as np
from _common import parser, use_code

ap = parser(__doc__)
ap.add_argument("models", nargs="+")
ap.add_argument("--top", type=int, default=0)
args = ap.parse_args()
use_code(args)
from depparse.features.parts import parser_templates  # noqa: E402
from depparse.model import Model  # noqa: E402

FAMILIES = ("ARC", "SIB", "GRAND", "GSIB")
KINDS = ("words", "affixes", "morphology", "XPOS", "classes", "UPOS only")


def kind(name):
    """What a template reads besides UPOS, by its name (depparse.features.templates)."""
    atoms = name.split("_")[1:]
    if any(a in ("HW", "MW", "SW", "GW", "HL", "ML") for a in atoms):
        return "words"
    if any(a.endswith(("SUF", "PRE")) for a in atoms):
        return "affixes"
    if any(a.endswith("FEAT") for a in atoms):
        return "morphology"
    if any(a in ("HX", "MX", "SX", "GX", "HXL", "HXR", "MXL", "MXR") for a in atoms):
        return "XPOS"
    if any(a.endswith("C") for a in atoms):
        return "classes"
    return "UPOS only"


def parser_file_bytes(m):
    """Bytes of the model file holding only the parser weights, pruner and vocabulary."""
    bare = Model(m.config, m.vocab, m.weights, m.pruner, None, {}, m.decoding)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.npz")
        bare.save(path)
        return os.path.getsize(path)


names = parser_templates()
for path in args.models:
    m = Model.load(path)
    off = set(filter(None, m.config.templates_off.split(",")))
    fam = collections.Counter(n.split("_")[0] for n in names)
    kept = collections.Counter(n.split("_")[0] for n in names if n not in off)
    print(f"{path}: {len(names) - len(off)} of {len(names)} templates kept ("
          + ", ".join(f"{f} {kept[f]}/{fam[f]}" for f in FAMILIES) + ")")
    every = collections.Counter(kind(n) for n in names)
    have = collections.Counter(kind(n) for n in names if n not in off)
    print("  kept by kind: " + ", ".join(f"{k} {have[k]}/{every[k]}" for k in KINDS))
    print(f"  non-zero parser weights {np.count_nonzero(m.weights):,}; parser + pruner file "
          f"{parser_file_bytes(m) / 1e6:.2f} MB; final dev UAS "
          f"{(m.info.get('final_dev') or {}).get('uas', float('nan')):.2f}")
    for h in m.info.get("history", []):
        sel = h.get("template_selection")
        if sel is None:
            continue
        ep = "; ".join(f"{e['templates']} templates, dev {e.get('dev_uas', float('nan')):.2f}"
                       for e in sel["epochs"])
        print(f"  group lasso (budget {sel['budget']}, {sel['seconds']:.0f} s): {ep}")
        print("  left out: " + " ".join(sel["left_out"]))
        if args.top:
            k = [r for r in sel["templates"] if r["kept"]]
            print("  strongest: " + " ".join(r["template"] for r in k[:args.top]))
            print("  weakest kept: " + " ".join(r["template"] for r in k[-args.top:]))
