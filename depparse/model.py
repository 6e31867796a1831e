"""Model files: configuration + vocabularies + weights, versioned, written atomically.

A model is one ``.npz`` file (NumPy's zip of arrays; loaded with ``allow_pickle=False``, so
it can never execute code) holding:

``meta``      uint8 — UTF-8 JSON: ``{"format": "depparse-model", "version": 4, "config": {...},
              "decoding": {...}, "vocab": {...}, "info": {...}}`` (``config``: what the weights
              mean, :class:`~depparse.config.ModelConfig`; ``decoding``: the decoding
              defaults, :class:`~depparse.config.DecodeConfig`; files of version 2 and
              older hold both in ``config``)
``weights``   float16, float32 or 8-bit codes (below) — averaged weights of the
              parser (hashed, ``2**bits``)
``pruner``    weights of the arc-factored pruner (``2**pruner_bits``), if any
``labeler``   weights of the dependency labeler (``2**labeler_bits``), if any
``<c>.<key>`` the arrays of component ``c`` (tagger, tokenizer ...), whose JSON part is
              ``meta["components"][c]`` (:class:`Component`)

Since format version 2 a weight vector that is mostly zeros (hashed feature tables with more
buckets than features) is stored sparsely as two arrays, ``<name>_mask`` (``np.packbits`` of
``w != 0``) and ``<name>_values`` (the non-zero weights in index order); the loader accepts
either form.  Format version 4 adds 8-bit weights (``ModelConfig.storage = "int8"``):
``<name>_mask`` (of the non-zero codes), ``<name>_q8`` (the non-zero int8 codes ``q =
round(127 sign(w) sqrt(|w| / top))``, square-root companding) and ``<name>_top`` (float64
``top = max |w|``); the weight is ``sign(q) (q / 127)^2 top``.

Loading a file that is not a model, is truncated or corrupt, or was written by a newer
version of depparse raises :class:`ModelError` with a message that says which.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .atomic import atomic_output
from .config import DecodeConfig, ModelConfig
from .encoding.vocab import Vocabularies
from .errors import ModelError
from .features.labels import LABELER_KIND
from .features.parts import FEATURE_SET

__all__ = ["FORMAT", "Component", "Model", "VERSION", "atomic_savez", "compand", "expand"]

FORMAT = "depparse-model"
# 2: sparse weight arrays (see above); 3: the decoding defaults apart from the model's
# configuration (``meta["decoding"]``); 4: 8-bit companded weights (``storage="int8"``)
VERSION = 4


@dataclass
class Component:
    """A part of a model beyond the parser (a tagger, a tokenizer ...): JSON-able ``meta``
    and named arrays, stored as ``meta["components"][name]`` and ``<name>.<key>`` arrays.
    The code that trains a component writes its arrays in the dtype it wants them stored in;
    the code that uses it checks ``meta`` (e.g. a format version) and raises ModelError."""

    meta: dict
    arrays: dict = field(default_factory=dict)


@dataclass
class Model:
    """A trained model (see the module docstring for the file format)."""

    config: ModelConfig
    vocab: Vocabularies
    weights: np.ndarray
    pruner: np.ndarray | None = None
    labeler: np.ndarray | None = None
    info: dict = field(default_factory=dict)
    decoding: DecodeConfig = field(default_factory=DecodeConfig)
    components: dict = field(default_factory=dict)

    def save(self, path) -> None:
        """Write the model to ``path`` atomically (temporary file, fsync, rename)."""
        meta = {"format": FORMAT, "version": VERSION, "config": self.config.to_dict(),
                "decoding": self.decoding.to_dict(), "vocab": self.vocab.to_json(),
                "info": self.info,
                "components": {k: c.meta for k, c in sorted(self.components.items())}}
        dt = self.config.storage
        arrays = {"meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)}
        for name in ("weights", "pruner", "labeler"):
            a = getattr(self, name)
            if a is not None:
                arrays.update(_store_8bit(name, a) if dt == "int8" else _store(name, a, dt))
        for cname, c in self.components.items():
            for k, a in c.arrays.items():
                arrays[f"{cname}.{k}"] = np.asarray(a)
        atomic_savez(path, arrays)

    @classmethod
    def load(cls, path) -> Model:
        """Read a model file; raises :class:`ModelError` when it cannot be used."""
        path = Path(path)
        if not path.is_file():
            raise ModelError(f"{path}: model file not found")
        try:
            with np.load(path, allow_pickle=False) as z:
                if "meta" not in z.files:
                    raise ModelError(f"{path}: not a depparse model (no metadata)")
                meta = json.loads(z["meta"].tobytes().decode("utf-8"))
                if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                    raise ModelError(f"{path}: not a depparse model file")
                version = meta.get("version")
                if not isinstance(version, int) or version > VERSION:
                    raise ModelError(
                        f"{path}: model format version {version} is newer than this depparse "
                        f"supports ({VERSION}); upgrade depparse")
                config = ModelConfig.from_dict(meta["config"])
                decoding = DecodeConfig.from_dict(meta.get("decoding") or meta["config"])
                vocab = Vocabularies.from_json(meta["vocab"])
                if "weights" not in z.files and "weights_mask" not in z.files:
                    raise ModelError(f"{path}: model file has no parser weights")
                weights = _load(z, "weights", path)
                pruner = _load(z, "pruner", path)
                labeler = _load(z, "labeler", path)
                components = {}
                for cname, cmeta in (meta.get("components") or {}).items():
                    pre = cname + "."
                    components[cname] = Component(
                        cmeta, {k[len(pre):]: z[k] for k in z.files if k.startswith(pre)})
        except ModelError:
            raise
        except (zipfile.BadZipFile, zlib.error, OSError, ValueError, KeyError, EOFError,
                UnicodeDecodeError, TypeError) as e:
            # numpy's message for a file that is no zip at all suggests allow_pickle: not ours
            why = e if zipfile.is_zipfile(path) else "not a complete .npz archive"
            raise ModelError(f"{path}: model file is corrupt or truncated ({why})") from None
        if config.feature_set != FEATURE_SET or (labeler is not None
                                                 and config.labeler_kind != LABELER_KIND):
            raise ModelError(
                f"{path}: the model was trained with feature set {config.feature_set} and a "
                f"{config.labeler_kind!r} labeler; this depparse computes feature set "
                f"{FEATURE_SET} and a {LABELER_KIND!r} labeler: retrain the model "
                f"(depparse train), or use the depparse version that wrote it")
        if weights.shape != (1 << config.bits,):
            raise ModelError(f"{path}: weights have {weights.shape[0]} entries, expected "
                             f"2**{config.bits}: corrupt model file")
        return cls(config, vocab, weights, pruner, labeler, meta.get("info", {}), decoding,
                   components)


def compand(a):
    """``(q, top)``: 8-bit square-root companding of weights ``a`` (module docstring).

    The levels are dense near zero, where most weights lie: the smallest non-zero level is
    ``top / 127^2``.  On the previous en_ewt model it changed dev UAS by +0.03 (89.22 ->
    89.25; benchmarks/experiments/README.md).
    """
    a = np.asarray(a, dtype=np.float64)
    top = float(np.abs(a).max()) if a.size else 0.0
    if top == 0.0:
        return np.zeros(a.shape, dtype=np.int8), 0.0
    return np.rint(127.0 * np.sign(a) * np.sqrt(np.abs(a) / top)).astype(np.int8), top


def expand(q, top):
    """Weights (float64) of 8-bit codes ``q`` (inverse of :func:`compand`, up to rounding)."""
    f = np.asarray(q, dtype=np.float64)
    return np.sign(f) * (f / 127.0) ** 2 * float(top)


def _store_8bit(name, a):
    q, top = compand(a)
    nz = q != 0
    return {f"{name}_mask": np.packbits(nz), f"{name}_q8": q[nz],
            f"{name}_top": np.array([top], dtype=np.float64)}


def _store(name, a, dt):
    """The arrays that hold weight vector ``name`` in the file (dense or sparse, smaller wins).

    float16 keeps every weight to 3 significant digits, which left en_ewt dev UAS unchanged
    (87.95 either way) at half the size.
    """
    a = np.asarray(a, dtype=np.float64)
    if np.dtype(dt) == np.float16:  # (dt is a dtype name) beyond 65504 float16 is +-inf
        a = np.clip(a, -65000.0, 65000.0)
    a = a.astype(dt)
    nz = a != 0
    if np.count_nonzero(nz) * a.itemsize + a.size // 8 < a.nbytes:
        return {f"{name}_mask": np.packbits(nz), f"{name}_values": a[nz]}
    return {name: a}


def _load(z, name, path):
    """Weight vector ``name`` as float64 (None when the file has none)."""
    if name in z.files:
        return z[name].astype(np.float64)
    if f"{name}_mask" not in z.files:
        return None
    nz = np.unpackbits(z[f"{name}_mask"]).astype(bool)
    if f"{name}_q8" in z.files:
        values = expand(z[f"{name}_q8"], z[f"{name}_top"][0])
    else:
        values = z[f"{name}_values"]
    if values.shape != (np.count_nonzero(nz),):
        raise ModelError(f"{path}: {name}: {values.shape[0]} values for "
                         f"{np.count_nonzero(nz)} non-zero weights: corrupt model file")
    out = np.zeros(nz.shape[0])
    out[nz] = values
    return out


def atomic_savez(path, arrays: dict) -> None:
    """``np.savez_compressed`` to ``path`` via a temporary file in the same folder."""
    with atomic_output(path, "wb") as f:
        np.savez_compressed(f, **arrays)
