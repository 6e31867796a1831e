"""8-bit model weights (issue 14, item 5): a model's parser, pruner and labeler weights stored
as 8-bit square-root companded codes (``ModelConfig.storage = "int8"``, depparse/model.py)
instead of float16; file sizes and en_ewt dev (or test) UAS/LAS of both.

    python benchmarks/experiments/quantize_8bit.py MODEL.npz OUT_8BIT.npz [--split dev]

Both files are parsed as ``depparse parse`` parses (the model's decoding settings); the
encoder runs once per sentence and both parsers decode the same encoded sentences.
"""
import time
from pathlib import Path

import numpy as np
from _common import corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("model")
ap.add_argument("out")
ap.add_argument("--split", default="dev")
args = ap.parse_args()
use_code(args)
import depparse  # noqa: E402
from depparse.evaluate import evaluate  # noqa: E402
from depparse.inference.parser import Parser  # noqa: E402
from depparse.model import Model  # noqa: E402

m = Model.load(args.model)
m.config.storage = "int8"
m.save(args.out)
parsers = {"float16": Parser(Model.load(args.model)), "int8": Parser(Model.load(args.out))}
sents = depparse.read_conllu(corpus(args.split))
vocab = parsers["float16"].model.vocab
parsed = {k: [] for k in parsers}
seconds = dict.fromkeys(parsers, 0.0)
for s in sents:
    enc = vocab.encode(s)
    for k, p in parsers.items():
        t0 = time.perf_counter()
        r = p.engine.decode(enc)
        rels = p.engine.labeler.label_strings(enc, r.heads) if p.engine.labeler else s.rels
        seconds[k] += time.perf_counter() - t0
        parsed[k].append(s.with_parse(r.heads, rels))
for k, path in (("float16", args.model), ("int8", args.out)):
    sc = evaluate(sents, parsed[k])
    print(f"{k}: {Path(path).stat().st_size / 1e6:.2f} MB, {args.split} UAS {sc.uas:.2f} "
          f"LAS {sc.las:.2f}, decode+label {seconds[k]:.0f} s")
same = sum(int(np.array_equal(a.heads, b.heads)) for a, b in zip(parsed["float16"],
                                                                  parsed["int8"], strict=True))
print(f"sentences with the same tree: {same} of {len(sents)}")
