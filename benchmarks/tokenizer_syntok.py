"""syntok (segtok v2) as a tokenizer candidate: plain text in, CoNLL-U out (no depparse import).

Run in an environment with ``pip install syntok==1.4.4`` (pure Python):
``python benchmarks/tokenizer_syntok.py in.txt out.conllu``.  Paragraphs are cut at blank
lines as for depparse's tokenizer; syntok segments the sentences and tokens of each
paragraph; words are its tokens (no multiword tokens); ``SpaceAfter=No`` from its offsets.
Used by ``benchmarks/tokenizer_experiments.py``.
"""

from __future__ import annotations

import re
import sys
import time

from syntok import segmenter


def main(src: str, dst: str) -> None:
    text = open(src, encoding="utf-8").read()
    t0 = time.perf_counter()
    out, sid, words = [], 0, 0
    for para in re.split(r"\n[^\S\n]*\n", text):
        para = para.strip()
        if not para:
            continue
        first = True
        sents = [[t for t in s if t.value] for p in segmenter.analyze(para) for s in p]
        sents = [s for s in sents if s]
        offs = [t.offset for s in sents for t in s] + [len(para)]
        k = 0
        for s in sents:
            # forms are cut from the text (syntok normalises some values, e.g. hyphens): each
            # token runs to the next token's offset, trailing whitespace removed
            forms = [para[offs[k + j]:offs[k + j + 1]].rstrip() for j in range(len(s))]
            k += len(s)
            toks = [(f, o) for f, o in zip(forms, offs[k - len(s):k], strict=True)]
            if toks:
                sid += 1
                if first:
                    out.append("# newpar")
                    first = False
                out.append(f"# sent_id = {sid}")
                lines, parts = [], []
                for j, (form, off) in enumerate(toks):
                    end = off + len(form)
                    nxt = toks[j + 1][1] if j + 1 < len(toks) else None
                    glued = nxt == end or (nxt is None and end < len(para)
                                           and not para[end].isspace())
                    parts.append(form + ("" if glued or nxt is None else " "))
                    misc = "SpaceAfter=No" if glued else "_"
                    lines.append(f"{j + 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
                    words += 1
                out.append("# text = " + "".join(parts))
                out.extend(lines)
                out.append("")
    dt = time.perf_counter() - t0
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"{words} words in {dt:.2f} s ({words / dt:.0f} words/s)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
