"""The command line as a user meets it: help with examples and defaults, one name per idea
(old spellings kept as aliases), --version, messages, training logs and summaries."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest
from fixtures_models import run_cli

import depparse
from depparse.conllu import read_conllu

COMMANDS = ("train", "parse", "evaluate", "report", "serve", "show")


def _help(*args):
    with pytest.raises(SystemExit) as e:
        run_cli([*args, "--help"])
    assert e.value.code == 0


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_help_has_an_example_and_its_defaults(command, capsys):
    from depparse.cli import build_parser

    ap = build_parser()
    sub = next(a for a in ap._actions if a.dest == "command").choices[command]
    text = sub.format_help()
    assert "examples:" in text and f"depparse {command} " in text.split("examples:")[1]
    # every option with a value says its default; every positional says what it is
    for a in sub._actions:
        if a.help is None or a.help == "==SUPPRESS==" or a.dest == "help":
            continue
        if a.option_strings and a.nargs != 0:
            assert "default" in a.help or "required" in a.help, (command, a.option_strings)
        if not a.option_strings:
            assert a.help, (command, a.dest)


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        from depparse.cli import main

        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"depparse {depparse.__version__}"


def test_multi_root_has_help():
    from depparse.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command").choices["parse"]
    a = next(a for a in sub._actions if "--multi-root" in a.option_strings)
    assert "several words attached to the root" in a.help


def test_old_and_new_flag_names_train_the_same_model(syn, tmp_path):
    new, old = tmp_path / "new.npz", tmp_path / "old.npz"
    common = ["--model", "sib", "--epochs", "1", "--bits", "12", "--no-labeler", "-q"]
    assert run_cli(["train", "--recipe", "none", syn.train, "-o", new, *common])[0] == 0
    assert run_cli(["train", "--recipe", "none",
                    "--train", syn.train, "--out", old, *common])[0] == 0
    a, b = depparse.load(new).model, depparse.load(old).model
    assert (a.weights == b.weights).all() and (a.pruner == b.pruner).all()
    rc, _, err = run_cli(["train", "--recipe", "none", "-o", new])
    assert rc == 2 and "training file is missing" in err


def test_report_and_evaluate_aliases(syn, tmp_path):
    out, rep = tmp_path / "out.conllu", tmp_path / "run.json"
    assert run_cli(["parse", syn.test, "-m", syn.model, "-o", out, "--report", rep,
                    "-q"])[0] == 0
    for flag in ("--parse-report", "--report"):
        rc, stdout, err = run_cli(["evaluate", syn.test, out, flag, rep])
        assert rc == 0, err
        assert "certified" in stdout.decode()
    for flag in ("-o", "--output", "--out-dir"):
        rc, _, err = run_cli(["report", rep, flag, tmp_path / flag.strip("-")])
        assert rc == 0, err
        assert (tmp_path / flag.strip("-") / "index.html").is_file()


def test_evaluate_text_shows_sentences_and_las_without_punct(syn, tmp_path):
    out = tmp_path / "out.conllu"
    assert run_cli(["parse", syn.test, "-m", syn.model, "-o", out, "-q"])[0] == 0
    rc, stdout, err = run_cli(["evaluate", syn.test, out])
    assert rc == 0, err
    text = stdout.decode()
    n = len(read_conllu(syn.test))
    assert f"{n} sentences" in text
    rows = {line.split("  ")[0].strip(): line for line in text.splitlines()}
    for name in ("UAS", "LAS", "UAS (no punct)", "LAS (no punct)"):
        assert name in rows, text
    # aligned: every score starts in the same column
    cols = {re.search(r"\d+\.\d\d", rows[k]).start() for k in ("UAS", "LAS", "UAS (no punct)")}
    assert len(cols) == 1, text


def test_unknown_model_lists_the_shipped_ones(syn, tmp_path):
    rc, _, err = run_cli(["parse", syn.test, "-m", "klingon"])
    assert rc == 2 and "installed models:" in err and "en_ewt_gs" in err
    assert "make dist model-packages" in err  # how to get the others


def test_plain_text_given_as_conllu_gets_a_hint(syn, tmp_path):
    src = tmp_path / "plain.txt"
    src.write_text("The cat sat on the mat.\n", encoding="utf-8")
    rc, _, err = run_cli(["parse", src, "-m", syn.model])
    assert rc == 2 and f"{src}:1:" in err and "CoNLL-U" in err and "10 tab-separated" in err


def test_summary_line_counts_in_words(syn, tmp_path):
    one = tmp_path / "one.conllu"
    one.write_text(syn.test.read_text(encoding="utf-8").split("\n\n")[0] + "\n\n",
                   encoding="utf-8")
    rc, _, err = run_cli(["parse", one, "-m", syn.model, "-o", tmp_path / "o.conllu"])
    assert rc == 0 and "parsed 1 sentence, " in err, err


def test_training_log_is_plain_and_ends_with_a_summary_table(syn, tmp_path):
    model = tmp_path / "m.npz"
    rc, _, err = run_cli(["train", "--recipe", "none",
                          syn.train, "--dev", syn.dev, "-o", model, "--model", "sib",
                          "--epochs", "2", "--bits", "14", "--labeler-epochs", "1"])
    assert rc == 0, err
    assert "\r" not in err  # no progress bar when stderr is not a terminal
    assert "jackknife pruner 1/4" in err and "jackknife pruner 4/4" in err
    assert re.search(r"training sentences parsed wrong [\d.]+% \(\d+ of 200\)", err), err
    table = err[err.index("training summary"):]
    assert re.search(r"^\s+1\s+[\d.]+\s+[\d.]+\s+[\d.]+%\s+\d+$", table, re.M), table
    assert re.search(r"^\s+2\s+[\d.]+\s+[\d.]+\s+[\d.]+%\s+\d+$", table, re.M), table
    assert re.search(r"final model on dev .*at most 5,000 iterations.*UAS [\d.]+, LAS [\d.]+",
                     table), table
    # the checkpoint is removed once the model is written, and the log says so
    assert not (tmp_path / "m.npz.ckpt.npz").exists() and "checkpoint" in err
    rc, _, err = run_cli(["train", "--recipe", "none",
                          syn.train, "-o", model, "--model", "sib", "--epochs", "1",
                          "--bits", "14", "--no-labeler", "--keep-checkpoint"])
    assert rc == 0 and (tmp_path / "m.npz.ckpt.npz").exists() and "checkpoint kept" in err


def test_labeler_epochs_follow_epochs_by_default(syn, tmp_path):
    rc, _, err = run_cli(["train", "--recipe", "none",
                          syn.train, "-o", tmp_path / "m.npz", "--model", "sib",
                          "--epochs", "2", "--bits", "14"])
    assert rc == 0, err
    assert "labeler epoch 2/2" in err and "labeler epoch 3/" not in err


def test_report_html_explains_certificates_and_shows_las(syn, tmp_path):
    from depparse.report.render import INTRO

    rep = tmp_path / "run.json"
    assert run_cli(["parse", syn.test, "-m", syn.model, "-o", tmp_path / "o.conllu",
                    "--report", rep, "-q"])[0] == 0
    assert run_cli(["report", rep, "-o", tmp_path / "html"])[0] == 0
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "highest-scoring tree" in INTRO and html.escape(INTRO.split(".")[0]) in page
    summary = json.loads((tmp_path / "html" / "summary.json").read_text())
    assert summary["las"] is not None and f"{summary['las']:.2f}" in page
    assert "LAS (punctuation included)" in page
    # labels say the 1-based sentence number, not a 0-based index
    assert "#0" not in page and "sentence 1" in page or summary["hardest"] == []
    # the same report from a blank-label input has no LAS
    rep2 = tmp_path / "run2.json"
    assert run_cli(["parse", syn.test_blank, "-m", syn.model, "-o", tmp_path / "o2.conllu",
                    "--report", rep2, "-q"])[0] == 0
    assert run_cli(["report", rep2, "-o", tmp_path / "html2"])[0] == 0
    assert json.loads((tmp_path / "html2" / "summary.json").read_text())["las"] is None


# ---------------------------------------------------------------------------------------
# issue 25


def test_report_quiet_prints_nothing(syn, tmp_path):
    rep = tmp_path / "run.json"
    assert run_cli(["parse", syn.test, "-m", syn.model, "-o", tmp_path / "o.conllu",
                    "--report", rep, "-q"])[0] == 0
    rc, out, err = run_cli(["report", rep, "-o", tmp_path / "html", "-q"])
    assert rc == 0 and err == "" and out == b"", err
    rc, out, err = run_cli(["report", rep, "-o", tmp_path / "html"])
    assert rc == 0 and "report written to" in err


def test_first_compilation_is_announced_and_not_counted(capsys):
    """The first compile of a run prints one line saying what happens; its time is kept
    apart (the words/s of the summary do not count it)."""
    import numba

    from depparse.cli.progress import CompileWatch

    @numba.njit(cache=False)
    def fresh(x):
        return x * 2 + 1

    with CompileWatch(where="CACHE") as w:
        assert fresh(3) == 7
        assert fresh(4.5) == 10.0
        w.done()
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 2, err
    assert lines[0].startswith("depparse: compiling the parser's kernels") and "CACHE" in err
    assert lines[1].startswith("depparse: kernels compiled in ") and "(2 compilations)" in err
    assert w.kernels == 2 and w.seconds > 0
    with CompileWatch() as w:  # nothing compiled: nothing said
        fresh(5)
        w.done()
    assert capsys.readouterr().err == "" and w.seconds == 0


def test_api_train_logs_a_line_per_epoch(syn, tmp_path):
    code = ("import depparse\n"
            f"m = depparse.train({str(syn.train)!r}, {str(syn.dev)!r}, model='sib', bits=14, "
            "epochs=2, labeler_epochs=1, dev_max_iter=200)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=600,
                       cwd=tmp_path)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    assert re.search(r"^depparse: epoch 1/2: .*training UAS", err, re.M), err
    assert re.search(r"^depparse: epoch 2/2: .*dev UAS", err, re.M), err
    # the caller's own logging set-up wins: nothing added (one epoch is enough to see it)
    code = ("import logging; logging.basicConfig(level=logging.ERROR)\n"
            + code.replace("epochs=2", "epochs=1"))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=600,
                       cwd=tmp_path)
    assert p.returncode == 0 and "depparse: epoch" not in p.stderr.decode(), p.stderr.decode()


def test_train_log_into_a_file_shows_progress_within_an_epoch(syn, tmp_path, monkeypatch):
    from depparse.learn import stage_progress as progress

    monkeypatch.setattr(progress, "LOG_SECONDS", 0.0)
    rc, _, err = run_cli(["train", "--recipe", "none",
                          syn.train, "-o", tmp_path / "m.npz", "--model", "sib",
                          "--epochs", "1", "--bits", "12", "--no-labeler"])
    assert rc == 0, err
    assert re.search(r"^depparse: epoch 1/1: 1\d\d of 200 sentences \(\d+%\) in \d+ s$", err,
                     re.M), err


def test_train_resume_without_checkpoint_says_so(syn, tmp_path):
    rc, _, err = run_cli(["train", "--recipe", "none",
                          syn.train, "-o", tmp_path / "m.npz", "--model", "sib",
                          "--epochs", "1", "--bits", "12", "--no-labeler", "--resume", "-q"])
    assert rc == 0, err
    warn = [x for x in err.splitlines() if x.startswith("depparse: warning:")]
    assert len(warn) == 1 and "no checkpoint at" in warn[0] and "from the beginning" in warn[0]
