"""Dev (or test) UAS, certificates and decoding speed of saved G+S models, one after another:
the encoder vectors and encodings are computed first, so the time is the pruner and the
decoder alone (default decoding, every tree proved), one process, one BLAS thread, best of
two passes after a warm-up.

    python decode_speed.py [--code DIR] [--split dev] A.npz [B.npz ...]
"""
import time

import numpy as np
from _common import corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("models", nargs="+")
ap.add_argument("--split", default="dev")
args = ap.parse_args()
use_code(args)
from depparse.conllu import read_conllu  # noqa: E402
from depparse.encoding.minilm import one_blas_thread  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402
from depparse.model import Model  # noqa: E402

sents = read_conllu(corpus(args.split))
words = sum(s.n for s in sents)
for path in args.models:
    p = Parser(Model.load(path))
    vocab = p.model.vocab
    encs = [vocab.encode(s, v)
            for s, v in zip(sents, vocab.iter_context_vectors(sents), strict=True)]
    with one_blas_thread():
        for e in encs[:100]:
            p.engine.decode(e)
        best = np.inf
        for _ in range(2):
            t = time.perf_counter()
            rs = [p.engine.decode(e) for e in encs]
            best = min(best, time.perf_counter() - t)
    right = sum(int((np.asarray(r.heads[1:]) == np.asarray(s.heads[1:])).sum())
                for r, s in zip(rs, sents, strict=True))
    cert = 100 * np.mean([r.certificate for r in rs])
    kept = sum(int(r.kept_arcs) for r in rs) / words
    print(f"{path}: {args.split} UAS {100 * right / words:.2f}, dual certificates {cert:.2f}%, "
          f"decoding {best:.2f} s = {words / best:.0f} words/s, {kept:.2f} kept heads per word",
          flush=True)
