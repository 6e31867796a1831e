"""Streaming parse (issue 27, items 1-3): a stream in, results out in order, bounded memory;
plain text in batches; progress; OUT.partial and --resume after SIGKILL; folders and globs.

The kill tests run ``python -m depparse.cli`` with ``DEPPARSE_COMMIT_SECONDS=0.05`` (a commit
every 50 ms instead of every 5 s) and kill the process group with SIGKILL at a random moment
after its first commit (the seed is in the assertion messages); ``--resume`` must then give
the bytes of a run that was never stopped.  ``benchmarks/streaming.py`` does the same with the
shipped model on en_ewt.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import synthetic
from fixtures_models import REPO_ROOT, conllu_bytes, run_cli

import depparse
from depparse.conllu import read_conllu
from depparse.inference import textfile
from depparse.inference.columns import TAG_WINDOW
from depparse.inference.parallel import IN_FLIGHT, MAX_CHUNK
from depparse.inference.tokenizer import read_text

SEED = int(os.environ.get("DEPPARSE_CRASH_SEED", "12345"))


# ---------------------------------------------------------------------------------------
# the API: Parser.iter_parse_results


@pytest.mark.parametrize("jobs", [1, 2])
def test_iter_parse_results_is_parse_one_in_order(parser, sents, jobs):
    ref = [parser.engine.parse_one(s) for s in sents]
    got = list(parser.iter_parse_results(iter(sents), jobs=jobs, trace=True))
    assert conllu_bytes([p for p, _ in got]) == conllu_bytes([p for p, _ in ref])
    for (_, a), (_, b) in zip(ref, got, strict=True):
        assert (a.certificate, a.iterations, a.proof) == (b.certificate, b.iterations, b.proof)
    assert [p.heads.tolist() for p in parser.parse(sents, jobs=jobs)] == [
        p.heads.tolist() for p, _ in ref]


@pytest.mark.parametrize("jobs", [1, 2])
def test_iter_parse_results_reads_a_bounded_window(parser, sents, jobs):
    """An endless stream: results come out after a bounded look-ahead, and keep coming."""
    pulled = [0]

    def endless():
        for k in itertools.count():
            pulled[0] += 1
            yield sents[k % len(sents)]

    # the file's first TAG_WINDOW sentences decide its tag columns; the encoder batches
    # about 1,024 word pieces (<= 100 synthetic sentences); workers hold IN_FLIGHT chunks each
    bound = TAG_WINDOW + 100 + (IN_FLIGHT * jobs + 2) * MAX_CHUNK * (jobs > 1)
    it = parser.iter_parse_results(endless(), jobs=jobs)
    first = list(itertools.islice(it, 5))
    assert len(first) == 5 and pulled[0] <= bound, pulled
    more = list(itertools.islice(it, 400))
    assert len(more) == 400 and pulled[0] <= 405 + bound, pulled
    assert conllu_bytes([p for p, _ in first + more[:len(sents) - 5]]) == conllu_bytes(
        [p for p, _ in parser.parse_results(sents, trace=False)])
    it.close()


def test_tag_columns_are_chosen_per_sentence(parser, sents):
    """Untagged sentences (all four columns '_') get the trained columns wherever they are; a
    tagged one keeps its tags; each result says what was predicted."""
    blank = [s.with_tags(lemmas=["_"] * (s.n + 1), upos=["_"] * (s.n + 1)) for s in sents]
    mixed = [b if k % 3 == 1 else s for k, (s, b) in enumerate(zip(sents, blank, strict=True))]
    got = list(parser.iter_parse_results(iter(mixed)))
    assert [r.tagged for _, r in got] == [("UPOS", "LEMMA") if k % 3 == 1 else ()
                                         for k in range(len(sents))]
    for (p, _), s in zip(got, sents, strict=True):
        assert list(p.upos) == list(s.upos)  # the synthetic language is tagged perfectly
    ref = parser.parse(sents)
    assert [p.heads.tolist() for p, _ in got] == [p.heads.tolist() for p in ref]
    assert [c for _, c in parser.columns.assign(mixed, retag=True)][0] == (
        "UPOS", "XPOS", "LEMMA", "FEATS")


# ---------------------------------------------------------------------------------------
# plain text, a batch of paragraphs at a time


def _text(sents, seed=0):
    rng = random.Random(seed)
    out, k = [], 0
    while k < len(sents):
        n = rng.randint(1, 6)
        out.append(" ".join(s.text for s in sents[k:k + n]))
        out.append(rng.choice(["\n\n", "\n  \n", "\r\n\r\n", "\n\n\n", "\n \t\n"]))
        k += n
    return "".join(out)


def test_text_in_batches_is_the_text_at_once(parser, sents, tmp_path, monkeypatch):
    src = tmp_path / "in.txt"
    src.write_bytes(("\ufeff" + _text(sents * 3)).encode("utf-8"))
    text, name = read_text(src)
    ref = [s.to_text() for s in parser.tokenizer.tokenize(text, source=name)]
    assert len(ref) >= len(sents) * 3
    for batch in (7, 64, 1000, textfile.TEXT_BATCH):
        monkeypatch.setattr(textfile, "TEXT_BATCH", batch)
        got = list(parser.tokenizer.iter_sentences(src))
        assert [s.to_text() for s, _ in got] == ref, batch
    # continuing after any sentence gives the rest (what --resume does): the first batch is
    # read again as it was (a batch read from its own start would be cut elsewhere; with
    # positions without their batch's end, 5 of 293 en_ewt dev sentences resumed wrongly at
    # 64-byte batches, 46 at 500, 23 at 3000)
    for batch in (64, 500, 3000):
        monkeypatch.setattr(textfile, "TEXT_BATCH", batch)
        positions = [p for _, p in parser.tokenizer.iter_sentences(src)]
        assert len({p.offset for p in positions}) > 3
        for k in sorted(random.Random(SEED + batch).sample(range(len(ref)), 40)):
            rest = [s.to_text()
                    for s, _ in parser.tokenizer.iter_sentences(src, after=positions[k])]
            assert rest == ref[k + 1:], (batch, k)


# ---------------------------------------------------------------------------------------
# the command line


def test_cli_output_is_the_api_output(syn, parser, sents, tmp_path):
    out = tmp_path / "out.conllu"
    for jobs in ("1", "2"):
        rc, _, err = run_cli(["parse", syn.test, syn.dev, "-m", syn.model, "-o", out,
                              "--jobs", jobs])
        assert rc == 0, err
        assert out.read_bytes() == conllu_bytes(parser.parse(sents))
        assert sorted(os.listdir(tmp_path)) == ["out.conllu"]


def test_progress_lines_in_a_log(syn, tmp_path):
    big = tmp_path / "big.conllu"
    big.write_text(synthetic.conllu_text(400, 11), encoding="utf-8")
    rc, _, err = run_cli(["parse", big, "-m", syn.model, "-o", tmp_path / "o.conllu",
                          "--progress-interval", "0.05"])
    assert rc == 0, err
    lines = [x for x in err.splitlines() if " words/s, proved optimal " in x]
    assert len(lines) >= 2, err
    assert "\r" not in err and "% of the input" in lines[-1], lines
    rc, _, err = run_cli(["parse", big, "-m", syn.model, "-o", tmp_path / "o.conllu",
                          "--progress-interval", "0.05", "-q"])
    assert rc == 0 and err == "", err


def test_folder_of_inputs_into_a_folder(syn, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    texts = [s.text for s in read_conllu(syn.test)]
    for k, name in enumerate(["a.txt", "b.txt", "c.txt"]):
        (corpus / name).write_text("\n\n".join(texts[10 * k:10 * k + 10]) + "\n")
    (corpus / "empty.txt").write_text("")
    (corpus / "notes.md").write_text("not an input")
    out = tmp_path / "parsed"
    rc, _, err = run_cli(["parse", "--input", "text", corpus, "-m", syn.model, "-o", f"{out}/"])
    assert rc == 0, err
    assert sorted(os.listdir(out)) == ["a.conllu", "b.conllu", "c.conllu", "empty.conllu"]
    for name in ("a", "b", "c"):
        assert f"{corpus / name}.txt -> {out / name}.conllu: 10 sentences" in err, err
        one = tmp_path / f"{name}.conllu"
        assert run_cli(["parse", "--input", "text", corpus / f"{name}.txt", "-m", syn.model,
                        "-o", one, "-q"])[0] == 0
        assert (out / f"{name}.conllu").read_bytes() == one.read_bytes()
    assert (out / "empty.conllu").read_bytes() == b""
    assert "parsed 30 sentences" in err
    # a rerun does only what is left: here nothing, then the one input that changed
    rc, _, err = run_cli(["parse", "--input", "text", corpus, "-m", syn.model, "-o", out])
    assert rc == 0 and err.count("skipped,") == 4 and "parsed 0 sentences" in err, err
    (out / "b.conllu").unlink()
    time.sleep(0.01)
    (corpus / "c.txt").write_text(texts[0] + "\n")
    rc, _, err = run_cli(["parse", "--input", "text", f"{corpus}/*.txt", "-m", syn.model,
                          "-o", out])  # a glob the shell did not expand
    assert rc == 0 and err.count("skipped,") == 2 and "parsed 11 sentences" in err, err
    rc, _, err = run_cli(["parse", "--input", "text", corpus, "-m", syn.model, "-o", out,
                          "--force", "-q"])
    assert rc == 0, err
    assert err == f"depparse: warning: no sentences in {corpus / 'empty.txt'}\n", err
    # two inputs with the same output name
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "a.txt").write_text(texts[0])
    rc, _, err = run_cli(["parse", "--input", "text", corpus / "a.txt", tmp_path / "other" /
                          "a.txt", "-m", syn.model, "-o", f"{tmp_path / 'two'}/"])
    assert rc == 2 and "would both be written to" in err, err
    rc, _, err = run_cli(["parse", "--input", "text", f"{corpus}/*.xyz", "-m", syn.model])
    assert rc == 2 and "no file matches" in err, err


# ---------------------------------------------------------------------------------------
# OUT.partial and --resume


def _cmd(*args):
    return [sys.executable, "-m", "depparse.cli", *[str(a) for a in args]]


def _env():
    return {**os.environ, "DEPPARSE_COMMIT_SECONDS": "0.05"}


def _kill_during(args, state, rng, within=1.5, timeout=300):
    """Run ``args``; SIGKILL it (and its workers) at a random moment, up to ``within``
    seconds after its first commit.  Returns the delay after the first commit, or None if
    it finished first."""
    t0 = time.monotonic()
    proc = subprocess.Popen(_cmd(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=REPO_ROOT, env=_env(), start_new_session=True)
    try:
        while not state.exists():
            if proc.poll() is not None:
                return None
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"{state} did not appear")
            time.sleep(0.005)
        delay = rng.uniform(0.0, within)
        time.sleep(delay)
        if proc.poll() is not None:
            return None
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        return delay
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stderr.close()


@pytest.fixture(scope="module")
def big(syn, tmp_path_factory):
    d = tmp_path_factory.mktemp("stream")
    src = d / "big.conllu"
    src.write_text(synthetic.conllu_text(1500, 7), encoding="utf-8")
    txt = d / "big.txt"
    txt.write_text(_text(read_conllu(src), seed=3), encoding="utf-8")
    return src, txt


# a kill and a resume, three ways: 7-10 s each (measured); plain text and two jobs in the
# slow suite
@pytest.mark.parametrize("kind,jobs", [("conllu", "1"),
                                       pytest.param("text", "1", marks=pytest.mark.slow),
                                       pytest.param("conllu", "2", marks=pytest.mark.slow)])
def test_killed_parse_resumes_byte_identical(syn, big, tmp_path, kind, jobs):
    src = big[0] if kind == "conllu" else big[1]
    flags = ["--input", kind, "-m", syn.model, "--jobs", jobs, "-q"]
    ref, rep_ref = tmp_path / "ref.conllu", tmp_path / "ref.json"
    rc, _, err = run_cli(["parse", src, *flags, "-o", ref, "--report", rep_ref])
    assert rc == 0, err
    out, rep = tmp_path / "out.conllu", tmp_path / "run.json"
    state = tmp_path / "out.conllu.partial.state"
    rng = random.Random(f"{SEED}-{kind}-{jobs}")
    delays, within = [], 1.5
    # each run is killed once, then resumed (and perhaps killed again); a first run that
    # finished before its kill (a fast machine) is thrown away and run again, killed sooner
    while len(delays) < 3 and within > 0.01:
        if out.exists() and not any(d is not None for d in delays):
            out.unlink()
            rep.unlink(missing_ok=True)
            delays, within = [], within / 2
        elif out.exists():
            break
        args = ["parse", src, *flags, "-o", out, "--report", rep]
        if state.exists():
            args.append("--resume")
        delay = _kill_during(args, state, rng, within)
        delays.append(delay)
        if delay is not None and out.exists():  # killed after the rename: complete
            assert out.read_bytes() == ref.read_bytes(), "half-written output"
        elif delay is not None:
            assert (tmp_path / "out.conllu.partial").exists()
    assert any(d is not None for d in delays), f"never killed (seed {SEED})"
    if not out.exists() or state.exists():  # (a state left by a kill after the rename too)
        p = subprocess.run(_cmd("parse", src, *flags, "-o", out, "--report", rep, "--resume"),
                           capture_output=True, cwd=REPO_ROOT, env=_env(), timeout=300)
        assert p.returncode == 0, p.stderr.decode()
    assert out.read_bytes() == ref.read_bytes(), f"kills at {delays} (seed {SEED})"
    a, b = json.loads(rep_ref.read_text()), json.loads(rep.read_text())
    depparse.report.validate_report(b)
    assert [(s["file"], s["index"], s["heads"], s["certificate"]) for s in a["sentences"]] == \
        [(s["file"], s["index"], s["heads"], s["certificate"]) for s in b["sentences"]]
    assert a["summary"]["sentences"] == b["summary"]["sentences"]
    assert sorted(os.listdir(tmp_path)) == ["out.conllu", "ref.conllu", "ref.json", "run.json"]


def test_partial_output_is_not_replaced_unasked(syn, big, tmp_path):
    src = big[0]
    out = tmp_path / "out.conllu"
    state = tmp_path / "out.conllu.partial.state"
    rng = random.Random(SEED)
    delay = None
    while delay is None:
        delay = _kill_during(["parse", src, "-m", syn.model, "-o", out], state, rng)
    partial = (tmp_path / "out.conllu.partial").read_bytes()
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out])
    assert rc == 2 and "--resume" in err and "--force" in err, err
    assert (tmp_path / "out.conllu.partial").read_bytes() == partial
    # other settings: refused
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, "--resume", "--max-iter",
                          "7"])
    assert rc == 2 and "other settings" in err, err
    # --force starts again
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, "--force", "-q"])
    assert rc == 0 and out.exists() and not state.exists(), err
    # nothing to resume: says so, parses
    out.unlink()
    rc, _, err = run_cli(["parse", syn.test, "-m", syn.model, "-o", out, "--resume"])
    assert rc == 0 and "nothing to resume" in err and out.exists(), err
    rc, _, err = run_cli(["parse", syn.test, "-m", syn.model, "--resume"])
    assert rc == 2 and "--resume" in err


@pytest.mark.slow  # up to four kills of a folder run: 9-12 s (measured)
def test_killed_folder_run_resumes(syn, big, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    sents = read_conllu(big[0])
    for k in range(4):
        (corpus / f"part{k}.conllu").write_bytes(conllu_bytes(sents[300 * k:300 * k + 300]))
    ref, out = tmp_path / "ref", tmp_path / "out"
    assert run_cli(["parse", corpus, "-m", syn.model, "-o", f"{ref}/", "-q"])[0] == 0
    state = out / ".depparse-parse.partial.state"
    rng = random.Random(SEED + 5)
    killed, within = 0, 1.5
    for _ in range(8):
        args = ["parse", corpus, "-m", syn.model, "-o", f"{out}/", "-q"]
        if state.exists():
            args.append("--resume")
        if _kill_during(args, state, rng, within) is not None:
            killed += 1
        elif not killed:  # finished before its kill (a fast machine): again, killed sooner
            shutil.rmtree(out, ignore_errors=True)
            within /= 2
            continue
        if not state.exists() or killed == 4:
            break
    assert killed, f"never killed (seed {SEED})"
    p = subprocess.run(_cmd("parse", corpus, "-m", syn.model, "-o", out, "--resume"),
                       capture_output=True, cwd=REPO_ROOT, env=_env(), timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    for k in range(4):
        name = f"part{k}.conllu"
        assert (out / name).read_bytes() == (ref / name).read_bytes(), (name, SEED)
    assert sorted(os.listdir(out)) == sorted(os.listdir(ref))


def test_memory_stays_flat(syn, tmp_path):
    """The parse of 10 times the sentences holds no more memory than that of once (Python
    allocations, measured by tracemalloc in-process): no list of all sentences."""
    import tracemalloc

    one = tmp_path / "one.conllu"
    one.write_text(synthetic.conllu_text(150, 21), encoding="utf-8")
    many = tmp_path / "many.conllu"
    many.write_bytes(one.read_bytes() * 10)
    peaks = []
    run_cli(["parse", one, "-m", syn.model, "-o", tmp_path / "o.conllu", "-q"])  # warm
    for src in (one, many):
        tracemalloc.start()
        rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", tmp_path / "o.conllu",
                              "-q", "--report", tmp_path / "r.json"])
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert rc == 0, err
    assert peaks[1] < peaks[0] + 2e6, peaks  # before streaming: +10.5 MB (1,500 sentences)
    assert np.isfinite(peaks).all()


def test_jobs_keep_the_predicted_tags(syn, tmp_path):
    """Untagged input with --jobs 2: the tags the workers predicted are in the output (before
    streaming, the parent rebuilt the sentences from the untagged input and lost them)."""
    lines = []
    for line in syn.test.read_text(encoding="utf-8").split("\n"):
        cols = line.split("\t")
        if len(cols) == 10:
            cols[2] = cols[3] = "_"
        lines.append("\t".join(cols))
    src = tmp_path / "untagged.conllu"
    src.write_text("\n".join(lines), encoding="utf-8")
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}.conllu"
        rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, "--jobs", jobs])
        assert rc == 0 and "UPOS/LEMMA predicted by the model's tagger in 40 of 40" in err, err
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert [list(s.upos) for s in read_conllu(io.BytesIO(outs[1]))] == [
        list(s.upos) for s in read_conllu(syn.test)]


# ---------------------------------------------------------------------------------------
# --resume edges and a bad line late in a big file (issue 51, items 3 and 4)


def test_a_kill_after_the_first_batch_resumes_and_the_summary_splits(syn, big, tmp_path):
    """The state is committed with the first sentence written, not only after
    COMMIT_SECONDS: here commits would otherwise come once an hour, so a run killed early had
    nothing to resume.  The resumed run's summary tells the sentences it parsed from those
    parsed before; ``--resume`` on the complete output then does nothing and says so."""
    src = big[0]
    ref = tmp_path / "ref.conllu"
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", ref, "-q"])
    assert rc == 0, err
    out = tmp_path / "out.conllu"
    state = tmp_path / "out.conllu.partial.state"
    env = {**os.environ, "DEPPARSE_COMMIT_SECONDS": "3600"}
    proc = subprocess.Popen(_cmd("parse", src, "-m", syn.model, "-o", out), cwd=REPO_ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        while not state.exists() and proc.poll() is None:
            time.sleep(0.002)
        assert state.exists(), "the run ended without committing a state it could resume from"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    before = json.loads(state.read_text())["counts"]["sentences"]
    assert 1 <= before < 1500
    p = subprocess.run(_cmd("parse", src, "-m", syn.model, "-o", out, "--resume"),
                       capture_output=True, cwd=REPO_ROOT, env=env, timeout=300)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert out.read_bytes() == ref.read_bytes()
    summary = next(x for x in err.splitlines() if x.startswith("depparse: parsed "))
    assert summary.startswith(f"depparse: parsed {1500 - before:,} sentences, "), summary
    assert (f" after --resume, and {before:,} sentence{'s' if before > 1 else ''}, " in summary
            and " before it: 1,500 sentences in the output; " in summary), summary
    # the output is complete: --resume does nothing, says so, and leaves it as it is
    mtime = out.stat().st_mtime_ns
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, "--resume"])
    assert rc == 0 and f"nothing to resume: {out} is complete" in err, err
    assert "parsed" not in err and out.stat().st_mtime_ns == mtime
    assert sorted(os.listdir(tmp_path)) == ["out.conllu", "ref.conllu"]


def test_a_bad_line_late_in_a_big_file_is_found_before_parsing(syn, big, tmp_path,
                                                              monkeypatch):
    """The CoNLL-U input is read through once before the parse: a malformed line after 1,500
    good sentences stops the run before any sentence is parsed, with FILE:LINE, exit 2, and
    --skip-bad (not --input text) as what to do; nothing is written."""
    from depparse.inference.parser import Parser

    good = big[0].read_text(encoding="utf-8")
    src = tmp_path / "in.conllu"
    src.write_text(good + "# sent_id = bad\nThis line is not CoNLL-U\n\n"
                   + good[:2000].rsplit("\n\n", 1)[0] + "\n\n", encoding="utf-8")
    bad_line = good.count("\n") + 2
    parsed = []
    real = Parser.iter_parse_results

    def counted(self, *a, **kw):
        for x in real(self, *a, **kw):
            parsed.append(x)
            yield x

    monkeypatch.setattr(Parser, "iter_parse_results", counted)
    out = tmp_path / "out.conllu"
    rc, stdout, err = run_cli(["parse", src, "-m", syn.model, "-o", out])
    assert rc == 2 and "Traceback" not in err, err
    (line,) = [x for x in err.splitlines() if x.strip()]
    assert line.startswith(f"depparse: error: {src}:{bad_line}: expected 10 tab-separated "
                           "columns, found 1"), line
    assert "--skip-bad" in line and "--input text" not in line
    assert parsed == [], "sentences were parsed before the bad line was found"
    assert sorted(os.listdir(tmp_path)) == ["in.conllu"]
    # --skip-bad parses the others
    rc, _, err = run_cli(["parse", src, "-m", syn.model, "-o", out, "--skip-bad", "-q"])
    assert rc == 0 and f"skipped: {src}:{bad_line}:" in err, err
    assert len(read_conllu(out)) == 1500 + good[:2000].rsplit("\n\n", 1)[0].count("# sent_id")


def test_bad_input_met_during_the_parse_keeps_the_work_for_resume(syn, big, tmp_path):
    """stdin cannot be read before the parse: a bad line in it is met during the parse.  The
    sentences parsed before it are kept (OUT.partial and its state, not deleted), the message
    says so and how to go on; --resume then reads stdin again, mended after them (or with
    --skip-bad), and writes the bytes of a run that was never stopped; stdin whose start
    differs is refused."""
    good = big[0].read_bytes()
    tail = synthetic.conllu_text(20, 9).encode("utf-8")
    bad = good + b"# sent_id = bad\n1\tno HEAD column here\n\n" + tail
    mended = good + b"# sent_id = bad\n" + tail.split(b"\n\n", 1)[0].split(b"\n", 1)[1] \
        + b"\n\n" + tail
    bad_line = good.count(b"\n") + 2
    out = tmp_path / "out.conllu"
    state = tmp_path / "out.conllu.partial.state"
    flags = ["-m", syn.model, "-o", out]

    def stop():
        rc, _, err = run_cli(["parse", "-", *flags], stdin=bad)
        assert rc == 2 and "Traceback" not in err, err
        (line,) = [x for x in err.splitlines() if x.strip()]
        assert line.startswith(f"depparse: error: <stdin>:{bad_line}: expected 10 "), line
        assert "--skip-bad" in line and "are kept (" in line and "--resume" in line, line
        assert state.exists() and (tmp_path / "out.conllu.partial").exists()
        kept = json.loads(state.read_text())
        assert kept["stopped"]["line"] < bad_line and kept["counts"]["sentences"] > 0
        return kept["counts"]["sentences"]

    for data, extra in ((mended, []), (bad, ["--skip-bad"])):
        ref = tmp_path / "ref.conllu"
        rc, _, err = run_cli(["parse", "-", "-m", syn.model, "-o", ref, "-q", *extra],
                             stdin=data)
        assert rc == 0, err
        n = stop()
        rc, _, err = run_cli(["parse", "-", *flags, "--resume", *extra], stdin=data)
        assert rc == 0, err
        assert f"after --resume, and {n:,} sentences, " in err, err
        assert out.read_bytes() == ref.read_bytes(), extra
        assert not state.exists()
        out.unlink()
    stop()
    rc, _, err = run_cli(["parse", "-", *flags, "--resume"], stdin=b"# other\n" + mended)
    assert rc == 2 and "<stdin>: not the input of the stopped run" in err, err
