"""Write tests/data/parse_fixture_*: small models and what the code of that day parsed with them.

    python tests/data/parse_fixture.py [--code CHECKOUT] [-o tests/data]

(At commit 3f618e4 this script was benchmarks/parse_fixture.py.)

Two G+S models are trained on 12 sentences of the synthetic grammar of tests/synthetic.py
(1 epoch, tiny hash tables, so that they still make mistakes): ``plain`` (feature set 2 only)
and ``context`` (contextual classes of MiniLM layer 1, 8 classes; needs the encoder).  For
each, the fixture keeps the model file, the CoNLL-U it parsed from 30 other synthetic
sentences, and the SHA-256 of the part tables (arc scores and automaton tables, float64
bytes) of those sentences.  tests/test_dense.py checks that the current code, for models
without dense arc scores, still computes exactly these scores and trees.

It was written ONCE, with the code of commit 3f618e4 (before dense arc scores and 8-bit
weights; ``git worktree add /tmp/base 3f618e4`` and ``--code /tmp/base``); do not regenerate
it to make the test pass.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("--code", default=str(REPO), help="checkout whose depparse is imported")
ap.add_argument("-o", "--out", default=str(REPO / "tests" / "data"))
args = ap.parse_args()
sys.path.insert(0, args.code)
sys.path.insert(0, str(REPO / "tests"))
import synthetic  # noqa: E402

import depparse  # noqa: E402

out = Path(args.out)
train = synthetic.sentences(12, seed=11)
test = synthetic.sentences(30, seed=12)
small = dict(model="gs", bits=10, pruner_bits=10, labeler_bits=10, epochs=1, seed=3,
             pruner_folds=2, tokenizer=False, progress=False)
record = {"code": args.code}
for name, extra in (("plain", {}), ("context", {"context_layer": 1, "context_classes": 8})):
    m = depparse.train(train, None, **small, **extra)
    path = out / f"parse_fixture_{name}.npz"
    m.save(path)
    p = depparse.load(path)
    text = p.parse_conllu(synthetic.conllu_text(30, seed=12))
    (out / f"parse_fixture_{name}.conllu").write_text(text, encoding="utf-8")
    h = hashlib.sha256()
    for s in test:
        t = p.engine.part_table(p.model.vocab.encode(s))
        h.update(t.arc.tobytes())
        h.update(t.tab.tobytes())
    wrong = sum(int(a != b) for s, q in zip(test, p.parse(test), strict=True)
                for a, b in zip(s.heads[1:], q.heads[1:], strict=True))
    record[name] = {"parts_sha256": h.hexdigest(), "wrong_heads": wrong,
                    "words": sum(s.n for s in test)}
    print(name, record[name])
(out / "parse_fixture.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
