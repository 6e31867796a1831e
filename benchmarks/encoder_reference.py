"""Check depparse's NumPy MiniLM forward pass against Hugging Face transformers (PyTorch).

    python benchmarks/encoder_reference.py [--sentences 400]

Needs ``torch`` and ``transformers`` (not dependencies of depparse; install them in a
separate environment together with depparse's own requirements, e.g. ``python -m venv
/tmp/hfenv && /tmp/hfenv/bin/pip install torch==2.13.0 transformers`` and depparse's
dependencies, then run with ``PYTHONPATH=.`` and ``DEPPARSE_ENCODER`` set to the weights'
directory).  Over a few fixed sentences and the first ``--sentences`` sentences of en_ewt
test (when the corpora are there) it checks that depparse's piece ids equal those of
transformers' ``BertTokenizer`` (loaded from the same directory), and prints the largest and
the mean absolute difference of the hidden states per layer; float32 round-off is about 1e-5.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

FIXED = ["The old man the boats .", "Don't panic : it's only a test , Café owners said .",
         " ".join(["word"] * 40), "Übermäßig lange Wörter , naïve façades & 3.14 %"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=400, help="of en_ewt test (0: none)")
    args = ap.parse_args(argv)
    import torch
    from transformers import BertModel, BertTokenizer

    from depparse.encoding.minilm import MiniLM, find_encoder

    d = find_encoder()
    ours = MiniLM(d, 6)
    ref = BertModel.from_pretrained(str(d)).eval()
    tok = BertTokenizer.from_pretrained(str(d))
    texts = [t.split() for t in FIXED]
    if args.sentences:
        from depparse.conllu import read_conllu
        from depparse.paths import treebank_file

        path = treebank_file("en_ewt", "test")
        if path.exists():
            texts += [[str(f) for f in s.forms[1:]]
                      for s in read_conllu(path)[:args.sentences]]
        else:
            print(f"{path} absent: the fixed sentences only")
    worst, total, count, other_pieces = np.zeros(7), np.zeros(7), 0, 0
    for forms in texts:
        ids = [ours.cls] + ours.piece_ids(forms)[0] + [ours.sep]
        want = tok(forms, is_split_into_words=True)["input_ids"]
        other_pieces += ids != want
        with torch.no_grad():
            hidden = ref(torch.tensor([ids]), output_hidden_states=True).hidden_states
        for layer in range(1, 7):
            ours.layers = layer
            diff = np.abs(ours._forward([ids]) - hidden[layer][0].numpy())
            worst[layer] = max(worst[layer], float(diff.max()))
            total[layer] += float(diff.sum())
        count += len(ids) * ours.dim
    print(f"{len(texts)} sentences; piece ids other than transformers' BertTokenizer's: "
          f"{other_pieces}")
    for layer in range(1, 7):
        print(f"layer {layer}: max |numpy - torch| = {worst[layer]:.2e}, "
              f"mean {total[layer] / count:.2e}")
    return 0 if worst.max() < 1e-4 and not other_pieces else 1


if __name__ == "__main__":
    sys.exit(main())
