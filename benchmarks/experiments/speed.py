"""Test UAS, certificates and heads-only parsing speed of G+S models, one after another.

    python speed.py --code REPO A.npz [B.npz ...]
"""
import time

import numpy as np
from _common import corpus, parser, uas, use_code

ap = parser(__doc__)
ap.add_argument("models", nargs="+")
args = ap.parse_args()
use_code(args)
from depparse.conllu_io import read_conllu  # noqa: E402
from depparse.model import Model  # noqa: E402
from depparse.parser import Parser  # noqa: E402

sents = read_conllu(corpus("test"))
words = sum(s.n for s in sents)
for path in args.models:
    p = Parser(Model.load(path))
    p.engine.parse_heads(sents[:50])  # compile / warm up
    t = time.perf_counter()
    rs = p.engine.parse_heads(sents)
    dt = time.perf_counter() - t
    cert = 100 * np.mean([r.certificate for r in rs])
    kept = sum(r.kept_arcs for r in rs) / words
    print(f"{path}: test UAS {uas([r.heads for r in rs], sents):.2f}, "
          f"certificates {cert:.2f}%, {dt:.1f} s, "
          f"{words / dt:.0f} words/s, {kept:.2f} kept heads per word")
