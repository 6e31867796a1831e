"""Model files: configuration + vocabularies + weights, versioned, written atomically.

A model is one ``.npz`` file (NumPy's zip of arrays; loaded with ``allow_pickle=False``, so
it can never execute code) holding:

``meta``      uint8 — UTF-8 JSON: ``{"format": "depparse-model", "version": 1, "config": {...},
              "vocab": {...}, "info": {...}}``
``weights``   float16 (or float32) — averaged perceptron weights of the parser (hashed,
              ``2**bits``)
``pruner``    weights of the arc-factored pruner (``2**pruner_bits``), if any
``labeler``   weights of the dependency labeler (``2**labeler_bits``), if any

Since format version 2 a weight vector that is mostly zeros (hashed feature tables with more
buckets than features) is stored sparsely as two arrays, ``<name>_mask`` (``np.packbits`` of
``w != 0``) and ``<name>_values`` (the non-zero weights in index order); the loader accepts
either form.

Loading a file that is not a model, is truncated or corrupt, or was written by a newer
version of depparse raises :class:`ModelError` with a message that says which.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from .sentence import Vocabularies

__all__ = ["ModelConfig", "Model", "ModelError", "FORMAT", "VERSION"]

FORMAT = "depparse-model"
VERSION = 2  # 2: sparse weight arrays (see above)
MODEL_TYPES = ("mst", "sib", "gs")


class ModelError(Exception):
    """A model file cannot be used (missing, corrupt, wrong format or version)."""


@dataclass
class ModelConfig:
    """Everything that defines a model besides its weights."""

    model: str = "gs"  # mst | sib | gs
    bits: int = 23  # parser weights: 2**bits
    pruner_bits: int = 21
    prune_threshold: float = 1e-5
    prune_max_heads: int = 20
    projective: bool = False
    single_root: bool = True
    alpha: float = 0.001
    max_iter: int = 5000
    min_count: int = 2  # rarer training words count as <UNK>, so unknown words get weights
    train_over: str = "Z"  # Z (head automata only, Koo et al. Sec. 6) or Y (dual decomposition)
    # contextual word classes (depparse.encoder): encoder layer (0: none), fine / coarse classes
    context_layer: int = 0
    context_classes: int = 1024
    context_coarse: int = 0  # 0: min(64, context_classes // 16), at least 1
    loss_aug: float = 1.0  # training: add this to the score of every wrong arc (cost-augmented)
    update: str = "pa"  # pa (averaged PA-I, Crammer et al. 2006) | perceptron (Collins 2002)
    pa_c: float = 1.0  # PA-I aggressiveness cap C
    labeler_bits: int = 20
    storage: str = "float16"  # dtype of the weights in the file (float16 or float32)
    # the feature templates the weights belong to (FEATURE_SET of depparse.features) and the
    # labeler's decoding (LABELER_KIND of depparse.learn.labeler); files written before these
    # were recorded used feature set 1 and the per-arc labeler
    feature_set: int = 0  # 0: the current one (filled in by __post_init__)
    labeler_kind: str = ""  # "": the current one
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.model not in MODEL_TYPES:
            raise ValueError(f"model must be one of {MODEL_TYPES}, got {self.model!r}")
        if self.train_over not in ("Z", "Y"):
            raise ValueError("train_over must be 'Z' or 'Y'")
        if self.update not in ("perceptron", "pa"):
            raise ValueError("update must be 'perceptron' or 'pa'")
        if self.storage not in ("float16", "float32"):
            raise ValueError("storage must be 'float16' or 'float32'")
        if not 0.0 <= float(self.prune_threshold) <= 1.0:
            raise ValueError(f"pruning threshold must be in [0, 1], got {self.prune_threshold}")
        if int(self.prune_max_heads) != self.prune_max_heads or self.prune_max_heads < 1:
            raise ValueError(f"max_heads must be an integer >= 1, got {self.prune_max_heads}")
        if not self.context_coarse:
            self.context_coarse = min(64, max(1, self.context_classes // 16))
        self.prune_threshold = float(self.prune_threshold)
        self.prune_max_heads = int(self.prune_max_heads)
        from .features import FEATURE_SET
        from .learn.labeler import LABELER_KIND

        self.feature_set = self.feature_set or FEATURE_SET
        self.labeler_kind = self.labeler_kind or LABELER_KIND

    @property
    def order(self) -> int:
        """0 arcs only, 1 + siblings, 2 + grandparents and grand-siblings."""
        return MODEL_TYPES.index(self.model)

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        known = {f.name for f in fields(cls)}
        d = {"feature_set": 1, "labeler_kind": "arc", **d}  # files older than these fields
        return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class Model:
    """A trained model (see the module docstring for the file format)."""

    config: ModelConfig
    vocab: Vocabularies
    weights: np.ndarray
    pruner: np.ndarray | None = None
    labeler: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    def save(self, path) -> None:
        """Write the model to ``path`` atomically (temporary file, fsync, rename)."""
        meta = {"format": FORMAT, "version": VERSION, "config": asdict(self.config),
                "vocab": self.vocab.to_json(), "info": self.info}
        dt = np.dtype(self.config.storage)
        arrays = {"meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)}
        for name in ("weights", "pruner", "labeler"):
            a = getattr(self, name)
            if a is not None:
                arrays.update(_store(name, a, dt))
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
                vocab = Vocabularies.from_json(meta["vocab"])
                if "weights" not in z.files and "weights_mask" not in z.files:
                    raise ModelError(f"{path}: model file has no parser weights")
                weights = _load(z, "weights", path)
                pruner = _load(z, "pruner", path)
                labeler = _load(z, "labeler", path)
        except ModelError:
            raise
        except (zipfile.BadZipFile, zlib.error, OSError, ValueError, KeyError, EOFError,
                UnicodeDecodeError, TypeError) as e:
            # numpy's message for a file that is no zip at all suggests allow_pickle: not ours
            why = e if zipfile.is_zipfile(path) else "not a complete .npz archive"
            raise ModelError(f"{path}: model file is corrupt or truncated ({why})") from None
        from .features import FEATURE_SET
        from .learn.labeler import LABELER_KIND

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
        return cls(config, vocab, weights, pruner, labeler, meta.get("info", {}))


def _store(name, a, dt):
    """The arrays that hold weight vector ``name`` in the file (dense or sparse, smaller wins).

    float16 keeps every weight to 3 significant digits, which left en_ewt dev UAS unchanged
    (87.95 either way) at half the size.
    """
    a = np.asarray(a, dtype=np.float64)
    if dt == np.float16:
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
    values = z[f"{name}_values"]
    if values.shape != (np.count_nonzero(nz),):
        raise ModelError(f"{path}: {name}: {values.shape[0]} values for "
                         f"{np.count_nonzero(nz)} non-zero weights: corrupt model file")
    out = np.zeros(nz.shape[0])
    out[nz] = values
    return out


def atomic_savez(path, arrays: dict) -> None:
    """``np.savez_compressed`` to ``path`` via a temporary file in the same folder."""
    from .atomic import atomic_output

    with atomic_output(path, "wb") as f:
        np.savez_compressed(f, **arrays)
