"""Where raw text's parsing time goes, sentence by sentence (issue 47's speed target).

en_ewt test's raw text, split and tokenized by the model's own tokenizer (as ``depparse
parse --input text``), parsed one sentence after another in one process with the encoders on
the decoder's thread (``ahead=0``); prints the total, the twelve slowest sentences (seconds,
words, proved) and their sum.  On 2026-12-06 both English models (versions 12 and 13) spent
63 of their 79 / 95 s on one 112-word spreadsheet line, not proved within the 60 s bound.

    python benchmarks/experiments/raw_slowest.py models/en_ewt_gs.npz
"""
import sys
import time

from depparse.api import load
from depparse.conllu import read_conllu
from depparse.learn.tokenizer_training import treebank_text
from depparse.paths import treebank_file

p = load(sys.argv[1])
gold = read_conllu(treebank_file("en_ewt", "test"))
sents = list(p.read_text(treebank_text(gold), source="<raw text>"))
print(f"{len(sents)} sentences, {sum(s.n for s in sents)} words, the longest "
      f"{max(s.n for s in sents)}")
ts = []
t0 = prev = time.perf_counter()
for i, (s, r) in enumerate(p.engine.iter_parsed(p.columns.assign(sents, False, None), ahead=0)):
    now = time.perf_counter()
    ts.append((now - prev, i, s.n, r.optimal))
    prev = now
print(f"total {prev - t0:.1f} s")
ts.sort(reverse=True)
for t in ts[:12]:
    print(f"{t[0]:.2f} s  sentence {t[1]}  {t[2]} words  proved {t[3]}")
print(f"the twelve slowest: {sum(t[0] for t in ts[:12]):.1f} s")
