"""The cap on the learned network's kept heads (``--prune-max-heads`` for them too): where it
binds on each shipped model's dev data, and which gold arcs it drops from the kept arcs.

The pruner keeps, for each word, at most ``prune_max_heads`` heads by its marginals; the
network's heads kept beside them (``P(h | m)`` within ``prune_network`` of its best head) had
no cap until 2026-12-06, when a 112-word line of account codes in en_ewt test's raw text kept
80 heads per word (8,927 arcs against the pruner's 2,163) and branch and bound did not close in
120 s.  The shipped models' records measured their pruner's dev recall without the cap; this
script says whether the cap changes that measurement: the gold-arc recall and heads per word
of the kept arcs with the cap and without, per model (the records' recall and heads per
word are read beside, for comparison).

    python benchmarks/experiments/network_heads_cap.py [LANG ...]
"""
import sys

import numpy as np
from _common import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from make_model import SHIPPED, train_dev  # noqa: E402

from depparse.api import load  # noqa: E402
from depparse.inference.candidates import network_heads  # noqa: E402


def measure(lang):
    spec = SHIPPED[lang]
    path = REPO / "models" / f"{spec['treebank']}_gs.npz"
    if not path.exists():  # a dev-only build not shipped
        return None
    p = load(path)
    e = p.engine
    if e.learned is None or e.order == 0:
        return None
    _, dev, _ = train_dev(spec)
    d = e.decoding
    vec = e.model.vocab.iter_context_vectors(iter(dev))
    encs = [e.model.vocab.encode(s, v) for s, v in zip(dev, vec, strict=True)]
    e.learned.attach(encs)
    words = hit_cap = hit_free = kept_cap = kept_free = binds = 0
    for s, enc in zip(dev, encs, strict=True):
        capped = e.keep_mask(enc)
        lp = e.learned.arc_logprobs(enc)
        free = capped | network_heads(lp, d.prune_network)
        binds += int((network_heads(lp, d.prune_network).sum(0) > d.prune_max_heads).sum())
        h = np.asarray(s.heads)
        m = np.arange(1, enc.n + 1)
        hit_cap += int(capped[h[1:], m].sum())
        hit_free += int(free[h[1:], m].sum())
        kept_cap += int(capped.sum())
        kept_free += int(free.sum())
        words += enc.n
    rec = next(h for h in e.model.info["history"] if "pruner_dev_recall" in h)
    return dict(words=words, binds=binds, recall_free=100 * hit_free / words,
                recorded=rec["pruner_dev_recall"], recorded_heads=rec["pruner_heads_per_word"],
                recall_cap=100 * hit_cap / words, heads_free=kept_free / words,
                heads_cap=kept_cap / words)


def main(argv):
    langs = argv or sorted(SHIPPED)
    print("| model | dev words | words where the cap binds | recall without / with | "
          "heads per word without / with | the record's recall, heads per word |\n"
          "|---|---|---|---|---|---|")
    for lang in langs:
        r = measure(lang)
        if r is None:
            continue
        print(f"| {SHIPPED[lang]['treebank']} | {r['words']} | {r['binds']} | "
              f"{r['recall_free']:.2f} / {r['recall_cap']:.2f} | "
              f"{r['heads_free']:.2f} / {r['heads_cap']:.2f} | "
              f"{r['recorded']:.2f}, {r['recorded_heads']:.2f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
