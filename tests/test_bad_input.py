"""Catalogue of bad input, run through the command line.

Every case must end with ONE error line ``depparse: error: FILE:LINE: message`` (the line
where there is one), exit status 2 (1 for internal errors), no traceback unless ``--debug``,
and no partial output: the output path is absent, or untouched when it existed.  Recoverable
input (byte-order mark, CRLF) is accepted with a one-line warning.  ``--skip-bad`` parses
the good sentences and lists the bad ones on stderr.

Most cases run ``depparse.cli.main`` in-process; a few run ``python -m depparse.cli`` to see
the real stderr of a process.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import re
import subprocess

import numpy as np
import pytest
from fixtures_models import long_sentence, run_cli, run_subprocess

from depparse.conllu import read_conllu
from depparse.decode.trees import validate_tree
from depparse.inference.engine import Engine

W = [  # a valid 4-word sentence, one line per word
    "1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_",
    "2\tdog\tdog\tNOUN\t_\t_\t3\tnsubj\t_\t_",
    "3\tsees\tsees\tVERB\t_\t_\t0\troot\t_\t_",
    "4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_",
]
GOOD = "# sent_id = good\n" + "\n".join(W) + "\n\n"


def sent(*lines, comment="# sent_id = bad"):
    return comment + "\n" + "\n".join(lines) + "\n\n"


def col(line, k, value):
    c = line.split("\t")
    c[k] = value
    return "\t".join(c)


# (id, file content, line of the error or None, a word of the message).  The bad sentence
# follows a good one (6 lines), so its comment is line 7 and its first word line 8.
PARSE_CASES = [
    ("not-conllu-line", GOOD + sent(W[0], "this is not conllu", *W[2:]), 9, "columns"),
    ("9-columns", GOOD + sent(W[0], W[1].rsplit("\t", 1)[0], *W[2:]), 9, "columns"),
    ("11-columns", GOOD + sent(W[0] + "\t_", *W[1:]), 8, "columns"),
    ("spaces-not-tabs", GOOD + sent(W[0].replace("\t", "   "), *W[1:]), 8, "columns"),
    ("empty-column", GOOD + sent(col(W[0], 2, ""), *W[1:]), 8, "empty"),
    ("non-integer-id", GOOD + sent(col(W[0], 0, "x"), *W[1:]), 8, "ID"),
    ("non-canonical-id", GOOD + sent(col(W[0], 0, "01"), *W[1:]), 8, "ID"),
    ("duplicate-id", GOOD + sent(W[0], W[1], col(W[2], 0, "2"), W[3]), 10, "duplicate"),
    ("non-sequential-id", GOOD + sent(W[0], W[1], col(W[2], 0, "4")), 10, "sequence"),
    ("id-zero", GOOD + sent(col(W[0], 0, "0"), *W[1:]), 8, "root"),
    ("mwt-start-after-end", GOOD + sent("3-2\tx\t_\t_\t_\t_\t_\t_\t_\t_", *W), 8, "range"),
    ("mwt-not-at-next-word", GOOD + sent(W[0], "3-4\tx\t_\t_\t_\t_\t_\t_\t_\t_", *W[1:]), 9,
     "multiword"),
    ("mwt-past-the-end", GOOD + sent(*W[:3], "4-5\tx\t_\t_\t_\t_\t_\t_\t_\t_", W[3]), 11,
     "multiword"),
    ("empty-node-out-of-place", GOOD + sent(W[0], "3.1\tx\t_\t_\t_\t_\t_\t_\t_\t_", *W[1:]),
     9, "empty node"),
    ("comment-inside-sentence", GOOD + sent(W[0], W[1], "# oops", *W[2:]), 10, "comment"),
    ("head-out-of-range", GOOD + sent(W[0], col(W[1], 6, "9"), *W[2:]), 9, "HEAD"),
    ("head-not-integer", GOOD + sent(W[0], col(W[1], 6, "x"), *W[2:]), 9, "HEAD"),
    ("head-negative", GOOD + sent(W[0], col(W[1], 6, "-1"), *W[2:]), 9, "HEAD"),
    ("comments-only", GOOD + "# sent_id = nothing\n# text = \n\n", 7, "no syntactic words"),
    ("conllu-plus-columns", "# global.columns = ID FORM UPOS\n" + "\n".join(W) + "\n\n", 1,
     "columns"),
]

NON_UTF8 = GOOD.encode() + b"# sent_id = bad\n1\tdo\xffg\tdog\tNOUN\t_\t_\t0\troot\t_\t_\n\n"


def error_line(err):
    lines = [x for x in err.splitlines() if x.strip()]
    errs = [x for x in lines if x.startswith("depparse: error: ")]
    assert len(errs) == 1, err
    assert len(lines) == 1, f"expected a single line on stderr, got:\n{err}"
    assert "Traceback" not in err
    return errs[0]


def assert_bad(rc, err, path=None, line=None, word=None, status=2):
    assert rc == status, err
    msg = error_line(err)
    if path is not None:
        where = f"{path}:{line}:" if line is not None else f"{path}:"
        assert where in msg, msg
    if word is not None:
        assert word.lower() in msg.lower(), msg
    return msg


# ---------------------------------------------------------------------------------------
# malformed CoNLL-U given to `depparse parse`


@pytest.mark.parametrize("name,text,line,word", PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_parse_rejects(syn, tmp_path, name, text, line, word):
    src = tmp_path / "in.conllu"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.conllu"
    rc, stdout, err = run_cli(["parse", src, "--model", syn.model, "-o", out])
    assert_bad(rc, err, src, line, word)
    assert not out.exists()
    assert stdout == b""
    assert os.listdir(tmp_path) == ["in.conllu"], "temporary files left behind"


@pytest.mark.parametrize("kind", ["conllu", "text"])
@pytest.mark.parametrize("text", ["", "\n\n   \n"])
def test_parse_accepts_a_file_without_sentences(syn, tmp_path, text, kind):
    """An empty CoNLL-U file is valid (the UD validator accepts it): empty output, exit 0,
    and stderr says that the file had no sentences (issue 25)."""
    src = tmp_path / "in.conllu"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.conllu"
    flags = ["--input", "text"] if kind == "text" else []
    rc, stdout, err = run_cli(["parse", src, "--model", syn.model, "-o", out, *flags])
    assert rc == 0, err
    assert out.read_bytes() == b""
    assert f"depparse: warning: no sentences in {src}" in err.splitlines()
    assert "parsed 0 sentences, 0 words" in err
    assert err.rstrip().endswith("proved optimal 0/0"), err  # no empty list of proof kinds
    rc, stdout, err = run_cli(["parse", src, "--model", syn.model, *flags])
    assert rc == 0 and stdout == b"", err
    assert f"no sentences in {src}" in err


def test_parse_rejects_non_utf8(syn, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_bytes(NON_UTF8)
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", out])
    assert_bad(rc, err, src, 8, "UTF-8")
    assert not out.exists()


def test_existing_output_is_untouched_on_error(syn, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text(PARSE_CASES[0][1], encoding="utf-8")
    out = tmp_path / "out.conllu"
    out.write_bytes(b"old\n")
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", out])
    assert_bad(rc, err, src, 9)
    assert out.read_bytes() == b"old\n"


def test_missing_and_folder_inputs(syn, tmp_path):
    rc, _, err = run_cli(["parse", tmp_path / "nope.conllu", "--model", syn.model])
    assert_bad(rc, err, tmp_path / "nope.conllu", None, "no such file")
    rc, _, err = run_cli(["parse", tmp_path, "--model", syn.model])
    assert_bad(rc, err, tmp_path, None, "folder")


def test_bad_stdin(syn):
    rc, stdout, err = run_cli(["parse", "-", "--model", syn.model], stdin=NON_UTF8)
    assert_bad(rc, err, "<stdin>", 8, "UTF-8")
    assert stdout == b""
    rc, stdout, err = run_cli(["parse", "-", "--model", syn.model], stdin=b"")
    assert rc == 0 and stdout == b"" and "parsed 0 sentences" in err, err


# ---------------------------------------------------------------------------------------
# training data without a valid tree: `depparse train`

TRAIN_CASES = [
    ("cycle", sent(W[0], col(W[1], 6, "4"), W[2], col(W[3], 6, "2")), "cycle"),
    ("several-roots", sent(W[0], col(W[1], 6, "0"), *W[2:]), "root"),
    ("self-loop", sent(W[0], col(W[1], 6, "2"), *W[2:]), "own head"),
    ("no-gold-head", sent(W[0], col(W[1], 6, "_"), *W[2:]), "no gold HEAD"),
]


@pytest.mark.parametrize("name,text,word", TRAIN_CASES, ids=[c[0] for c in TRAIN_CASES])
def test_train_rejects(tmp_path, name, text, word):
    src = tmp_path / "train.conllu"
    src.write_text(GOOD + text, encoding="utf-8")
    out = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--model", "sib", "--train", src, "--out", out,
                          "--bits", "12", "--epochs", "1"])
    line = 9 if name == "no-gold-head" else 7
    msg = assert_bad(rc, err, src, line, word)
    if name == "several-roots":
        assert "--multi-root" in msg
    assert not out.exists() and not (tmp_path / "m.npz.ckpt.npz").exists()


def test_train_bad_dev_and_empty_train(tmp_path):
    tr = tmp_path / "train.conllu"
    tr.write_text(GOOD, encoding="utf-8")
    dev = tmp_path / "dev.conllu"
    dev.write_text(GOOD + TRAIN_CASES[0][1], encoding="utf-8")
    out = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--model", "sib", "--train", tr, "--dev", dev, "--out",
                          out, "--bits", "12", "--epochs", "1"])
    assert_bad(rc, err, dev, 7, "dev sentence")
    empty = tmp_path / "empty.conllu"
    empty.write_bytes(b"")
    rc, _, err = run_cli(["train", "--recipe", "none", "--train", empty, "--out", out])
    assert_bad(rc, err, empty, None, "no sentences")
    assert not out.exists()


def test_train_corrupt_checkpoint_on_resume(syn, tmp_path):
    out = tmp_path / "m.npz"
    ck = tmp_path / "m.npz.ckpt.npz"
    ck.write_bytes(b"garbage")
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--model", "sib", "--train", syn.train, "--out", out,
                          "--bits", "12", "--epochs", "1", "--resume"])
    assert_bad(rc, err, ck, None, "checkpoint")
    assert not out.exists()


# ---------------------------------------------------------------------------------------
# recoverable or unusual but valid input: accepted


def _parse_ok(syn, tmp_path, data: bytes, *extra):
    src = tmp_path / "in.conllu"
    src.write_bytes(data)
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", out, *extra])
    assert rc == 0, err
    assert "Traceback" not in err and "error" not in err
    return out.read_bytes(), err


@pytest.mark.filterwarnings("ignore::depparse.conllu.ConlluWarning")
def test_bom_accepted_with_warning(syn, tmp_path):
    data, err = _parse_ok(syn, tmp_path, ("\ufeff" + GOOD).encode())
    warn = [x for x in err.splitlines() if x.startswith("depparse: warning:")]
    assert len(warn) == 1 and "byte-order mark" in warn[0] and ":1:" in warn[0]
    assert data.startswith("\ufeff".encode())
    assert validate_tree(read_conllu(io.BytesIO(data))[0], single_root=True) is None


def test_crlf_accepted_with_warning(syn, tmp_path):
    data, err = _parse_ok(syn, tmp_path, (GOOD + GOOD).replace("\n", "\r\n").encode())
    warn = [x for x in err.splitlines() if x.startswith("depparse: warning:")]
    assert len(warn) == 1 and "CRLF" in warn[0]
    assert data.count(b"\r\n") == data.count(b"\n")  # line ends kept


def test_missing_final_blank_line(syn, tmp_path):
    text = (GOOD + GOOD.rstrip("\n")).encode()
    data, _ = _parse_ok(syn, tmp_path, text)
    assert not data.endswith(b"\n\n")
    assert len(read_conllu(io.BytesIO(data))) == 2


def test_only_punctuation(syn, tmp_path):
    text = "".join(f"{i}\t{p}\t{p}\tPUNCT\t_\t_\t_\t_\t_\t_\n" for i, p in
                   enumerate([".", ",", "!", "?", "..."], 1)) + "\n"
    data, _ = _parse_ok(syn, tmp_path, text.encode())
    s = read_conllu(io.BytesIO(data))[0]
    assert validate_tree(s, single_root=True) is None


def test_very_long_sentence(syn, tmp_path):
    data, _ = _parse_ok(syn, tmp_path, long_sentence(400, seed=2).encode(),
                        "--time-limit", "0.5")
    s = read_conllu(io.BytesIO(data))[0]
    assert s.n == 400 and validate_tree(s, single_root=True) is None


def test_unknown_upos_and_words(syn, tmp_path):
    text = "".join(f"{i}\t{w}\t{w}\t{u}\t_\tFoo=Bar\t_\t_\t_\t_\n" for i, (w, u) in
                   enumerate([("zyx", "FOO"), ("ünïcödé", "BAR"), ("😀", "_")], 1)) + "\n"
    data, _ = _parse_ok(syn, tmp_path, text.encode())
    assert validate_tree(read_conllu(io.BytesIO(data))[0], single_root=True) is None


# ---------------------------------------------------------------------------------------
# --skip-bad


def test_skip_bad(syn, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_bytes(GOOD.encode() + PARSE_CASES[0][1][len(GOOD):].encode() + GOOD.encode()
                    + NON_UTF8[len(GOOD):] + GOOD.encode() + PARSE_CASES[15][1][len(GOOD):]
                    .encode())
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", out, "--skip-bad"])
    assert rc == 0, err
    skipped = [x for x in err.splitlines() if x.startswith("depparse: skipped:")]
    assert len(skipped) == 3, err
    lines = [int(re.search(rf"{re.escape(str(src))}:(\d+):", x).group(1)) for x in skipped]
    assert lines == [9, 20, 30]  # the bad line of each bad sentence
    assert "skipped 3 malformed sentences" in err
    sents = read_conllu(out)
    assert [s.sent_id for s in sents] == ["good"] * 3
    for s in sents:
        assert validate_tree(s, single_root=True) is None
    # all bad: an error
    src.write_text(PARSE_CASES[0][1][len(GOOD):], encoding="utf-8")
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", out, "--skip-bad"])
    assert rc == 2 and "no sentence to parse" in err


# ---------------------------------------------------------------------------------------
# model files


def _model_variants(model_path, d):
    data = model_path.read_bytes()
    out = {}
    out["truncated"] = data[: len(data) // 2]
    b = bytearray(data)
    for i in range(200, 260):  # inside the first compressed member
        b[i] ^= 0x55
    out["corrupted"] = bytes(b)
    b = bytearray(data)
    for i in range(len(b) // 3, len(b) // 3 + 64):
        b[i] ^= 0xFF
    out["corrupted-late"] = bytes(b)
    out["empty"] = b""
    out["not-a-model"] = b"hello, I am not a model\n"
    with np.load(model_path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["version"] = meta["version"] + 1
    buf = io.BytesIO()
    np.savez(buf, **{**arrays, "meta": np.frombuffer(json.dumps(meta).encode(), np.uint8)})
    out["newer-version"] = buf.getvalue()
    buf = io.BytesIO()
    np.savez(buf, **{k: v for k, v in arrays.items() if k != "meta"})
    out["no-metadata"] = buf.getvalue()
    paths = {}
    for k, v in out.items():
        p = d / f"{k}.npz"
        p.write_bytes(v)
        paths[k] = p
    return paths


MODEL_CASES = ["truncated", "corrupted", "corrupted-late", "empty", "not-a-model",
               "newer-version", "no-metadata"]


@pytest.fixture(scope="module")
def bad_models(syn, tmp_path_factory):
    return _model_variants(syn.model, tmp_path_factory.mktemp("badmodels"))


@pytest.mark.parametrize("kind", MODEL_CASES)
def test_bad_model_file(syn, bad_models, tmp_path, kind):
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", syn.test, "--model", bad_models[kind], "-o", out])
    msg = assert_bad(rc, err, bad_models[kind])
    if kind == "newer-version":
        assert "newer" in msg
    assert not out.exists()


def test_missing_model(syn, tmp_path):
    rc, _, err = run_cli(["parse", syn.test, "--model", tmp_path / "none.npz"])
    assert_bad(rc, err, tmp_path / "none.npz", None, "not found")


# ---------------------------------------------------------------------------------------
# output that cannot be written


def test_output_folder_missing(syn, tmp_path):
    out = tmp_path / "no" / "such" / "out.conllu"
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out])
    assert_bad(rc, err, out, None, "does not exist")
    f = tmp_path / "file.txt"
    f.write_text("x")
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", f / "out.conllu"])
    assert_bad(rc, err, f / "out.conllu")
    rc, _, err = run_cli(["train", "--recipe", "none",
                          "--train", syn.train, "--out", tmp_path / "no" / "m.npz"])
    assert_bad(rc, err, tmp_path / "no" / "m.npz", None, "does not exist")


def test_output_is_a_folder(syn, tmp_path):
    """An existing folder given as -o gets one output per input (issue 27); a file given
    where a folder is meant (a name ending in '/') is an error."""
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", tmp_path, "-q"])
    assert rc == 0, err
    assert run_cli(["parse", syn.test, "--model", syn.model, "-o", tmp_path / "ref.conllu",
                    "-q"])[0] == 0
    assert (tmp_path / syn.test.name).read_bytes() == (tmp_path / "ref.conllu").read_bytes()
    f = tmp_path / "file"
    f.write_text("x")
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", f"{f}/"])
    assert_bad(rc, err, f"{f}/", None, "not a folder")
    assert f.read_text() == "x"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root may write into read-only folders")
def test_output_folder_read_only(syn, tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", d / "o.conllu"])
        assert_bad(rc, err, d / "o.conllu", None, "not writable")
    finally:
        d.chmod(0o700)


def test_report_folder_missing_fails_before_parsing(syn, tmp_path):
    out = tmp_path / "out.conllu"
    rep = tmp_path / "no" / "rep.json"
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "--report", rep])
    assert_bad(rc, err, rep)
    assert not out.exists()


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("fn", ["replace", "fsync"])
def test_failing_write(syn, tmp_path, monkeypatch, fn):
    out = tmp_path / "out.conllu"
    # first without the failure: the kernels are loaded (a cold numba cache would be
    # written with os.replace, which fails below)
    assert run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "-q"])[0] == 0
    out.write_bytes(b"old\n")
    monkeypatch.setattr(os, fn, _enospc)
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out])
    # the state for --resume, committed with the first sentence, is the first file to fail
    # with "replace" (written atomically); the output with "fsync"
    msg = assert_bad(rc, err, None, None, "No space left")
    assert msg.startswith((f"depparse: error: {out}: ",
                           f"depparse: error: {out}.partial.state: ")), msg
    assert out.read_bytes() == b"old\n"
    assert sorted(os.listdir(tmp_path)) == ["out.conllu"], "temporary file left behind"


@pytest.mark.parametrize("fn", ["replace", "fsync"])
def test_failing_model_write(syn, tmp_path, monkeypatch, fn):
    out = tmp_path / "m.npz"
    # --no-tagger: the synthetic data has no XPOS/FEATS, which the tagger would warn about
    args = ["train", "--recipe", "none",
            "--model", "mst", "--train", syn.dev, "--bits", "12", "--epochs", "1",
            "--no-labeler", "--no-tagger", "-q"]
    warm = tmp_path / "warm" / "m.npz"  # kernels loaded before os.replace/fsync fail
    warm.parent.mkdir()
    assert run_cli([*args, "--out", warm])[0] == 0
    monkeypatch.setattr(os, fn, _enospc)
    rc, _, err = run_cli([*args, "--out", out])
    # the checkpoint, written after each epoch, is the first file to fail
    assert_bad(rc, err, f"{out}.ckpt.npz", None, "No space left")
    assert not out.exists()
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_failing_report_write(syn, tmp_path, monkeypatch):
    from depparse.report.report_writer import ReportWriter

    out, rep = tmp_path / "out.conllu", tmp_path / "rep.json"
    real = ReportWriter.add

    def add(self, *args):
        if self.entries == 3:  # the report's disk is full after three sentences
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args)

    monkeypatch.setattr(ReportWriter, "add", add)
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "--report", rep])
    assert_bad(rc, err, rep, None, "No space left")
    assert not rep.exists() and not out.exists()
    assert sorted(os.listdir(tmp_path)) == [], "partial files left behind"


def test_internal_error_exit_1(syn, tmp_path, monkeypatch):
    def boom(self, s, **kw):
        raise RuntimeError("unexpected\nsecond line")

    monkeypatch.setattr(Engine, "parse_one", boom)
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", out])
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("depparse: internal error: RuntimeError")
    assert not out.exists()
    with pytest.raises(RuntimeError):
        run_cli(["parse", syn.test, "--model", syn.model, "-o", out, "--debug"])


# ---------------------------------------------------------------------------------------
# real processes: nothing but the one line on stderr


def test_subprocess_errors_have_no_traceback(syn, bad_models, tmp_path):
    src = tmp_path / "bad.conllu"
    src.write_text(PARSE_CASES[0][1], encoding="utf-8")
    out = tmp_path / "out.conllu"
    p = run_subprocess(["parse", src, "--model", syn.model, "-o", out])
    assert_bad(p.returncode, p.stderr.decode(), src, 9)
    p = run_subprocess(["parse", syn.test, "--model", bad_models["truncated"], "-o", out])
    assert_bad(p.returncode, p.stderr.decode(), bad_models["truncated"])
    tr = tmp_path / "train.conllu"
    tr.write_text(GOOD + TRAIN_CASES[0][1], encoding="utf-8")
    p = run_subprocess(["train", "--recipe", "none", "--train", tr, "--out", tmp_path / "m.npz"])
    assert_bad(p.returncode, p.stderr.decode(), tr, 7, "cycle")
    p = run_subprocess(["parse", "-", "--model", syn.model], stdin=NON_UTF8)
    assert_bad(p.returncode, p.stderr.decode(), "<stdin>", 8)
    assert p.stdout == b""
    assert not out.exists()
    # --debug shows the traceback
    p = run_subprocess(["parse", src, "--model", syn.model, "-o", out, "--debug"])
    assert p.returncode != 0 and b"Traceback" in p.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_subprocess_full_disk_on_stdout(syn):
    with open("/dev/full", "wb") as full:
        p = run_subprocess(["parse", syn.test, "--model", syn.model], stdout=full,
                           stderr=subprocess.PIPE)
    err = p.stderr.decode()
    assert_bad(p.returncode, err, "<stdout>", None, "No space left")


# ---------------------------------------------------------------------------------------
# issue 25: input of the wrong kind, outputs that are not plain files, output = input

# (id, bytes of the file, a word of the message, what to do that the message names)
KIND_CASES = [
    ("utf16-bom", GOOD.encode("utf-16"), "UTF-16", "iconv -f UTF-16 -t UTF-8"),
    ("utf16-no-bom", GOOD.encode("utf-16-le"), "UTF-16", "iconv -f UTF-16LE -t UTF-8"),
    ("utf32-bom", GOOD.encode("utf-32"), "UTF-32", "iconv -f UTF-32 -t UTF-8"),
    ("gzip", gzip.compress(GOOD.encode()), "gzip", "zcat"),
    ("binary", bytes(range(256)) * 8, "binary", "CoNLL-U or plain-text"),
]


@pytest.mark.parametrize("kind", ["conllu", "text"])
@pytest.mark.parametrize("name,data,word,todo", KIND_CASES, ids=[c[0] for c in KIND_CASES])
def test_files_that_are_not_utf8_text_say_what_they_are(
        syn, tmp_path, name, data, word, todo, kind):
    src = tmp_path / "in.conllu"
    src.write_bytes(data)
    out = tmp_path / "out.conllu"
    flags = ["--input", "text"] if kind == "text" else []
    rc, stdout, err = run_cli(["parse", src, "--model", syn.model, "-o", out, *flags])
    msg = assert_bad(rc, err, src, 1, word)
    assert todo in msg, msg
    assert not out.exists() and stdout == b""
    assert os.listdir(tmp_path) == ["in.conllu"]


def test_conllu_given_as_text_is_refused(syn, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_text(GOOD + GOOD, encoding="utf-8")
    out = tmp_path / "out.conllu"
    rc, _, err = run_cli(["parse", "--input", "text", src, "--model", syn.model, "-o", out])
    msg = assert_bad(rc, err, src, 2, "CoNLL-U")
    assert "--input conllu" in msg
    assert not out.exists()
    # prose with tabs is text all the same
    src.write_text("The\tdog sleeps .\nA cat\truns .\n", encoding="utf-8")
    rc, _, err = run_cli(["parse", "--input", "text", src, "--model", syn.model, "-o", out])
    assert rc == 0, err


def test_dash_output_is_stdout(syn, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, stdout, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", "-"])
    assert rc == 0, err
    rc2, ref, _ = run_cli(["parse", syn.test, "--model", syn.model])
    assert stdout == ref and len(read_conllu(io.BytesIO(stdout))) == 40
    assert os.listdir(tmp_path) == [], "a file named '-' was written"


def test_dev_stdout_into_a_pipe_and_a_terminal(syn, tmp_path):
    p = run_subprocess(["parse", syn.test, "--model", syn.model, "-o", "/dev/stdout", "-q"])
    assert p.returncode == 0, p.stderr.decode()
    ref = run_cli(["parse", syn.test, "--model", syn.model, "-q"])[1]  # into stdout
    assert p.stdout == ref and ref
    # on a terminal (a pseudo-terminal)
    import pty

    master, slave = pty.openpty()
    try:
        p = run_subprocess(["parse", syn.test, "--model", syn.model, "-o", "/dev/stdout", "-q"],
                           stdout=slave, stderr=subprocess.PIPE)
        os.close(slave)
        got = b""
        while True:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    finally:
        os.close(master)
    assert p.returncode == 0, p.stderr.decode()
    # (colorama, which numba loads, resets the colours of a terminal at exit: ESC [0m)
    assert got.replace(b"\r\n", b"\n").removesuffix(b"\x1b[0m") == ref


def test_special_files_are_written_in_place(syn, tmp_path):
    """A FIFO and a character device given as -o are written to, never replaced (in-process:
    the CLI's own path to its outputs; the subprocess tests above cover the exit paths)."""
    import stat
    import threading

    ref = run_cli(["parse", syn.test, "--model", syn.model])[1]
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", fifo, "-q"])
    reader.join(timeout=60)
    assert rc == 0, err
    assert got == [ref] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    null = tmp_path / "null"  # a twin of /dev/null (major 1, minor 3)
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    for extra in ([], ["--report", tmp_path / "r.json"]):
        rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", null, *extra])
        assert rc == 0, err
        assert stat.S_ISCHR(os.stat(null).st_mode), "the device node was replaced"
    # the report can go to a device too
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "-o", null, "--report", null])
    assert rc == 2 and "also the output" in err
    rc, _, err = run_cli(["parse", syn.test, "--model", syn.model, "--report", null, "-q"])
    assert rc == 0 and stat.S_ISCHR(os.stat(null).st_mode), err


def test_output_that_is_an_input_is_refused(syn, tmp_path):
    src = tmp_path / "in.conllu"
    src.write_bytes(syn.test.read_bytes())
    (tmp_path / "link.conllu").symlink_to(src)
    (tmp_path / "sub").mkdir()
    for out in (src, tmp_path / "link.conllu", tmp_path / "sub" / ".." / "in.conllu"):
        rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", out])
        msg = assert_bad(rc, err, out, None, "input")
        assert "--in-place" in msg and "--force" in msg
        assert src.read_bytes() == syn.test.read_bytes()
    # into a folder holding the input
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "-o", f"{tmp_path}/"])
    assert_bad(rc, err, None, None, "--in-place")
    # and the report
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "--report", src])
    assert_bad(rc, err, src, None, "input")
    assert src.read_bytes() == syn.test.read_bytes()
    # asked for: the input is replaced by its parse
    ref = run_cli(["parse", src, "--model", syn.model])[1]
    assert run_cli(["parse", src, "--model", syn.model, "-o", src, "--force", "-q"])[0] == 0
    assert src.read_bytes() == ref
    src.write_bytes(syn.test.read_bytes())
    rc, _, err = run_cli(["parse", src, "--model", syn.model, "--in-place"])
    assert rc == 0 and src.read_bytes() == ref, err
    assert sorted(os.listdir(tmp_path)) == ["in.conllu", "link.conllu", "sub"]
