"""Where Numba keeps depparse's compiled kernels, and when it must compile them afresh.

Numba's ``cache=True`` checks the source of a kernel's own file only: a kernel that calls a
kernel of another module (or reads one of its constants) keeps stale machine code after that
module changes.  So depparse files its kernels in folders named by a hash of the sources they
may depend on.  By the layer order (``.layers`` at the repository root, :data:`LAYERS` here) a
module imports only from its own layer and the layers below, so a kernel of layer ``i``
depends on nothing but the modules of layers ``0 .. i``: its folder is named by their hash.
An edit to the command line, the reports or the trainer then leaves the decoders' compiled
code in place, and an edit to a decoder recompiles every layer above it.

Only depparse's own kernels go there: a cache locator is put in front of Numba's own, and it
answers for files of this package alone (other libraries' cached functions keep Numba's
default places, and ``numba.config.CACHE_DIR`` is left as the user set it).  A
``NUMBA_CACHE_DIR`` set by the user is respected: depparse's kernels go below it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["LAYERS", "cache_root", "install", "layer_of", "source_key"]

#: The layer order, lowest first: module or subpackage names of ``depparse``.  The same list
#: as ``.layers`` (a test holds them equal).
LAYERS = (
    ("errors", "atomic", "paths", "kernel_cache"),
    ("conllu",),
    ("encoding",),
    ("decode",),
    ("features", "network"),
    ("config", "model", "recipes"),
    ("inference",),
    ("report", "viewer"),
    ("evaluate",),
    ("learn",),
    ("api", "catalog", "distributed", "shards", "serve"),
    ("cli", "demo", "spacy"),
)

PACKAGE_ROOT = Path(__file__).resolve().parent
_KEYS: dict[int, str] = {}


def layer_of(path) -> int:
    """Layer index of a source file of the package (the top layer for one on no layer)."""
    rel = Path(path).resolve().relative_to(PACKAGE_ROOT)
    head = rel.parts[0].removesuffix(".py")
    for i, names in enumerate(LAYERS):
        if head in names:
            return i
    return len(LAYERS) - 1


def source_key(layer: int) -> str:
    """Hash of every source file on layers ``0 .. layer`` (names and contents)."""
    if layer not in _KEYS:
        h = hashlib.sha1()
        for p in sorted(PACKAGE_ROOT.rglob("*.py")):
            if p.name == "__init__.py" and p.parent == PACKAGE_ROOT:
                continue  # the package's own __init__ holds no kernel and imports upwards
            if layer_of(p) <= layer:
                h.update(p.relative_to(PACKAGE_ROOT).as_posix().encode())
                h.update(p.read_bytes())
        _KEYS[layer] = h.hexdigest()[:16]
    return _KEYS[layer]


def cache_root() -> Path:
    """``$NUMBA_CACHE_DIR/depparse``, else the package's ``__pycache__/numba`` when it is
    writable, else ``$XDG_CACHE_HOME/depparse/numba`` (``~/.cache``)."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env) / "depparse"
    if os.access(PACKAGE_ROOT, os.W_OK):
        return PACKAGE_ROOT / "__pycache__" / "numba"
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "depparse" / "numba"


def _locator_class():
    from numba.core import caching

    base = (getattr(caching, "UserProvidedCacheLocator", None)  # (the name before 0.61:)
            or caching._UserProvidedCacheLocator)

    class DepparseCacheLocator(base):
        """Numba cache locator for the kernels of depparse's own source files."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            layer = layer_of(py_file)
            self._cache_path = str(cache_root() / f"{layer:02d}-{source_key(layer)}"
                                   / self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                Path(py_file).resolve().relative_to(PACKAGE_ROOT)
            except (ValueError, OSError):
                return None  # not ours: Numba's own locators decide
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:
                return None  # not writable: Numba's own locators decide
            return self

    return DepparseCacheLocator


def install():
    """Put depparse's cache locator in front of Numba's (once per process)."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # (the name before 0.61)
    classes = impl._locator_classes
    if not any(c.__name__ == "DepparseCacheLocator" for c in classes):
        classes.insert(0, _locator_class())
