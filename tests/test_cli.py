"""The command line end to end on the synthetic grammar: train -> parse -> evaluate/report.

Checked on every parse: each word has exactly one head, there is no cycle, exactly one word
is attached to the root (unless --multi-root); only the HEAD and DEPREL columns differ
between input and output; stdin works; HEAD/DEPREL ``_`` input works; --report writes the
per-sentence certificates/iterations/seconds; one summary line goes to stderr.
"""

from __future__ import annotations

import io
import json
import re
import time

import numpy as np
import pytest
from fixtures_models import long_sentence, run_cli

from depparse.conllu import read_conllu
from depparse.decode.trees import validate_tree
from depparse.errors import extra_command


def check_trees(data: bytes, single_root=True):
    """Every sentence of CoNLL-U ``data`` is a tree; returns the sentences."""
    sents = read_conllu(io.BytesIO(data))
    assert sents
    for s in sents:
        h = np.asarray(s.heads)
        assert (h[1:] >= 0).all(), "a word without a head"
        assert validate_tree(s, single_root=single_root) is None, validate_tree(s)
        if single_root:
            assert int((h[1:] == 0).sum()) == 1
    return sents


def only_head_deprel_differ(a: bytes, b: bytes):
    la, lb = a.decode().split("\n"), b.decode().split("\n")
    assert len(la) == len(lb)
    changed = 0
    for x, y in zip(la, lb, strict=True):
        cx, cy = x.split("\t"), y.split("\t")
        if len(cx) == 10 and cx[0].isdigit():
            assert cx[:6] == cy[:6] and cx[8:] == cy[8:], (x, y)
            changed += cx[6:8] != cy[6:8]
        else:
            assert x == y
    return changed


def summary_lines(err: str):
    return [line for line in err.splitlines() if line.startswith("depparse: parsed ")]


def test_train_writes_a_loadable_model(syn):
    import depparse

    p = depparse.load(syn.model)
    assert p.config.model == "sib" and p.config.bits == 16
    assert p.engine.labeler is not None
    assert not list(syn.dir.glob(".*.tmp")), "temporary files left behind"


def test_parse_file_valid_trees_only_head_deprel_change(syn, tmp_path):
    out = tmp_path / "out.conllu"
    rc, stdout, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out])
    assert rc == 0, err
    assert stdout == b""
    data = out.read_bytes()
    sents = check_trees(data)
    assert len(sents) == 40
    only_head_deprel_differ(syn.text("test"), data)
    # every DEPREL comes from the labeler's vocabulary (not "_")
    assert all(r for s in sents for r in s.rels[1:])
    lines = summary_lines(err)
    assert len(lines) == 1, err
    assert "parsed 40 sentences" in lines[0] and "certificates" in lines[0]
    # the tiny grammar is learnt well
    gold = read_conllu(syn.test)
    uas = np.mean(np.concatenate([np.asarray(s.heads[1:]) == np.asarray(g.heads[1:])
                                  for s, g in zip(sents, gold, strict=True)]))
    assert uas > 0.9


def test_stdin_to_stdout(syn, tmp_path):
    out = tmp_path / "out.conllu"
    rc, _, _ = run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "-q"])
    assert rc == 0
    rc, stdout, err = run_cli(["parse", "-", "--model", syn.model, "-q"], stdin=syn.text("test"))
    assert rc == 0, err
    assert stdout == out.read_bytes()
    assert err == ""  # -q: no summary


def test_blank_head_deprel_input(syn, tmp_path):
    a, b = tmp_path / "a.conllu", tmp_path / "b.conllu"
    assert run_cli(["parse", syn.test, "--model", syn.model, "-o", a, "-q"])[0] == 0
    rc, _, err = run_cli(["parse", syn.test_blank, "--model", syn.model, "-o", b, "-q"])
    assert rc == 0, err
    # the parser never looks at the input's HEAD/DEPREL: same output either way
    assert a.read_bytes() == b.read_bytes()
    assert only_head_deprel_differ(syn.text("test_blank"), b.read_bytes()) > 0
    check_trees(b.read_bytes())


def test_multi_root(syn, tmp_path):
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "--multi-root"])
    assert rc == 0, err
    check_trees(out.read_bytes(), single_root=False)


def test_several_inputs_in_order(syn, tmp_path):
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", syn.test, syn.dev, "--model", syn.model, "-o", out, "-q"])
    assert rc == 0, err
    sents = check_trees(out.read_bytes())
    ids = [s.sent_id for s in sents]
    assert ids == ([s.sent_id for s in read_conllu(syn.test)]
                   + [s.sent_id for s in read_conllu(syn.dev)])


def test_report_json(syn, tmp_path):
    out, rep = tmp_path / "out.conllu", tmp_path / "rep.json"
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "--report", rep])
    assert rc == 0, err
    r = json.loads(rep.read_text())
    assert r["summary"]["sentences"] == 40
    assert len(r["sentences"]) == 40
    # the report says what the parser did: the same trees, certificates and iteration counts
    # as the API's parse of the same sentences, and the heads of the output file
    import depparse

    api = depparse.load(syn.model).parse_results(read_conllu(syn.test))
    written = read_conllu(out)
    for s, (parsed, res), w in zip(r["sentences"], api, written, strict=True):
        assert s["certificate"] is bool(res.certificate)
        assert s["iterations"] == res.iterations >= 1
        assert s["heads"] == res.heads.tolist() == w.heads.tolist()
        assert s["rels"] == list(parsed.rels) == list(w.rels)
        assert len(s["dual"]) == s["iterations"] and s["seconds"] >= 0
    assert r["summary"]["certified"] == sum(s["certificate"] for s in r["sentences"])


def test_time_limit_on_a_250_word_sentence(syn, tmp_path):
    src = tmp_path / "long.conllu"
    src.write_text(long_sentence(250), encoding="utf-8")
    out, rep = tmp_path / "out.conllu", tmp_path / "rep.json"
    limit = 0.3
    # warm up (kernels loaded) so that the timing below is the decoder's alone
    assert run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "-q"])[0] == 0
    # what the same sentence costs besides dual decomposition (pruning, scoring, one
    # iteration, labelling), measured now: the machine may be busy
    t0 = time.perf_counter()
    assert run_cli(["parse", src, "--model", syn.model, "-o", out, "--report", rep,
                    "--max-iter", 1, "--no-proof"])[0] == 0
    base_wall = time.perf_counter() - t0
    base = json.loads(rep.read_text())["sentences"][0]["seconds"]
    t0 = time.perf_counter()
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", out, "--report", rep,
                          "--time-limit", limit])
    wall = time.perf_counter() - t0
    assert rc == 0, err
    s = json.loads(rep.read_text())["sentences"][0]
    assert s["n"] == 250
    # the limit bounds dual decomposition; the rest costs what it cost above
    assert s["seconds"] < limit + 2 * base + 0.5, (s["seconds"], base)
    assert wall < limit + 2 * base_wall + 2.0, (wall, base_wall)
    if s["timed_out"]:
        assert not s["certificate"]
        assert "stopped by --time-limit" in summary_lines(err)[0]
    check_trees(out.read_bytes())


def test_time_limit_api_returns_a_tree_uncertified(syn):
    import depparse
    from depparse.conllu import read_sentence

    p = depparse.load(syn.model)
    s = read_sentence(long_sentence(250, seed=1))
    (parsed, r), = p.parse_results([s], time_limit=0.01, max_iter=100000)
    assert validate_tree(parsed, single_root=True) is None
    assert r.timed_out, "expected a 250-word nonsense sentence to need more than 0.01 s"
    assert not r.certificate
    assert r.iterations < 100000


def test_evaluate_and_report_commands(syn, tmp_path):
    out, rep = tmp_path / "out.conllu", tmp_path / "rep.json"
    assert run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "--report", rep,
                    "-q"])[0] == 0
    rc, stdout, err = run_cli(["evaluate", syn.test, out, "--json", "--report", rep])
    assert rc == 0, err
    d = json.loads(stdout)
    assert d["uas"] > 90
    rc, _, err = run_cli(["report", rep, "-o", tmp_path / "html"])
    assert rc == 0, err
    assert (tmp_path / "html").is_dir()


def test_prune_flags(syn, tmp_path):
    def parse(name, *flags):
        out, rep = tmp_path / f"{name}.conllu", tmp_path / f"{name}.json"
        rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "--report",
                              rep, "-q", *flags])
        assert rc == 0, err
        return out.read_bytes(), json.loads(rep.read_text())

    prune = ["--prune-threshold", "0.5", "--prune-max-heads", "2"]
    _, default = parse("default")
    data, pruned = parse("pruned", *prune)
    assert len(check_trees(data)) == 40
    only_head_deprel_differ(syn.text("test"), data)
    assert (pruned["model"]["prune_threshold"], pruned["model"]["prune_max_heads"]) == (0.5, 2)
    kept = [s["kept_arcs"] for s in pruned["sentences"]]
    assert all(s["n"] <= k for s, k in zip(pruned["sentences"], kept, strict=True))
    assert sum(kept) < sum(s["kept_arcs"] for s in default["sentences"])
    # worker processes prune the same way
    data2, pruned2 = parse("pruned_jobs2", *prune, "--jobs", "2")
    assert data2 == data
    assert [s["kept_arcs"] for s in pruned2["sentences"]] == kept


def test_bad_flags_exit_2(syn, tmp_path):
    for args in (["--max-iter", "0"], ["--jobs", "-1"], ["--time-limit", "-1"],
                 ["--prune-threshold", "2"], ["--prune-threshold", "-0.001"],
                 ["--prune-max-heads", "0"]):
        rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, *args])
        assert rc == 2
        assert len(err.strip().splitlines()) == 1 and "error" in err


# -- training says what it is doing (issue 51 item 5) ----------------------------------------

def test_train_without_jax_stops_at_the_start_with_the_pip_command(syn, tmp_path, monkeypatch):
    """--learned-scale without JAX: one error line with the pip command before anything is
    trained (it came after the tagger had trained), and no model written."""
    import sys

    from depparse.learn import perceptron

    for name in ("jax", "optax"):
        monkeypatch.setitem(sys.modules, name, None)  # `import jax` raises ImportError
    out = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          syn.train, "--dev", syn.dev, "--learned-scale", "1",
                          "--epochs", "1", "--bits", "16", "-o", out])
    assert rc == 2, err
    assert err.splitlines() == [line for line in err.splitlines()
                                if line.startswith("depparse: error: --learned-scale: ")], err
    assert extra_command("learned") in err
    assert not out.exists()
    # the API refuses as early: the tagger is never reached

    def tagger_reached(*a, **k):
        raise AssertionError("the tagger trained before the JAX check")

    monkeypatch.setattr(perceptron, "training_tagger", tagger_reached)
    from depparse.errors import ConfigError

    with pytest.raises(ConfigError, match=r"learned_scale.*pip install"):
        perceptron.train(read_conllu(syn.train), read_conllu(syn.dev),
                         perceptron.ModelConfig(learned_scale=1.0), progress=False)


def test_train_shows_progress_of_the_final_dev_evaluation(syn, tmp_path, monkeypatch):
    """The final dev evaluation says when it starts and, as an epoch does, shows its progress
    (a log line every LOG_SECONDS when stderr is not a terminal; 0 here: one per sentence but
    the last); -q says nothing of it."""
    from depparse.learn import stage_progress as progress

    monkeypatch.setattr(progress, "LOG_SECONDS", 0.0)
    n = len(read_conllu(syn.dev))
    args = ["train", "--recipe", "none",
            syn.train, "--dev", syn.dev, "--epochs", "1", "--bits", "16",
            "--labeler-epochs", "1", "--no-tagger", "--no-tokenizer"]
    rc, _, err = run_cli([*args, "-o", tmp_path / "m.npz"])
    assert rc == 0, err
    lines = err.splitlines()
    start = lines.index(next(x for x in lines if x.startswith(
        f"depparse: final model on dev: parsing {n} sentences")))
    tick = re.compile(r"depparse: final model on dev: (\d+) of (\d+) sentences \(")
    ticks = [(k, m.groups()) for k, x in enumerate(lines) if (m := tick.match(x))]
    assert [g for _, g in ticks] == [(str(j), str(n)) for j in range(1, n)]
    assert start < ticks[0][0]
    rc, _, err = run_cli([*args, "-q", "-o", tmp_path / "q.npz"])
    assert rc == 0 and err == "", err


def test_input_horizontal_and_vertical(syn, tmp_path):
    """UDPipe's tokenized formats (issue 51): a sentence per line, or a word per line; the
    output is that of the same words as CoNLL-U, the errors name the input's file and line,
    and a run continues (--resume) after any sentence's line."""
    from depparse.cli.stream import Reader

    sents = read_conllu(syn.test)[:40]
    words = [list(s.forms[1:]) for s in sents]
    conllu = tmp_path / "words.conllu"
    conllu.write_text("".join("".join(f"{i}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_\n"
                                      for i, w in enumerate(ws, 1)) + "\n" for ws in words),
                      encoding="utf-8")
    horizontal = tmp_path / "words.h.txt"
    horizontal.write_text("".join("  ".join(ws) + "\n" for ws in words), encoding="utf-8")
    vertical = tmp_path / "words.v.txt"
    vertical.write_text("".join("".join(w + "\n" for w in ws) + "\n" for ws in words),
                        encoding="utf-8")
    rc, ref, err = run_cli(["parse", conllu, "--model", syn.model, "-q"])
    assert rc == 0, err
    for kind, path in (("horizontal", horizontal), ("vertical", vertical)):
        rc, out, err = run_cli(["parse", "--input", kind, path, "--model", syn.model, "-q"])
        assert rc == 0 and out == ref, (kind, err)
        rc, out, err = run_cli(["parse", "--input", kind, "-", "--model", syn.model, "-q"],
                               stdin=path.read_bytes())
        assert rc == 0 and out == ref, (kind, err)
    from depparse.api import load

    parser = load(syn.model)
    for kind, path in (("horizontal", horizontal), ("vertical", vertical)):
        lines = [p for _, p in Reader(parser, kind, str(path)).it]
        assert len(lines) == 40 and lines[0] == 1
        rest = Reader(parser, kind, str(path), after=lines[24])
        assert [list(s.forms[1:]) for s, _ in rest.it] == words[25:]
        rest.close()
    bad = tmp_path / "bad.txt"
    bad.write_bytes(horizontal.read_bytes() + b"a b \xff c\n")
    rc, _, err = run_cli(["parse", "--input", "horizontal", bad, "--model", syn.model])
    assert rc == 2 and err.startswith(f"depparse: error: {bad}:41: invalid UTF-8"), err
    rc, _, err = run_cli(["parse", "--input", "vertical", vertical, "--model", syn.model,
                          "--scheduler", "tcp://127.0.0.1:1"])
    assert rc == 2 and "--input vertical: not with --scheduler" in err, err
