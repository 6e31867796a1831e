"""Proofs over all arcs (issue 50): the pruner with the learned network's heads, and
``parse --proof all`` against the default parse, on the shipped models.

    python benchmarks/proof_all.py [--part pruner|dev300|test|long ...] [--limit N]
                                   [--out benchmarks/results/proofs.json]

* ``pruner``: gold-arc recall and kept heads per word on each shipped model's dev file (gold
  tags), the pruner alone (``prune_network = 0``, the rule before issue 50) against the
  pruner with the network's heads (the default ``prune_network``).
* ``dev300``: the issue's target: en_ewt dev's first 300 sentences of at most 60 words
  parsed with ``--proof all`` (``Parser.decoding.proof_over = "all"``): how many are proved
  over all arcs, and the wall time of the whole parse (encoder, network, decoding).
* ``test``: en_ewt, pt_bosque and tr_imst test (gold tags), each parsed three ways in one
  process, in alternating order over ``--rounds`` rounds (the times are the medians): the
  pruner alone (``prune_network = 0``, today's default parse), the default parse (the
  network's heads kept too) and ``--proof all``; UAS/LAS (CoNLL 2018, every word), trees
  proved and over which arcs, trees that differ from the default parse, and the words/s of
  each, with the ratios against the pruner alone measured in the same run.
* ``long``: sentences of about 60, 80 and 100 words (en_ewt dev sentences joined): the unpruned part
  table's size and the time to build and decode it, against the pruned one's (what sets
  ``proof_max_words``).

Run it under the shared lock: ``flock /work/heavy.lock nice -n 5 python
benchmarks/proof_all.py``.  The results go to ``--out`` (JSON); benchmarks/results/proofs.md
reads them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MODELS = {"en_ewt": "models/en_ewt_gs.npz", "pt_bosque": "models/pt_bosque_gs.npz",
          "tr_imst": "models/tr_imst_gs.npz"}
PARTS = ("pruner", "dev300", "test", "long")


def _load(tb):
    import depparse

    return depparse.load(str(HERE.parent / MODELS[tb]))


def _set(parser, **kw):
    parser.set_decoding(**kw)


def pruner_part(out):
    """Recall and heads per word on dev, without and with the network's heads."""
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    res = {}
    for tb in MODELS:
        p = _load(tb)
        sents = read_conllu(treebank_file(tb, "dev"))
        vecs = p.model.vocab.iter_context_vectors(iter(sents))
        encs = [p.model.vocab.encode(s, v) for s, v in zip(sents, vecs, strict=True)]
        p.learned.attach(encs)
        row = {}
        for name, t in (("pruner alone", 0.0), ("with the network", p.decoding.prune_network)):
            _set(p, prune_network=t)
            hit = kept = words = 0
            t0 = time.perf_counter()
            for s, e in zip(sents, encs, strict=True):
                k = p.engine.keep_mask(e)
                hit += int(k[s.heads[1:], np.arange(1, e.n + 1)].sum())
                kept += int(k.sum())
                words += e.n
            row[name] = {"prune_network": t, "recall": 100.0 * hit / words,
                         "heads_per_word": kept / words, "words": words,
                         "seconds": time.perf_counter() - t0}
            print(f"{tb} dev {name} (prune_network {t:g}): recall {100.0 * hit / words:.2f}%, "
                  f"{kept / words:.2f} heads per word", flush=True)
        p.learned.detach(encs)
        res[tb] = row
    out["pruner"] = res


def dev300_part(out, max_words=60, first=300):
    from depparse.conllu import read_conllu
    from depparse.paths import treebank_file

    p = _load("en_ewt")
    dev = read_conllu(treebank_file("en_ewt", "dev"))[:first]
    sents = [s for s in dev if s.n <= max_words]
    p.parse(dev[:10])  # warm
    _set(p, proof_over="all")
    p.parse(dev[:10])
    t0 = time.perf_counter()
    got = p.parse_results(sents, trace=False)
    wall = time.perf_counter() - t0
    over = {k: sum(r.optimal_over == k for _, r in got) for k in ("all", "pruned")}
    over["not proved"] = sum(not r.optimal for _, r in got)
    slow = max(got, key=lambda x: x[1].seconds)
    out["dev300"] = {"sentences": len(sents), "words": sum(s.n for s in sents),
                     "skipped_longer": len(dev) - len(sents), "max_words": max_words,
                     "optimal_over": over, "wall_seconds": wall,
                     "decode_seconds": sum(r.seconds for _, r in got),
                     "slowest": {"n": slow[0].n, "seconds": slow[1].seconds},
                     "cpus": os.cpu_count(), "load_at_end": os.getloadavg()[0]}
    print(f"en_ewt dev first {first}, <= {max_words} words: {len(sents)} sentences, "
          f"over all arcs {over['all']}, over pruned {over['pruned']}, not proved "
          f"{over['not proved']}; {wall:.1f} s wall", flush=True)


SETTINGS = {"pruner alone": dict(prune_network=0.0, proof_over="pruned"),
            "default": dict(proof_over="pruned"),
            "proof all": dict(proof_over="all")}


def test_part(out, rounds, limit, treebanks=None):
    from depparse.conllu import read_conllu
    from depparse.evaluate import evaluate
    from depparse.paths import treebank_file

    res = out.get("test", {})
    for tb in treebanks or MODELS:
        p = _load(tb)
        network = p.decoding.prune_network
        gold = read_conllu(treebank_file(tb, "test"))
        if limit:
            gold = gold[:limit]
        words = sum(s.n for s in gold)
        _set(p, proof_over="all")
        p.parse(gold[:10])  # compile and warm every path
        times = {k: [] for k in SETTINGS}
        results = {}
        names = list(SETTINGS)
        for rnd in range(rounds):
            for name in (names if rnd % 2 == 0 else names[::-1]):
                kw = dict(SETTINGS[name])
                kw.setdefault("prune_network", network)
                _set(p, **kw)
                t0 = time.perf_counter()
                got = p.parse_results(gold, trace=False)
                times[name].append(time.perf_counter() - t0)
                results.setdefault(name, got)
                print(f"{tb} round {rnd + 1} {name}: {words / times[name][-1]:,.0f} words/s "
                      f"(load {os.getloadavg()[0]:.2f})", flush=True)
        row = {}
        base = statistics.median(times["pruner alone"])
        default = [r.heads for _, r in results["default"]]
        for name, got in results.items():
            sc = evaluate(gold, [s for s, _ in got])
            sec = statistics.median(times[name])
            row[name] = {
                "UAS": sc.metric("UAS").f1, "LAS": sc.metric("LAS").f1,
                "seconds": sec, "seconds_all_rounds": times[name], "words_per_sec": words / sec,
                "time_ratio_vs_pruner_alone": sec / base,
                "proved": sum(r.optimal for _, r in got),
                "over_all": sum(r.optimal_over == "all" for _, r in got),
                "over_pruned": sum(r.optimal_over == "pruned" for _, r in got),
                "trees_changed_vs_default": sum(bool((r.heads != d).any())
                                                for (_, r), d in zip(got, default, strict=True)),
                "words_changed_vs_default": int(sum(int((r.heads != d).sum())
                                                    for (_, r), d in zip(got, default,
                                                                         strict=True))),
                "longest_over_all": max((s.n for s, r in got if r.optimal_over == "all"),
                                        default=0),
                "decode_seconds": sum(r.seconds for _, r in got)}
            print(f"{tb} test {name}: UAS {row[name]['UAS']:.2f} LAS {row[name]['LAS']:.2f}, "
                  f"{row[name]['words_per_sec']:,.0f} words/s (x{sec / base:.3f} the time of "
                  f"the pruner alone), proved {row[name]['proved']} (over all arcs "
                  f"{row[name]['over_all']}), trees changed vs default "
                  f"{row[name]['trees_changed_vs_default']}", flush=True)
        res[tb] = {"sentences": len(gold), "words": words, "rounds": rounds,
                   "proof_max_words": p.decoding.proof_max_words,
                   "longer_than_limit": sum(s.n > p.decoding.proof_max_words for s in gold),
                   "settings": row}
    out["test"] = res


def long_part(out):
    from depparse.conllu import read_conllu
    from depparse.decode.bnb import decode_exact
    from depparse.features.parts import all_arcs
    from depparse.paths import treebank_file

    p = _load("en_ewt")
    dev = read_conllu(treebank_file("en_ewt", "dev"))
    rows = []
    for target in (60, 80, 100):
        ss, n = [], 0
        for s in dev[400:]:
            if n + s.n > target:
                continue
            ss.append(s)
            n += s.n
            if n >= target - 2:
                break
        joined = _join(ss)
        enc = p.model.vocab.encode(joined)
        row = {"n": joined.n}
        for name, keep in (("pruned", p.engine.keep_mask(enc)), ("all", all_arcs(joined.n + 1))):
            t0 = time.perf_counter()
            parts = p.engine.part_table(enc, keep)
            t1 = time.perf_counter()
            r = decode_exact(parts, budget=p.decoding.first_budget(joined.n), single_root=True,
                             history=False)
            t2 = time.perf_counter()
            row[name] = {"table_mb": parts.tab.nbytes / 2**20, "build_seconds": t1 - t0,
                         "decode_seconds": t2 - t1, "proof": r.proof, "nodes": r.nodes,
                         "score": r.score}
        row["same_tree"] = bool(row["pruned"]["score"] == row["all"]["score"])
        rows.append(row)
        print(f"{joined.n} words: pruned table {row['pruned']['table_mb']:.1f} MB, built in "
              f"{row['pruned']['build_seconds']:.3f} s, decoded in "
              f"{row['pruned']['decode_seconds']:.3f} s; all arcs {row['all']['table_mb']:.0f} "
              f"MB, {row['all']['build_seconds']:.2f} s, {row['all']['decode_seconds']:.2f} s "
              f"({row['all']['proof']}, {row['all']['nodes']} nodes)", flush=True)
    out["long"] = rows


def _join(sents):
    """One sentence of the words of ``sents`` (each sentence's root child under the first
    one's), with their tags: a long sentence of real words."""
    from depparse.conllu import read_conllu

    lines, off, root = [], 0, None
    for s in sents:
        for m in range(1, s.n + 1):
            h = int(s.heads[m])
            if h == 0:
                if root is None:
                    root = off + m
                    h = 0
                else:
                    h = root
            else:
                h += off
            lines.append("\t".join([str(off + m), s.forms[m], s.lemmas[m], s.upos[m],
                                    s.xpos[m], s.feats[m] or "_", str(h), "dep", "_", "_"]))
        off += s.n
    import io

    return read_conllu(io.BytesIO(("\n".join(lines) + "\n\n").encode("utf-8")))[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=PARTS, action="append")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="the first N test sentences only")
    ap.add_argument("--treebank", choices=MODELS, action="append",
                    help="the test part of these treebanks only (default: all three)")
    ap.add_argument("--out", default=str(HERE / "results" / "proofs.json"))
    args = ap.parse_args(argv)
    path = Path(args.out)
    out = json.loads(path.read_text()) if path.exists() else {}
    out["command"] = "python benchmarks/proof_all.py " + " ".join(argv or sys.argv[1:])
    for part in args.part or PARTS:
        t0 = time.perf_counter()
        {"pruner": lambda: pruner_part(out), "dev300": lambda: dev300_part(out),
         "test": lambda: test_part(out, args.rounds, args.limit, args.treebank),
         "long": lambda: long_part(out)}[part]()
        out.setdefault("part_seconds", {})[part] = time.perf_counter() - t0
        path.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
