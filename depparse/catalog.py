"""The models depparse knows by name: installed model packages, and a checkout's ``models/``.

Models ship the way spaCy ships its pipelines: each is a package of its own
(``depparse-model-en-ewt``, ``depparse-model-pt-bosque`` ...; built by ``make
model-packages`` from the model file and its card with the template in ``packaging/``) whose
module holds the ``.npz`` file and the card and declares itself under the entry-point group
``depparse.models``::

    [project.entry-points."depparse.models"]
    en_ewt_gs = "depparse_model_en_ewt"

The module gives ``META`` (``name``, ``lang``, ``treebank``, ``version``, ``model`` and
``card``: the files beside it).  A checkout of the repository also has its models as files in
``models/`` (:func:`depparse.paths.models_dir`): they come first, so that ``make demo`` and
the tests in a checkout need no package, and a model retrained there is the one loaded.

A model answers to its name (``en_ewt_gs``), its treebank (``en_ewt``), its language
(``en``, where one model of the language is known), its package's name
(``depparse-model-en-ewt``) and the names UDPipe gives its models (``english``,
``english-ewt``, ``english-ewt-ud-2.17-251125``, ``en_ewt-ud-2.17-251125``: UDPipe 2's
server answers to every prefix of a model's name cut at a ``-``; the UD release and date at
the end are not checked, :func:`base_name`), so that a UDPipe client's ``--model`` works
with ``depparse serve`` and the same name with ``depparse parse -m``.  :func:`find` resolves
a name, :func:`models` lists them all, :func:`card_scores` reads the test scores a card
reports.
"""

from __future__ import annotations

import importlib.metadata as md
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputWarning, ModelError
from .paths import models_dir

__all__ = ["DEFAULT_NAME", "GROUP", "LANGUAGES", "ModelEntry", "base_name", "card_scores",
           "find", "models", "not_found_message"]

#: The entry-point group of model packages.
GROUP = "depparse.models"
#: The model :func:`depparse.load` loads when given no name.
DEFAULT_NAME = "en_ewt_gs"
#: How to get the models that are not installed (said with every "not found").
HOW_TO_GET = ("build the shipped ones in a checkout of depparse with `make model-packages` "
              "and `pip install dist/depparse_model_*.whl`, or train one with `depparse "
              "train` and give its path")


#: UD's language codes -> the language's name in UDPipe's model names (UD's English name,
#: lower case, ``_`` between words: ``english-ewt-ud-2.17-251125``, ``ancient_greek-...``).
LANGUAGES = {
    "af": "afrikaans", "ar": "arabic", "be": "belarusian", "bg": "bulgarian", "ca": "catalan",
    "cop": "coptic", "cs": "czech", "cu": "old_church_slavonic", "cy": "welsh",
    "da": "danish", "de": "german", "el": "greek", "en": "english", "es": "spanish",
    "et": "estonian", "eu": "basque", "fa": "persian", "fi": "finnish", "fo": "faroese",
    "fr": "french", "ga": "irish", "gd": "scottish_gaelic", "gl": "galician",
    "got": "gothic", "grc": "ancient_greek", "he": "hebrew", "hi": "hindi", "hr": "croatian",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "is": "icelandic",
    "it": "italian", "ja": "japanese", "ko": "korean", "la": "latin", "lt": "lithuanian",
    "lv": "latvian", "mr": "marathi", "mt": "maltese", "nl": "dutch", "no": "norwegian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sk": "slovak",
    "sl": "slovenian", "sme": "north_sami", "sr": "serbian", "sv": "swedish", "ta": "tamil",
    "tr": "turkish", "ug": "uyghur", "uk": "ukrainian", "ur": "urdu", "vi": "vietnamese",
    "wo": "wolof", "zh": "chinese",
}

#: UDPipe's model name after its language and treebank: ``-ud``, the UD release, the date.
_UD_RELEASE = re.compile(r"-ud(?:-\d+(?:\.\d+)*(?:-\d{6})?)?$")


def base_name(name: str) -> str:
    """A UDPipe model name without the UD release and date that end it (lower case):
    ``english-ewt-ud-2.17-251125``, ``english-ewt-ud-2.17`` and ``english-ewt-ud`` ->
    ``english-ewt``; ``en_ewt-ud-2.17-251125`` -> ``en_ewt``; other names as they are."""
    key = str(name).lower()
    return _UD_RELEASE.sub("", key) if "-" in key else key


@dataclass(frozen=True)
class ModelEntry:
    """One model depparse can load by name.

    Attributes
    ----------
    name : str
        ``<treebank>_<kind>``, e.g. ``en_ewt_gs``.
    lang, treebank : str
        ISO 639 code and UD treebank code (``en``, ``en_ewt``).
    version : str
        The package's version; for a checkout's file, the version of the depparse it is in
        (the version ``make model-packages`` gives its package).
    path : Path
        The model file (``.npz``).
    card : Path or None
        The model card (Markdown), if there is one.
    source : str
        ``"package"`` or ``"checkout"``.
    package : str or None
        The distribution's name for a package.
    """

    name: str
    lang: str
    treebank: str
    version: str
    path: Path
    card: Path | None = None
    source: str = "checkout"
    package: str | None = None
    aliases: tuple = field(default=(), compare=False)

    def names(self) -> set[str]:
        """Every name it answers to (lower case), UDPipe's language and language-treebank
        names among them (``english``, ``english-ewt``; with the UD release and date after
        them they are :func:`base_name`'s to strip)."""
        out = {self.name, self.treebank, self.lang, *self.aliases}
        if self.package:
            out |= {self.package, self.package.replace("-", "_")}
        language = LANGUAGES.get(self.lang.lower())
        if language:
            out.add(language)
            corpus = self.treebank.split("_", 1)[1] if "_" in self.treebank else ""
            if corpus:
                out.add(f"{language}-{corpus}")
        return {n.lower() for n in out}

    @property
    def size(self) -> int:
        """Bytes of the model file (0 if it is missing)."""
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def describe(self) -> str:
        """``en_ewt_gs (en, en_ewt; package depparse-model-en-ewt 0.2.0)``."""
        where = (f"package {self.package} {self.version}" if self.source == "package"
                 else f"checkout {self.path.parent}")
        return f"{self.name} ({self.lang}, {self.treebank}; {where})"


def _from_file(path: Path) -> ModelEntry:
    from . import __version__  # a package built from this checkout carries depparse's version

    parts = path.stem.split("_")
    card = path.with_suffix(".md")
    return ModelEntry(name=path.stem, lang=parts[0], treebank="_".join(parts[:2]),
                      version=__version__, path=path, card=card if card.is_file() else None)


def _from_entry_point(ep) -> ModelEntry | None:
    dist = getattr(ep, "dist", None)
    package = dist.metadata["Name"] if dist is not None else ep.value.split(":")[0]
    try:
        module = ep.load()
        meta = dict(module.META)
        here = Path(module.__file__).resolve().parent
        path = here / meta["model"]
        card = here / meta["card"] if meta.get("card") else None
        if not path.is_file():
            raise FileNotFoundError(f"{path}: missing")
        return ModelEntry(name=str(meta["name"]), lang=str(meta["lang"]),
                          treebank=str(meta["treebank"]),
                          version=str(meta.get("version") or (dist.version if dist else "?")),
                          path=path, card=card if card and card.is_file() else None,
                          source="package", package=package,
                          aliases=tuple(meta.get("aliases", ())))
    except Exception as e:  # noqa: BLE001 - one broken package must not hide the others
        warnings.warn(f"model package {package} (entry point {ep.name} = {ep.value}) cannot "
                      f"be used: {type(e).__name__}: {e}; reinstall it or `pip uninstall "
                      f"{package}`", InputWarning, stacklevel=3)
        return None


def models() -> list[ModelEntry]:
    """Every model known by name: the checkout's ``models/*.npz`` first, then the installed
    packages (a package whose model name the checkout already has is left out), each group
    sorted by name."""
    out: list[ModelEntry] = []
    folder = models_dir()
    if folder is not None:
        out += [_from_file(p) for p in sorted(folder.glob("*.npz"))]
    seen = {e.name for e in out}
    eps = sorted(md.entry_points(group=GROUP), key=lambda ep: ep.name)
    for ep in eps:
        e = _from_entry_point(ep)
        if e is not None and e.name not in seen:
            out.append(e)
            seen.add(e.name)
    return out


def not_found_message(name, known: list[ModelEntry], path: bool = False) -> str:
    """What to say when ``name`` is no model (``path``: no model file at that path): what
    there is and how to get the rest."""
    have = "; ".join(e.describe() for e in known) or "none"
    what = "model file not found" if path else "no model of that name or file of that path"
    return f"{name}: {what}; installed models: {have}; {HOW_TO_GET}"


def find(name: str) -> ModelEntry:
    """The model that answers to ``name`` (case-insensitive).

    Raises
    ------
    ModelError
        If none does (the message lists the installed models and how to get the others), or
        if a language code names several models (the message lists them).
    """
    known = models()
    key = str(name).lower()
    exact = [e for e in known if key in (e.name.lower(), e.treebank.lower())]
    hits = exact or [e for e in known if key in e.names()]
    if not hits and base_name(key) != key:  # UDPipe's name, with a UD release and date
        return find(base_name(key))
    if len(hits) == 1 or (hits and len({e.name for e in hits}) == 1):
        return hits[0]
    if hits:
        raise ModelError(f"{name}: several models answer to this name: "
                         + "; ".join(e.describe() for e in hits) + "; give one of their names")
    raise ModelError(not_found_message(name, known))


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def card_scores(card: Path | str | None) -> dict[str, dict[str, float]]:
    """The test scores a model card reports for depparse: ``{setting: {metric: value}}``.

    Read from the card's first Markdown table whose header starts with ``| setting |``, or
    with ``| system | setting |`` (then the rows of system ``depparse``; the others are
    published figures of other parsers): the tables ``benchmarks/make_model.py`` writes, one
    row per UD setting, ``–`` where a metric does not apply.  ``{}`` without a card or such a
    table.
    """
    if card is None:
        return {}
    try:
        text = Path(card).read_text(encoding="utf-8")
    except OSError:
        return {}
    out: dict[str, dict[str, float]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            first = [c.lower() for c in cells[:2]]
            if line.startswith("|") and (first[:1] == ["setting"]
                                         or first == ["system", "setting"]):
                header = cells
            continue
        if not line.startswith("|"):
            break
        if set(line) <= set("|-: "):
            continue
        if header[0].lower() == "system":
            if cells[0] != "depparse":
                continue
            cells, names = cells[1:], header[1:]
        else:
            names = header
        out[cells[0]] = {h: float(c) for h, c in zip(names[1:], cells[1:], strict=False)
                         if _NUMBER.match(c) and h.lower() != "words/s"}
    return out
