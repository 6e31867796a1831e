"""Learned scores: a BiLSTM over words, characters and frozen encoder vectors, with a biaffine
arc scorer, a biaffine label scorer and a tag classifier (the network's maths, one definition).

The sparse templates see words, tags and contextual classes through hashed features, and the
dense arc term (:mod:`.dense`) sees the frozen MiniLM vectors through linear terms.  This
module gives the parser a representation *learned for parsing*, after Kiperwasser and
Goldberg (2016, TACL, Sec. 3-4: a BiLSTM over the sentence feeding arc scores) and Dozat and
Manning (2017, ICLR, Sec. 2.2-2.3: deep biaffine attention).  For word ``i`` the input is

``x_i = [e_word(w_i) ; charCNN(c_i) ; P z_i ; Q (gamma sum_k softmax(a)_k e^k_i) + q]``

(``e_word`` a learned embedding of the lower-cased form id of the model's vocabulary;
``charCNN`` a width-3 convolution over learned character embeddings, max-pooled over the
characters, as Ma and Hovy 2016, Sec. 2.1; ``z_i`` the word's standardised vector of the
frozen encoder layer the model keeps, :attr:`~depparse.encoding.vocab.Vocabularies.vector_layer`,
projected by ``P``; absent for languages without an encoder; ``e^k_i`` the word's vector at
layer ``k`` of the multilingual encoder multilingual-e5-small, :mod:`depparse.encoding.e5`,
mean or first of its pieces, for the layers ``k = 0 .. K - 1`` of the spec's ``mix_layers``
``K``: a learned softmax-weighted mix of the frozen layers, Peters et al. 2018, Eq. 1, projected
by ``Q``; absent without it).  ``L`` BiLSTM layers give
``r_i`` (``2H`` dimensions); then, with ``a^head_i = f(W r_i + b)`` and ``a^dep_i`` alike
(``f`` the leaky ReLU; Dozat and Manning's Eq. 6-7),

``s(h, m) = a^head_h U a^dep_m + u . a^head_h``  (the arc score, ``scores[h, m]``)

and the part table receives ``scale * log P(h | m)``, the log-softmax of ``s(., m)`` over the
candidate heads of ``m`` (all words and the root), for every kept arc
(:class:`depparse.features.scoring.NetworkScorer`).  Labels:
``s(y | h, m) = [b^dep_m ; 1] U_y [b^head_h ; 1]`` (Dozat and Manning Eq. 8 with the bias
terms folded in); tags: ``V r_i + c``.

The functions take the array module ``xp`` (NumPy here; ``jax.numpy`` in
:mod:`depparse.learn.network_training`, which trains the network) and a ``scan`` for the recurrence
(:func:`numpy_scan` here, ``jax.lax.scan`` there): one definition of the maths, whose two
runs a test holds equal to float32 round-off.  Parsing needs NumPy only, and runs the same
operations without the padding's work (:func:`numpy_forward`; a test holds it bit for bit
equal to :func:`forward` with NumPy at the shipped model's sizes, where the BLAS computes a
product's rows alike whatever their number; elsewhere to float32 round-off).

The index convention is the package's: ``scores[h, m]``, root 0; a batch has ``T`` positions
per sentence (root included), padded at the end, ``lengths`` the true ``n + 1``.

A model stores the network as its component ``"network"`` (:meth:`Network.to_component`):
version 2 keeps every matrix as 8-bit codes with one float16 scale per row of its last axis
(``w = q * s``, ``s`` the row's largest magnitude / 127) and the vectors (biases, the mix's
weights) as float16; version 1, still read, kept everything as float16.  The 8-bit network
changed dev LAS by -0.01 to +0.03 on is_modern and gd_arcosg (both tag settings; the
shipped float16 networks rounded so: benchmarks/experiments/README.md, "An 8-bit network")
for half the network's bytes.  The character vocabulary and the standardisation are in JSON
and float32.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..encoding.e5 import get_e5
from ..encoding.transformer import POOLINGS
from ..errors import PATCHES, ModelError, check_component

__all__ = ["FORMAT", "Network", "NetworkSpec", "VERSION", "arc_scores", "char_ids",
           "encode_batch", "forward", "init_params", "label_scores", "log_softmax_heads",
           "model_network", "numpy_arc_scores", "numpy_forward", "numpy_forward_packed",
           "numpy_label_scores",
           "numpy_scan", "restored_params", "stored_params", "tag_scores"]

FORMAT = "depparse-network"
VERSION = 2
READS = (1, 2)  # the component versions this code reads (1: float16 parameters)
PAD, UNK_CHAR, ROOT_CHAR = 0, 1, 2  # reserved character ids
CHAR_SPECIALS = 3
NEG = -1e9  # the score of an impossible arc (finite: log-softmax stays finite)
MIX_DROP = 8  # the dropout key of the mix (0-2 the inputs, 3+ the BiLSTM layers, 7 <UNK>)


@dataclass(frozen=True)
class NetworkSpec:
    """Sizes of the network (module docstring)."""

    words: int
    chars: int
    labels: int
    tags: int
    vec_dim: int = 0
    word_dim: int = 100
    char_dim: int = 32
    char_filters: int = 100
    hidden: int = 200
    layers: int = 2
    arc_dim: int = 256
    label_dim: int = 64
    max_chars: int = 16
    # the multilingual encoder's layers 0 .. mix_layers - 1 in a learned mix (0: none), their
    # width, the mix's projection and how a word's pieces make its vector (module docstring)
    mix_layers: int = 0
    mix_dim: int = 384
    mix_proj: int = 128
    mix_pooling: str = "mean"

    @property
    def input_dim(self) -> int:
        return (self.word_dim + self.char_filters + (self.word_dim if self.vec_dim else 0)
                + (self.mix_proj if self.mix_layers else 0))

    def shapes(self) -> dict:
        """``{name: shape}`` of every parameter, in a fixed order."""
        H, A, B = self.hidden, self.arc_dim, self.label_dim
        out = {"word": (self.words, self.word_dim), "char": (self.chars, self.char_dim),
               "conv_w": (3 * self.char_dim, self.char_filters),
               "conv_b": (self.char_filters,)}
        if self.vec_dim:
            out["vec_w"] = (self.vec_dim, self.word_dim)
        if self.mix_layers:
            out.update({"mix_w": (self.mix_layers,), "mix_g": (1,),
                        "mix_p": (self.mix_dim, self.mix_proj), "mix_pb": (self.mix_proj,)})
        size = self.input_dim
        for layer in range(self.layers):
            for d in "fb":
                out[f"lstm{layer}{d}_w"] = (size + H, 4 * H)
                out[f"lstm{layer}{d}_b"] = (4 * H,)
            size = 2 * H
        out.update({"arc_head_w": (size, A), "arc_head_b": (A,), "arc_dep_w": (size, A),
                    "arc_dep_b": (A,), "arc_U": (A, A), "arc_u": (A,),
                    "lab_head_w": (size, B), "lab_head_b": (B,), "lab_dep_w": (size, B),
                    "lab_dep_b": (B,), "lab_U": (self.labels, B + 1, B + 1),
                    "tag_w": (size, self.tags), "tag_b": (self.tags,)})
        return out


def init_params(spec: NetworkSpec, seed: int) -> dict:
    """Fresh float32 parameters: weights ``N(0, 1 / fan_in)``, embeddings ``N(0, 0.1^2)``,
    biases 0 (the LSTM's forget gates 1, Jozefowicz et al. 2015), ``arc_U`` and ``lab_U``
    zero (Dozat and Manning initialise them at zero), the mix's weights equal (``mix_w`` 0)
    and its scale ``mix_g`` 1, all from ``default_rng([seed, 2617])``."""
    rng = np.random.default_rng([seed, 2617])
    out = {}
    H = spec.hidden
    for name, shape in spec.shapes().items():
        if name in ("word", "char"):
            a = 0.1 * rng.standard_normal(shape)
        elif name == "mix_g":
            a = np.ones(shape)
        elif name.endswith("_b") or name in ("arc_u", "arc_U", "lab_U", "mix_w", "mix_pb"):
            a = np.zeros(shape)
            if name.startswith("lstm"):
                a[H:2 * H] = 1.0
        else:
            a = rng.standard_normal(shape) / np.sqrt(shape[0])
        out[name] = a.astype(np.float32)
    return out


def numpy_scan(f, carry, xs):
    """``jax.lax.scan`` for NumPy: ``carry, y = f(carry, x)`` over the first axis of ``xs``;
    returns ``(carry, stacked ys)``."""
    ys = []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, np.stack(ys)


def _sigmoid(xp, x):
    return 0.5 * (xp.tanh(0.5 * x) + 1.0)  # no overflow in exp for large |x|


def _leaky(xp, x):
    return xp.where(x > 0, x, 0.1 * x)


def _lstm(xp, scan, w, b, x, H):
    """One direction of an LSTM (Hochreiter and Schmidhuber 1997, with forget gates) over
    ``x`` (B, T, I): the hidden states (B, T, H).  Gates in the order i, f, g, o."""
    B, T, size = x.shape
    xw = x @ w[:size] + b  # (B, T, 4H): the input's share, for all positions at once
    wh = w[size:]

    def cell(carry, xt):
        h, c = carry
        z = xt + h @ wh
        i, f, g, o = (z[:, k * H:(k + 1) * H] for k in range(4))
        c = _sigmoid(xp, f) * c + _sigmoid(xp, i) * xp.tanh(g)
        h = _sigmoid(xp, o) * xp.tanh(c)
        return (h, c), h

    zero = xp.zeros((B, H), dtype=x.dtype)
    _, hs = scan(cell, (zero, zero), xp.transpose(xw, (1, 0, 2)))
    return xp.transpose(hs, (1, 0, 2))


def _mix(xp, p, layers):
    """The projected mix ``Q (gamma sum_k softmax(a)_k e^k) + q`` (module docstring) of
    ``layers`` S + (K, dim): S + (mix_proj,)."""
    a = p["mix_w"] - p["mix_w"].max()
    w = xp.exp(a)
    w = w / w.sum()
    m = xp.einsum("...kd,k->...d", layers, w) * p["mix_g"][0]
    return m @ p["mix_p"] + p["mix_pb"]


def _inputs(xp, p, words, chars, projected, drop, mixed=None):
    """The BiLSTM's input ``x_i = [e_word ; charCNN ; P z ; mix]`` (module docstring) of
    positions of any leading shape ``S``: ``words`` S int, ``chars`` S + (C,) int,
    ``projected`` S + (D,), the projected vectors ``P z`` (None for a network without
    vectors), ``mixed`` S + (mix_proj,) the projected mix of :func:`_mix` (None without it);
    returns S + (input_dim,)."""
    parts = [drop(p["word"][words], 0)]
    e = p["char"][chars]  # S + (C, e)
    z = xp.zeros(e.shape[:-2] + (1, e.shape[-1]), dtype=e.dtype)
    pad = xp.concatenate([z, e, z], axis=-2)
    win = xp.concatenate([pad[..., :-2, :], pad[..., 1:-1, :], pad[..., 2:, :]], axis=-1)
    conv = xp.tanh(win @ p["conv_w"] + p["conv_b"])
    conv = xp.where((chars > 0)[..., None], conv, -1.0)  # tanh >= -1: padding never wins
    parts.append(drop(conv.max(axis=-2), 1))
    if projected is not None:
        parts.append(drop(projected, 2))
    if mixed is not None:
        parts.append(drop(mixed, MIX_DROP))
    return xp.concatenate(parts, axis=-1)


def forward(xp, scan, p, batch, spec: NetworkSpec, drop=None):
    """The words' representations ``r`` (B, T, 2H) of a batch (:func:`encode_batch`).

    ``drop(x, k)``: dropout on the ``k``-th dropped tensor (training only; None: none).
    :func:`numpy_forward` is the same maths for parsing, without the padding's work."""
    if drop is None:
        def drop(x, k):
            return x
    projected = batch["vectors"] @ p["vec_w"] if spec.vec_dim else None
    mixed = _mix(xp, p, batch["layers"]) if spec.mix_layers else None
    x = _inputs(xp, p, batch["words"], batch["chars"], projected, drop, mixed)
    rev = batch["rev"][..., None]
    for layer in range(spec.layers):
        fwd = _lstm(xp, scan, p[f"lstm{layer}f_w"], p[f"lstm{layer}f_b"], x, spec.hidden)
        xr = xp.take_along_axis(x, rev, axis=1)  # each sentence reversed within its length
        bwd = _lstm(xp, scan, p[f"lstm{layer}b_w"], p[f"lstm{layer}b_b"], xr, spec.hidden)
        x = drop(xp.concatenate([fwd, xp.take_along_axis(bwd, rev, axis=1)], axis=-1),
                 3 + layer)
    return x


def numpy_forward(p, batch, spec: NetworkSpec):
    """:func:`forward` in NumPy without dropout, computing only the sentences' own positions:
    the same ``r`` (B, T, 2H) on every position ``< lengths`` (zero beyond), by the same
    floating-point operations on each value.

    What it saves, for parsing: a padded batch of the parser's consecutive sentences is about
    a third real words (en_ewt test, 32 per batch).  The inputs and the LSTMs' input products
    are computed for the real positions only; the recurrence is packed (the sentences ordered
    by length, longest first, so that step ``t`` updates the first ``k_t`` rows, those longer
    than ``t``: PyTorch's ``PackedSequence``), and both directions of a layer run in one scan,
    one stacked product ``(2, k, H) @ (2, H, 4H)`` per step and the gates' nonlinearities on
    all four gates at once.  On the shipped model's batches it takes about a third of
    :func:`forward`'s time.

    The values are :func:`forward`'s bit for bit where each row of a matrix product is the
    same whatever the number of rows.  With OpenBLAS's ``sgemm`` (0.3.31) that holds for the
    LSTMs' products (over ``4H = 512``, ``768`` or ``1024`` columns, 128, 192 or 256 units:
    measured for every number of rows from 2), not for a one-row product (a matrix-vector
    product: at least ``min(2, B)`` rows are kept, as the padded batch had) nor for small products
    (``M N K <= 1e6``, another kernel): the vectors' projection (``T x 384 x 100``) is
    therefore computed on the padded rows, as :func:`forward` does, and the character
    convolution keeps its per-word shape.  That is OpenBLAS's SkylakeX (AVX-512) kernels;
    its Haswell ones (AVX2 alone) compute a product's rows beyond its first full tiles of 24
    rows in another order, and there the two agree to float32 round-off (1.4e-6 at most,
    measured: tests/blas_rows.py).
    ``tests/test_network.py`` holds the two equal at the shipped sizes: bit for bit where
    this machine's ``sgemm`` computes rows alike, else to that round-off."""
    x, (bi, pi) = numpy_forward_packed(p, batch, spec)
    r = np.zeros(batch["words"].shape + (x.shape[1],), dtype=np.float32)
    r[bi, pi] = x
    return r


def numpy_forward_packed(p, batch, spec: NetworkSpec):
    """:func:`numpy_forward`'s representations of the real positions only: ``(x, (b, i))``,
    ``x`` (R, 2H) the rows of the positions ``(b[k], i[k])``, sentence by sentence."""
    lengths = np.asarray(batch["lengths"])
    B, T = batch["words"].shape
    H = spec.hidden
    mask = np.arange(T)[None, :] < lengths[:, None]
    bi, pi = np.nonzero(mask)  # the real positions, sentence by sentence
    order = np.argsort(-lengths, kind="stable")  # longest first
    rank = np.empty(B, dtype=np.int64)
    rank[order] = np.arange(B)
    rk = rank[bi]
    rp = lengths[bi] - 1 - pi  # the backward direction's step of each position
    active = (lengths[None, :] > np.arange(T)[:, None]).sum(1)  # k_t
    # a one-row product is a matrix-vector product, another BLAS path (docstring)
    active = np.maximum(active, min(2, B))
    # the vectors' projection on the padded rows, as forward computes it (docstring)
    projected = batch["vectors"] @ p["vec_w"] if spec.vec_dim else None
    mixed = _mix(np, p, batch["layers"]) if spec.mix_layers else None  # (as projected)
    x = _inputs(np, p, batch["words"][bi, pi], batch["chars"][bi, pi],
                None if projected is None else projected[bi, pi], lambda a, k: a,
                None if mixed is None else mixed[bi, pi])
    for layer in range(spec.layers):
        xw = np.zeros((2, T, B, 4 * H), dtype=np.float32)  # time-major, longest first
        size = x.shape[1]
        wf, wb = p[f"lstm{layer}f_w"], p[f"lstm{layer}b_w"]
        xw[0, pi, rk] = x @ wf[:size] + p[f"lstm{layer}f_b"]
        xw[1, rp, rk] = x @ wb[:size] + p[f"lstm{layer}b_b"]
        hs = _bilstm_packed(xw, np.stack([wf[size:], wb[size:]]), active, H)
        x = np.concatenate([hs[0, pi, rk], hs[1, rp, rk]], axis=-1)
    return x, (bi, pi)


def _bilstm_packed(xw, wh, active, H):
    """The recurrence of both directions of an LSTM layer (:func:`_lstm`'s cell, the same
    operations): ``xw`` (2, T, B, 4H) the inputs' shares, time-major, sentences longest
    first; ``wh`` (2, H, 4H); ``active[t]`` the rows updated at step ``t``.  Returns the
    hidden states (2, T, B, H) (rows beyond a sentence's length undefined)."""
    _, T, B, _ = xw.shape
    h = np.zeros((2, B, H), dtype=np.float32)
    c = np.zeros((2, B, H), dtype=np.float32)
    hs = np.empty((2, T, B, H), dtype=np.float32)
    for t in range(T):
        k = active[t]
        z = xw[:, t, :k]
        z += h[:, :k] @ wh
        s = 0.5 * z  # _sigmoid of every gate (g's unused)
        np.tanh(s, out=s)
        s += 1.0
        s *= 0.5
        ck = c[:, :k]
        ck *= s[..., H:2 * H]
        ck += s[..., :H] * np.tanh(z[..., 2 * H:3 * H])
        hk = s[..., 3 * H:]
        hk *= np.tanh(ck)
        h[:, :k] = hk
        hs[:, t, :k] = hk
    return hs


def arc_scores(xp, p, r, lengths):
    """Biaffine arc scores (B, T, T), ``[b, h, m]``; impossible arcs (a padding head, a word
    heading itself) get :data:`NEG`."""
    hd = _leaky(xp, r @ p["arc_head_w"] + p["arc_head_b"])
    dp = _leaky(xp, r @ p["arc_dep_w"] + p["arc_dep_b"])
    s = (hd @ p["arc_U"]) @ xp.transpose(dp, (0, 2, 1)) + (hd @ p["arc_u"])[:, :, None]
    T = r.shape[1]
    pos = xp.arange(T)
    ok = (pos[None, :] < lengths[:, None])[:, :, None] & (pos[:, None] != pos[None, :])[None]
    return xp.where(ok, s, NEG)


def numpy_arc_scores(p, x, at, shape, lengths):
    """:func:`arc_scores` of :func:`numpy_forward_packed`'s ``(x, at)`` for a batch of
    ``shape`` (B, T): the same (B, T, T) on the real positions (bit for bit: the head and
    dependent projections and ``U`` are products over 256 columns, whose rows OpenBLAS
    computes alike whatever their number where :func:`numpy_forward` is bit for bit), computed
    for the real positions only (a third of the padded batch's rows); the bilinear products of
    each sentence keep :func:`arc_scores`' padded shapes."""
    bi, pi = at
    hd = _leaky(np, x @ p["arc_head_w"] + p["arc_head_b"])
    dp = _leaky(np, x @ p["arc_dep_w"] + p["arc_dep_b"])
    hu = hd @ p["arc_U"]
    pad = np.zeros((3,) + tuple(shape) + (hd.shape[1],), dtype=np.float32)
    pad[0][bi, pi] = hd
    pad[1][bi, pi] = dp
    pad[2][bi, pi] = hu
    s = pad[2] @ np.transpose(pad[1], (0, 2, 1)) + (pad[0] @ p["arc_u"])[:, :, None]
    T = shape[1]
    pos = np.arange(T)
    ok = (pos[None, :] < lengths[:, None])[:, :, None] & (pos[:, None] != pos[None, :])[None]
    return np.where(ok, s, NEG)


def log_softmax_heads(xp, s):
    """``log P(h | m)``: the log-softmax of ``s[b, :, m]`` over the heads ``h``."""
    top = s.max(axis=1, keepdims=True)
    return s - top - xp.log(xp.exp(s - top).sum(axis=1, keepdims=True))


def label_scores(xp, p, r, heads):
    """Label scores (B, T, labels) of each word under its head ``heads`` (B, T)."""
    lh = _leaky(xp, r @ p["lab_head_w"] + p["lab_head_b"])
    ld = _leaky(xp, r @ p["lab_dep_w"] + p["lab_dep_b"])
    lh = xp.take_along_axis(lh, heads[..., None], axis=1)
    one = xp.ones(ld.shape[:2] + (1,), dtype=ld.dtype)
    ld = xp.concatenate([ld, one], axis=-1)
    lh = xp.concatenate([lh, one], axis=-1)
    return xp.einsum("bmi,yij,bmj->bmy", ld, p["lab_U"], lh)


def numpy_label_scores(p, r, heads, U2=None):
    """:func:`label_scores` of one sentence in NumPy: ``r`` (N, 2H) its representations,
    ``heads`` (N,) (the root's 0): (N, labels), equal to float32 round-off.  The bilinear
    form is one matrix product, ``[b^dep ; 1]`` against ``U`` laid out as (B + 1, labels *
    (B + 1)) (``U2``, computed here when not given), then a product per word with its head's
    ``[b^head ; 1]``; :func:`label_scores`' three-operand ``einsum`` is a loop over every
    index in NumPy, 25 times slower."""
    lh = _leaky(np, r @ p["lab_head_w"] + p["lab_head_b"])[heads]
    ld = _leaky(np, r @ p["lab_dep_w"] + p["lab_dep_b"])
    one = np.ones((r.shape[0], 1), dtype=ld.dtype)
    ld = np.concatenate([ld, one], axis=-1)
    lh = np.concatenate([lh, one], axis=-1)
    L, B1, _ = p["lab_U"].shape
    if U2 is None:
        U2 = np.ascontiguousarray(p["lab_U"].transpose(1, 0, 2).reshape(B1, L * B1))
    t = (ld @ U2).reshape(-1, L, B1)  # t[m, y, j] = sum_i ld[m, i] U[y, i, j]
    return (t @ lh[:, :, None])[..., 0]


def _log_softmax(s):
    """NumPy log-softmax over the last axis."""
    s = s - s.max(axis=-1, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def tag_scores(xp, p, r):
    """UPOS scores (B, T, tags)."""
    return r @ p["tag_w"] + p["tag_b"]


def char_ids(form: str, index: dict, C: int) -> list[int]:
    """The character ids of a form, at most ``C`` (the first and last ``C / 2`` of a longer
    form: its prefix and its suffix)."""
    if len(form) > C:
        form = form[:C // 2] + form[len(form) - (C - C // 2):]
    return [index.get(ch, UNK_CHAR) for ch in form]


def encode_batch(items, spec: NetworkSpec, char_index: dict, T=None):
    """A padded batch from ``(word ids (N,), forms (N,) with the root's first, vectors (n, V)
    standardised or None, encoder layers (n, K, dim) or None)`` per sentence; ``T`` at least
    the longest ``N``.

    Returns a dict of NumPy arrays: ``words`` (B, T) int32, ``chars`` (B, T, C) int32,
    ``vectors`` (B, T, V) float32 (row 0, the root, zero), ``layers`` (B, T, K, dim) float32
    (networks with a mix; row 0 zero), ``lengths`` (B,) int32 and ``rev`` (B, T) int32, the
    positions of each sentence read backwards within its length.
    """
    T = max(len(it[0]) for it in items) if T is None else T
    B, C = len(items), spec.max_chars
    words = np.zeros((B, T), dtype=np.int32)
    chars = np.zeros((B, T, C), dtype=np.int32)
    vecs = np.zeros((B, T, max(spec.vec_dim, 1)), dtype=np.float32)
    lengths = np.zeros(B, dtype=np.int32)
    rev = np.tile(np.arange(T, dtype=np.int32), (B, 1))
    K = spec.mix_layers
    layers = np.zeros((B, T, K, spec.mix_dim), dtype=np.float32) if K else None
    for b, it in enumerate(items):
        w, forms, v = it[:3]
        lay = it[3] if len(it) > 3 else None
        N = len(w)
        words[b, :N] = w
        lengths[b] = N
        rev[b, :N] = np.arange(N - 1, -1, -1)
        chars[b, 0, 0] = ROOT_CHAR
        for i in range(1, N):
            c = char_ids(forms[i], char_index, C)
            chars[b, i, :len(c)] = c
        if spec.vec_dim:
            vecs[b, 1:N] = v
        if K and N > 1:
            layers[b, 1:N] = lay
    out = {"words": words, "chars": chars, "lengths": lengths, "rev": rev}
    if spec.vec_dim:
        out["vectors"] = vecs
    if K:
        out["layers"] = layers
    return out


class Network:
    """A trained network and its NumPy forward pass (module docstring).

    Parameters
    ----------
    spec : NetworkSpec
    params : dict of float32 arrays
    chars : list of str
        The character vocabulary (ids from :data:`CHAR_SPECIALS` on).
    mean, std : (V,) arrays or None
        Standardisation of the frozen encoder vectors (models with ``vec_dim``).
    scale : float
        The factor of ``log P(h | m)`` in the part table.
    """

    def __init__(self, spec: NetworkSpec, params, chars, mean=None, std=None, scale=1.0):
        self.spec = spec
        self.params = {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}
        for k, shape in spec.shapes().items():
            if self.params.get(k) is None or self.params[k].shape != shape:
                raise ValueError(f"network parameter {k}: shape "
                                 f"{getattr(self.params.get(k), 'shape', None)}, expected {shape}")
        self.chars = list(chars)
        self.char_index = {c: i + CHAR_SPECIALS for i, c in enumerate(self.chars)}
        self.mean = None if mean is None else np.asarray(mean, dtype=np.float32)
        self.std = None if std is None else np.asarray(std, dtype=np.float32)
        self.scale = float(scale)
        L, B1, _ = self.params["lab_U"].shape  # numpy_label_scores' layout of lab_U
        self._lab_U2 = np.ascontiguousarray(
            self.params["lab_U"].transpose(1, 0, 2).reshape(B1, L * B1))

    def standardise(self, vectors):
        """(n, V) float32: ``(v - mean) / std`` (None for a network without vectors)."""
        if not self.spec.vec_dim:
            return None
        if vectors is None:
            raise ValueError("this network reads the encoder's vectors, but the encoded "
                             "sentence has none (encode it with the model's vocabularies)")
        return (np.asarray(vectors, dtype=np.float32) - self.mean) / self.std

    def item(self, enc):
        """``(word ids, forms, standardised vectors, encoder layers)`` of an encoded
        sentence (the layers computed for it alone where :meth:`attach_layers` did not)."""
        if enc.forms is None:
            raise ValueError("the network reads the words' characters: encode the sentence "
                             "with Vocabularies.encode")
        words = np.minimum(enc.form, self.spec.words - 1)
        layers = None
        if self.spec.mix_layers:
            if enc.layers is None:
                self.attach_layers([enc])
            layers = enc.layers
        return words, enc.forms, self.standardise(enc.vectors), layers

    def attach_layers(self, encs, progress=None) -> None:
        """Set ``Encoded.layers`` ((n, K, dim) float16: the words' vectors at the encoder's
        layers 0 .. K - 1, :attr:`NetworkSpec.mix_layers`) of the sentences that lack them,
        many per forward pass of the encoder (each sentence's vectors those it gets alone,
        :meth:`~depparse.encoding.transformer.Transformer.iter_layer_vectors`); float16, as
        a training keeps them for its whole data.  ``progress(words)`` after each
        sentence."""
        K = self.spec.mix_layers
        todo = [e for e in encs if K and e.layers is None]
        if not todo:
            return
        enc = get_e5(max(K - 1, 1))
        got = enc.iter_layer_vectors((list(e.forms[1:]) for e in todo), tuple(range(K)),
                                     pooling=self.spec.mix_pooling)
        for e, vs in zip(todo, got, strict=True):
            e.layers = np.stack(vs, axis=1).astype(np.float16)
            if progress is not None:
                progress(e.n)

    def represent(self, items):
        """``(r, batch)``: the representations of a list of :meth:`item` s."""
        batch = encode_batch(items, self.spec, self.char_index)
        return numpy_forward(self.params, batch, self.spec), batch

    def arc_logprobs(self, enc) -> np.ndarray:
        """(N, N) float64 ``log P(h | m)`` of one encoded sentence (column ``m``)."""
        if enc.network is not None:
            return enc.network[0]
        r, batch = self.represent([self.item(enc)])
        s = arc_scores(np, self.params, r, batch["lengths"])
        return log_softmax_heads(np, s)[0].astype(np.float64)

    def batch_logprobs(self, encs, batch=64) -> list:
        """:meth:`arc_logprobs` of many encoded sentences, ``batch`` of similar length per
        forward pass (each sentence's scores those it gets alone, to float32 round-off)."""
        return [o[0] for o in self.batch_outputs(encs, batch)]

    def batch_outputs(self, encs, batch=64) -> list:
        """``(log P(h | m), log P(UPOS | word), r)`` of many encoded sentences, ``batch`` of
        similar length per forward pass: the arc log-probabilities (N, N) of
        :meth:`arc_logprobs`, the tag log-probabilities (N, tags) of :meth:`tag_logprobs`
        and the representations r (N, 2H) that :meth:`label_logprobs` reads."""
        out = [None] * len(encs)
        self.attach_layers(encs)
        order = sorted(range(len(encs)), key=lambda i: (encs[i].n, i))
        for a in range(0, len(order), batch):
            idx = order[a:a + batch]
            b = encode_batch([self.item(encs[i]) for i in idx], self.spec, self.char_index)
            x, at = numpy_forward_packed(self.params, b, self.spec)
            s = numpy_arc_scores(self.params, x, at, b["words"].shape, b["lengths"])
            lp = log_softmax_heads(np, s)
            tp = _log_softmax(tag_scores(np, self.params, x))  # the real positions' rows
            start = 0  # x holds the rows of the real positions sentence by sentence
            for k, i in enumerate(idx):
                N = encs[i].n + 1
                out[i] = (lp[k, :N, :N].astype(np.float64),
                          tp[start:start + N].astype(np.float64), x[start:start + N])
                start += N
        return out

    def attach(self, encs, logprobs=None, *, outputs=None) -> None:
        """Set ``Encoded.network`` of these encoded sentences: the outputs
        (:meth:`batch_outputs`, many sentences per forward pass) that :meth:`arc_logprobs`,
        :meth:`tag_logprobs` and :meth:`label_logprobs` then read.  ``logprobs``: their arc
        log-probabilities alone, already computed (a trainer's scores of its data: the views
        of tags and labels are then computed for a sentence alone, where asked);
        ``outputs``: their :meth:`batch_outputs`, already computed.  The outputs live with
        the encoded sentence and go with it; :meth:`detach` drops them."""
        if outputs is None:
            outputs = (self.batch_outputs(encs) if logprobs is None
                       else [(lp, None, None) for lp in logprobs])
        for e, o in zip(encs, outputs, strict=True):
            e.network = o

    @staticmethod
    def detach(encs) -> None:
        """Drop the outputs :meth:`attach` set (their views are computed alone again)."""
        for e in encs:
            e.network = None

    def _outputs(self, enc):
        """A sentence's :meth:`batch_outputs`: those attached to it, else computed for it
        alone (and not attached)."""
        hit = enc.network
        if hit is None or hit[1] is None:
            got = self.batch_outputs([enc])[0]
            return got if hit is None else (hit[0],) + got[1:]
        return hit

    def tag_logprobs(self, enc) -> np.ndarray:
        """(N, tags) float64 ``log P(UPOS | word)`` of one encoded sentence (tags: the ids of
        the model's UPOS vocabulary; row 0, the root, unused)."""
        return self._outputs(enc)[1]

    def label_logprobs(self, enc, heads) -> np.ndarray:
        """(N, labels) float64 ``log P(DEPREL | h, m)`` of the arcs ``heads[m] -> m`` of one
        encoded sentence (labels: the ids of the model's DEPREL vocabulary; row 0 unused)."""
        r = self._outputs(enc)[2]
        h = np.maximum(np.asarray(heads, dtype=np.int64), 0)  # the root's -1
        ls = numpy_label_scores(self.params, r, h, self._lab_U2)
        return _log_softmax(ls).astype(np.float64)

    def difference(self, enc, gold_mods, pred_mods, only) -> float:
        """``scale * (sum of log P over gold arcs - over predicted arcs)`` of the automata
        ``only`` where the two differ (the network's share of a PA margin)."""
        lp = self.arc_logprobs(enc)
        rows = only[:, None]
        return self.scale * float(lp[gold_mods & ~pred_mods & rows].sum()
                                  - lp[pred_mods & ~gold_mods & rows].sum())

    def tags(self, enc) -> np.ndarray:
        """(n,) the most likely UPOS id (the order of the training's tag list) of each word."""
        return self.tag_logprobs(enc)[1:].argmax(-1)

    # -- storage ---------------------------------------------------------------------------
    def to_component(self):
        """``(meta, arrays)`` of the model component ``"network"`` (version 2: 8-bit matrices,
        module docstring)."""
        meta = {"format": FORMAT, "version": VERSION, "spec": asdict(self.spec),
                "chars": "".join(self.chars), "scale": self.scale}
        arrays = stored_params(self.params)
        if self.spec.vec_dim:
            arrays["mean"] = self.mean.astype(np.float32)
            arrays["std"] = self.std.astype(np.float32)
        return meta, arrays

    @classmethod
    def from_component(cls, meta, arrays) -> Network:
        """Inverse of :meth:`to_component`; raises :class:`~depparse.errors.ModelError`."""
        version = meta.get("version") if isinstance(meta, dict) else None
        check_component(meta, FORMAT, version if version in READS else VERSION,
                        "learned network")
        pooling = (meta.get("spec") or {}).get("mix_pooling", "mean")
        if pooling not in POOLINGS:  # "first": retired
            raise ModelError(f"the model's learned network pools a word's pieces by {pooling!r}, "
                             f"which is retired from depparse: {PATCHES}/"
                             "first-piece-pooling.patch brings it back")
        try:
            spec = NetworkSpec(**meta["spec"])
            params = restored_params(arrays)
            return cls(spec, params, list(meta["chars"]), arrays.get("mean"),
                       arrays.get("std"), meta["scale"])
        except (KeyError, ValueError, TypeError) as e:
            raise ModelError(f"the model's learned network is corrupt ({e})") from None

    def rounded(self) -> Network:
        """The network with its parameters rounded as a model file keeps them
        (:func:`stored_params`)."""
        return Network(self.spec, restored_params(stored_params(self.params)),
                       self.chars, self.mean, self.std, self.scale)


def stored_params(params) -> dict:
    """The arrays of a network component's parameters (version 2): a matrix (2 or more axes)
    as ``q.NAME`` (int8 codes) and ``s.NAME`` (float16, one scale per row of its last axis:
    the row's largest magnitude / 127), a vector as ``p.NAME`` (float16)."""
    out = {}
    for k, v in params.items():
        a = np.asarray(v, dtype=np.float32)
        if a.ndim < 2:
            out[f"p.{k}"] = a.astype(np.float16)
            continue
        top = np.abs(a).max(axis=-1, keepdims=True)
        s = (top / 127.0).astype(np.float16)
        s[s == 0] = 1.0  # a zero row, or one too small for a float16 scale: codes 0
        out[f"q.{k}"] = np.clip(np.rint(a / s.astype(np.float32)), -127, 127).astype(np.int8)
        out[f"s.{k}"] = s
    return out


def restored_params(arrays) -> dict:
    """The float32 parameters of a network component's arrays (:func:`stored_params`; the
    ``p.NAME`` float16 arrays of version 1 read as they are)."""
    out = {k[2:]: np.asarray(v, dtype=np.float32) for k, v in arrays.items()
           if k.startswith("p.")}
    for k, q in arrays.items():
        if k.startswith("q."):
            out[k[2:]] = (np.asarray(q, dtype=np.float32)
                          * np.asarray(arrays[f"s.{k[2:]}"], dtype=np.float32))
    return out


def model_network(component, scale) -> Network | None:
    """The learned network of a model: its component ``"network"`` (a ``Component`` or None),
    checked against ``ModelConfig.learned_scale``; raises
    :class:`~depparse.errors.ModelError` when they disagree."""
    if component is None:
        if scale:
            raise ModelError("the model was trained with learned arc scores (learned_scale "
                             f"{scale}) but has no 'network' component: corrupt model file")
        return None
    net = Network.from_component(component.meta, component.arrays)
    if net.scale != scale:
        raise ModelError(f"the model's learned network has scale {net.scale}, its "
                         f"configuration says {scale}: corrupt model file")
    return net
