"""Write tests/data/encoder_classes_dev1000.json: the contextual classes of 1,000 en_ewt dev words.

    python tests/data/encoder_classes_fixture.py MODEL.npz [-o OUT.json]

(It was benchmarks/encoder_classes_fixture.py when it wrote the file.)

The file pins what the encoder computes for the shipped model: the class codes (fine | coarse
<< CLUSTER_SHIFT, as :meth:`ContextClasses.codes` returns them) of the first 1,000 words of
every 16th sentence of en_ewt dev, each sentence encoded whole, with the ``ContextClasses``
of ``MODEL.npz``, together with the SHA-256 of that model's centroids (float16) and coarse
groups, so that ``tests/test_encoder.py`` can tell whether the shipped model still has those
classes.  It was written ONCE, with the encoder of commit a117308 (hand-written safetensors
reader, BERT basic tokenizer and WordPiece, Abramowitz-Stegun erf) and the model file of
commit 3d3e18c (``git show 3d3e18c:models/en_ewt_gs.npz > /tmp/old_model.npz``), before the
encoder moved to the safetensors and tokenizers libraries; do not regenerate it to make the
test pass.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

STRIDE = 16
WORDS = 1000


def context_of(model_path):
    """The ``ContextClasses`` of a model file and the SHA-256 of its centroids and groups."""
    from depparse.encoding.context import ContextClasses

    with np.load(model_path) as z:
        d = json.loads(z["meta"].tobytes())["vocab"]["context"]
    return ContextClasses.from_json(d), class_hashes(d)


def class_hashes(d: dict) -> dict:
    """SHA-256 of the centroids' float16 bytes and of the coarse groups (int64 LE)."""
    return {"centroids_sha256": hashlib.sha256(base64.b64decode(d["centroids"])).hexdigest(),
            "coarse_sha256": hashlib.sha256(
                np.asarray(d["coarse"], dtype="<i8").tobytes()).hexdigest()}


def chosen_sentences(sents):
    """(sentence, number of its words to keep): every 16th sentence until 1,000 words."""
    out, total = [], 0
    for s in sents[::STRIDE]:
        keep = min(s.n, WORDS - total)
        out.append((s, keep))
        total += keep
        if total == WORDS:
            break
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("-o", "--out", default="tests/data/encoder_classes_dev1000.json")
    args = ap.parse_args(argv)
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    cc, hashes = context_of(args.model)
    sents = read_conllu(treebank_file("en_ewt", "dev"))
    rows = []
    for s, keep in chosen_sentences(sents):
        codes = cc.codes(list(s.forms[1:]))
        rows.append([s.sent_id, keep, codes[:keep].tolist()])
    doc = {
        "what": "contextual class codes (ContextClasses.codes: fine | coarse << CLUSTER_SHIFT) "
                f"of the first {WORDS} words of every {STRIDE}th sentence of en_ewt-ud-dev, "
                "each sentence encoded whole; rows are [sent_id, words kept, codes]",
        "how": "benchmarks/encoder_classes_fixture.py with the encoder of commit a117308 "
               "(hand-written safetensors reader, BERT basic tokenizer + WordPiece, "
               "Abramowitz-Stegun erf) and the ContextClasses of models/en_ewt_gs.npz at "
               "commit 3d3e18c (layer 3, 1024 classes, 64 groups)",
        "layer": cc.layer, **hashes, "sentences": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(json.dumps({k: v for k, v in doc.items() if k != "sentences"}, indent=1)[:-2])
        f.write(',\n "sentences": [\n')
        f.write(",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in rows))
        f.write("\n ]\n}\n")
    print(f"{args.out}: {sum(r[1] for r in rows)} words of {len(rows)} sentences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
