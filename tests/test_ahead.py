"""The encoder a batch ahead on a second thread (depparse/encoding/ahead.py, ``threads=2``):
the same output as one thread, errors in their place, no thread left behind."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
import synthetic
from fixtures_models import live_threads, needs_encoder, run_cli
from threadpoolctl import threadpool_info

from depparse.encoding.ahead import run_ahead
from depparse.errors import DepparseError

CONTEXT_MODEL = Path(__file__).parent / "data" / "parse_fixture_context.npz"


def _wait(cond, seconds=5.0):
    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)
    return cond()


def test_run_ahead_gives_every_item_in_order_and_runs_at_most_depth_ahead():
    pulled = []

    def source():
        for i in range(100):
            pulled.append(i)
            yield i

    it = run_ahead(source(), depth=2, name="t-order")
    assert pulled == []  # nothing runs before the first next()
    assert next(it) == 0
    # the consumer holds item 0: the helper queues 1 and 2 and waits with 3 in hand
    assert _wait(lambda: len(pulled) == 4)
    time.sleep(0.2)
    assert len(pulled) == 4
    assert list(it) == list(range(1, 100))
    assert _wait(lambda: not live_threads("t-order"))
    assert list(run_ahead(iter(()), name="t-order")) == []
    with pytest.raises(ValueError, match="depth"):
        next(run_ahead(range(3), depth=0))


def test_run_ahead_raises_the_iterables_error_in_its_place():
    def source():
        yield from range(3)
        raise DepparseError("in.conllu:7: a bad line")

    got = []
    with pytest.raises(DepparseError, match=r"^in.conllu:7: a bad line$"):
        for x in run_ahead(source(), depth=1, name="t-error"):
            got.append(x)
    assert got == [0, 1, 2]
    assert not live_threads("t-error")


def test_run_ahead_closed_early_stops_closes_and_joins_its_thread():
    closed = []

    def source():
        try:
            yield from range(10**9)
        finally:
            closed.append(threading.current_thread().name)

    it = run_ahead(source(), depth=2, name="t-close")
    assert next(it) == 0 and next(it) == 1
    assert len(live_threads("t-close")) == 1
    it.close()
    assert not live_threads("t-close")
    assert closed == ["t-close"]  # closed in the helper thread, where it ran


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@needs_encoder
def test_parse_with_the_encoder_ahead_is_the_same_as_one_thread(monkeypatch):
    """threads=2 (the default on a machine of two CPUs) runs the encoder on a helper thread,
    several forward passes per input; the trees, labels, iterations and proofs are those of
    threads=1, and no helper is left when the stream ends or is closed."""
    from depparse.api import load
    from depparse.encoding import minilm

    p = load(CONTEXT_MODEL)
    sents = synthetic.sentences(300, seed=5)
    passes = []
    real = minilm.MiniLM._forward
    monkeypatch.setattr(minilm.MiniLM, "_forward", lambda self, w, keep=None:
                        passes.append(threading.current_thread().name) or real(self, w, keep))
    one = p.parse_results(sents, threads=1)
    assert set(passes) == {"MainThread"}
    passes.clear()
    blas = _blas_threads()
    stream = p.iter_parse_results(sents, threads=2)
    first = next(stream)
    assert len(live_threads("depparse-encoder")) == 1
    two = [first, *stream]
    assert len(passes) >= 3 and set(passes) == {"depparse-encoder"}
    assert not live_threads("depparse-encoder")
    for (x, rx), (y, ry) in zip(one, two, strict=True):
        assert np.array_equal(x.heads, y.heads) and list(x.rels) == list(y.rels)
        assert rx.iterations == ry.iterations and rx.proof == ry.proof
    assert _blas_threads() == blas  # the parse's BLAS limit is lifted as before

    stream = p.iter_parse_results(sents, threads=2)
    next(stream)
    stream.close()  # a consumer that stops early
    assert not live_threads("depparse-encoder")
    assert _blas_threads() == blas
    with pytest.raises(DepparseError, match="threads 0"):
        next(p.iter_parse_results(sents, threads=0))


@needs_encoder
@pytest.mark.parametrize("threads", ["1", "2"])
def test_cli_bad_line_late_in_the_input_with_the_encoder_ahead(tmp_path, threads):
    """A malformed line in the 250th of 300 sentences, read by the helper thread: the same
    one-line error naming the file and line, exit 2, no output, as with one thread; with
    --skip-bad, the same line listed and the other sentences parsed."""
    blocks = synthetic.conllu_text(300, seed=6).strip("\n").split("\n\n")
    lines = blocks[249].split("\n")
    word = next(i for i, ln in enumerate(lines) if ln[:1].isdigit())
    lines[word] = "1\tbroken"
    blocks[249] = "\n".join(lines)
    text = "\n\n".join(blocks) + "\n\n"
    line_no = sum(len(b.split("\n")) + 1 for b in blocks[:249]) + word + 1
    src = tmp_path / "in.conllu"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.conllu"
    rc, stdout, err = run_cli(["parse", src, "--model", CONTEXT_MODEL, "-o", out,
                               "--threads", threads])
    assert rc == 2, err
    msgs = [ln for ln in err.splitlines() if ln.startswith("depparse: error:")]
    assert len(msgs) == 1 and msgs[0].startswith(f"depparse: error: {src}:{line_no}:"), err
    assert "Traceback" not in err
    assert not out.exists() and stdout == b""
    assert not live_threads("depparse-encoder")

    # --skip-bad: the bad sentence listed (from the reading thread), the 299 others parsed
    rc, stdout, err = run_cli(["parse", src, "--model", CONTEXT_MODEL, "-o", out,
                               "--threads", threads, "--skip-bad"])
    assert rc == 0, err
    skipped = [ln for ln in err.splitlines() if ln.startswith("depparse: skipped:")]
    assert len(skipped) == 1 and skipped[0].startswith(f"depparse: skipped: {src}:{line_no}:")
    assert out.read_text(encoding="utf-8").count("\n\n") == 299


def test_the_network_pass_on_either_thread_gives_the_same_parse(shipped_dev, monkeypatch):
    """A network over multilingual-e5-small's layers (the shipped English model): the
    encoders run on the helper thread and the network's own pass on the decoder's
    (Engine.network_on_helper False); with it on the helper, and with one thread, the same
    trees, labels, predicted tags (retag: the network's UPOS view in the tagger) and
    proofs."""
    from depparse.network import biaffine

    parser, dev = shipped_dev
    assert parser.engine.learned.spec.mix_layers and not parser.engine.network_on_helper
    sents = dev[:40]
    where = {"layers": set(), "network": set()}
    real_layers, real_out = biaffine.Network.attach_layers, biaffine.Network.batch_outputs

    def layers(self, encs, progress=None):
        if any(e.layers is None for e in encs):
            where["layers"].add(threading.current_thread().name)
        return real_layers(self, encs, progress)

    def outputs(self, encs, batch=64):
        where["network"].add(threading.current_thread().name)
        return real_out(self, encs, batch)

    monkeypatch.setattr(biaffine.Network, "attach_layers", layers)
    monkeypatch.setattr(biaffine.Network, "batch_outputs", outputs)
    runs = {}
    for name, helper, threads in (("one", None, 1), ("split", False, 2), ("helper", True, 2)):
        if helper is not None:
            monkeypatch.setattr(type(parser.engine), "network_on_helper",
                                property(lambda self, h=helper: h))
        for k in where:
            where[k].clear()
        runs[name] = parser.parse_results(sents, threads=threads, retag=True)
        if name == "split":
            assert where == {"layers": {"depparse-encoder"}, "network": {"MainThread"}}
        elif name == "helper":
            assert where == {"layers": {"depparse-encoder"}, "network": {"depparse-encoder"}}
    for other in ("split", "helper"):
        for (x, rx), (y, ry) in zip(runs["one"], runs[other], strict=True):
            assert np.array_equal(x.heads, y.heads) and list(x.rels) == list(y.rels)
            assert list(x.upos) == list(y.upos)
            assert rx.iterations == ry.iterations and rx.proof == ry.proof
