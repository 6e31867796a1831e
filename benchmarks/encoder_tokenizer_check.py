"""Word-piece ids of the encoder's tokenizer against the hand-written one it replaced, and both
against Hugging Face transformers' own BERT tokenizers.

Step 1, in depparse's environment (needs git: the old tokenizer is read from commit
``--old``, a117308 by default, the last one with the hand-written basic tokenizer and
WordPiece)::

    python benchmarks/encoder_tokenizer_check.py --out /tmp/pieces.json [--codepoints]

compares, for every word of the six shared treebanks (train file where there is one, else
dev), the piece ids and their word of :meth:`MiniLM.piece_ids` (the ``tokenizers`` library)
with the old code's, sentence by sentence; ``--codepoints`` also compares every Unicode code
point ``c`` as the words ``c`` and ``"a" + c + "b"``.  Step 2, in a separate environment
with transformers (``pip install torch==2.13.0 transformers``, as for
``benchmarks/encoder_reference.py``; depparse is not imported)::

    python benchmarks/encoder_tokenizer_check.py --transformers /tmp/pieces.json

tokenizes every distinct word of step 1 (and every word where old and new differ) with
transformers' ``BertTokenizer`` (loaded from the encoder's directory: its ``tokenizer.json``)
and ``BertTokenizerLegacy`` (the pure-Python BasicTokenizer + WordpieceTokenizer), and says
which of old and new each agrees with.  A word that yields no piece counts as ``[UNK]``, as
in the encoder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import types
import unicodedata
from collections import Counter
from pathlib import Path

TREEBANKS = ["en_ewt", "pt_bosque", "tr_imst", "da_ddt", "nl_alpino", "sv_talbanken"]


def load_old(rev: str):
    """depparse/encoding/minilm.py of commit ``rev``, as a module beside today's."""
    src = subprocess.run(["git", "show", f"{rev}:depparse/encoding/minilm.py"], check=True,
                         capture_output=True, text=True).stdout
    name = f"depparse.encoding._minilm_{rev}"
    mod = types.ModuleType(name)
    mod.__package__ = "depparse.encoding"
    mod.__file__ = f"{rev}:depparse/encoding/minilm.py"
    sys.modules[name] = mod
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def old_piece_ids(old, forms):
    ids, owner = [], []
    for i, f in enumerate(forms):
        p = old.pieces(f)
        ids.extend(p)
        owner.extend([i] * len(p))
    return ids, owner


def compare_treebanks(old, new):
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    out = {}
    for code in TREEBANKS:
        path = treebank_file(code, "train")
        if not path.exists():
            path = treebank_file(code, "dev")
        sents = read_conllu(path)
        words, diff, typeset = 0, {}, {}
        for s in sents:
            forms = [str(f) for f in s.forms[1:]]
            a, b = old_piece_ids(old, forms), new.piece_ids(forms)
            words += len(forms)
            for f in forms:
                typeset.setdefault(f, None)
            if a == b:
                continue
            for i, f in enumerate(forms):  # which words differ
                pa = [p for p, w in zip(*a, strict=True) if w == i]
                pb = [p for p, w in zip(*b, strict=True) if w == i]
                if pa != pb:
                    diff[f] = (pa, pb)
        kinds = list(typeset)
        out[code] = {"file": path.name, "sentences": len(sents), "words": words,
                     "types": len(kinds),
                     "differing_words": sum(1 for s in sents for f in s.forms[1:]
                                            if str(f) in diff) if diff else 0,
                     "differing": [[w, a, b] for w, (a, b) in diff.items()],
                     "all_types": kinds, "new_ids": [new.pieces(w) for w in kinds]}
        print(f"{code:13s} {path.name:26s} {len(sents):6d} sentences {words:7d} words "
              f"{len(kinds):6d} types: {out[code]['differing_words']} words "
              f"({len(diff)} types) with other piece ids")
    return out


def compare_codepoints(old, new):
    words = [chr(o) for o in range(0x110000) if not 0xD800 <= o < 0xE000]
    words += ["a" + w + "b" for w in words]
    diff = [[w, a, b] for w in words if (a := old.pieces(w)) != (b := new.pieces(w))]
    cats = Counter(unicodedata.category(w[len(w) // 2]) for w, _, _ in diff)
    print(f"code points: {len(words)} words, {len(diff)} with other piece ids; by category "
          f"of the code point: {dict(cats.most_common())}")
    return {"words": len(words), "differing": diff}


def transformers_check(report_path):
    from transformers import BertTokenizer, BertTokenizerLegacy

    rep = json.loads(Path(report_path).read_text(encoding="utf-8"))
    d = rep["encoder"]
    toks = {"BertTokenizer": BertTokenizer.from_pretrained(d),
            "BertTokenizerLegacy": BertTokenizerLegacy.from_pretrained(d)}
    unk = toks["BertTokenizer"].unk_token_id

    def ids(tok, w):
        return tok(w, add_special_tokens=False)["input_ids"] or [unk]

    def judge(label, differing):
        for name, tok in toks.items():
            c = Counter("old" if (h := ids(tok, w)) == a else "new" if h == b else "neither"
                        for w, a, b in differing)
            print(f"  {label}: {name} agrees with {dict(c)}")

    bad = 0
    for code, r in rep["treebanks"].items():
        for name, tok in toks.items():
            dis = sum(ids(tok, w) != b for w, b in zip(r["all_types"], r["new_ids"],
                                                       strict=True))
            bad += dis
            print(f"{code:13s} {r['types']:6d} types: {name} differs from the encoder "
                  f"on {dis}")
        if r["differing"]:
            judge(code, r["differing"])
    if rep.get("codepoints"):
        judge("code points", rep["codepoints"]["differing"])
    return 1 if bad else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", default="a117308", help="commit of the old tokenizer")
    ap.add_argument("--out", default="encoder_pieces.json", help="step 1's report (JSON)")
    ap.add_argument("--codepoints", action="store_true", help="also every Unicode code point")
    ap.add_argument("--transformers", metavar="REPORT", help="step 2 on step 1's report")
    args = ap.parse_args(argv)
    if args.transformers:
        return transformers_check(args.transformers)
    from depparse.encoding.minilm import MiniLM, find_encoder

    d = find_encoder()
    old, new = load_old(args.old).MiniLM(d, 1), MiniLM(d, 1)
    rep = {"old": args.old, "encoder": str(Path(d).resolve()),
           "treebanks": compare_treebanks(old, new)}
    if args.codepoints:
        rep["codepoints"] = compare_codepoints(old, new)
    Path(args.out).write_text(json.dumps(rep, ensure_ascii=False), encoding="utf-8")
    print(f"report: {os.path.abspath(args.out)}")
    return 1 if any(r["differing"] for r in rep["treebanks"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
