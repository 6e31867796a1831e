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

__all__ = ["DEFAULT_NAME", "GROUP", "LANGUAGES", "LANGUAGE_EXCESS", "LanguageFit",
           "ModelEntry", "base_name", "card_scores", "check_language", "find", "language_name",
           "language_verdict", "models", "not_found_message"]

#: The entry-point group of model packages.
GROUP = "depparse.models"
#: The model :func:`depparse.load` loads when given no name.
DEFAULT_NAME = "en_ewt_gs"
#: How to get the models that are not installed (said with every "not found").
HOW_TO_GET = ("build the shipped ones in a checkout of depparse with `make dist "
              "model-packages` and install one with `python3 -m pip install --find-links "
              "dist depparse-model-<lang>-<treebank>` (docs/install.md), or train one with "
              "`depparse train` and give its path")


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


def language_name(lang: str) -> str:
    """A language code's English name for people (``gd`` -> ``Scottish Gaelic``), from
    :data:`LANGUAGES`; the code itself where it is not there."""
    return LANGUAGES.get(lang, lang).replace("_", " ").title()


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


# ---------------------------------------------------------------------------------------
# the language check: does the input look like the model's training data?

#: A sample of :data:`LANGUAGE_ABSOLUTE_CHARS` or more scored more than this above its
#: model's own level (bits per character trigram, :func:`depparse.encoding.language.excess`)
#: is not the model's language.  Measured (benchmarks/results/language_check.md: ``python
#: benchmarks/language_profiles.py measure``, every dev and test file of the corpora in
#: samples of 2,000 characters, under the 20 shipped models): the models' own dev samples
#: score at most 1.00 (is_modern; en_ewt 0.77), their test samples at most 1.01 but one of
#: is_modern's 21 (1.30, the one false alarm); the other languages at least 1.37 under en_ewt
#: (Italian), 1.6 under fo, hu, mt; the close pairs pass: Galician under pt_bosque (0.31) and
#: Portuguese under gl_treegal (0.42), Faroese under is_modern (1.07), a few Dutch samples
#: under af_afribooms (0.90) and Italian under pt and gl.
LANGUAGE_EXCESS = 1.2
#: Another model is named when the sample's excess under it is lower by this much: no sample
#: of 300 characters or more of a shipped model's language is nearer another shipped model
#: by this much (the measurement above: none of 8,342, 5,482 of them of 300 characters).
LANGUAGE_MARGIN = 1.0
#: Below this many characters a text is too short to tell (a greeting, a name): no check.
LANGUAGE_MIN_CHARS = 100
#: What the check reads of an input: its first sentences up to this many characters.
LANGUAGE_SAMPLE_CHARS = 2000
#: Samples shorter than this are compared with the other models alone (the margin): English
#: web text is too varied to be judged alone on less (en_ewt's own samples of 1,000
#: characters score up to 2.06, of 300 up to 3.42).
LANGUAGE_ABSOLUTE_CHARS = LANGUAGE_SAMPLE_CHARS
#: A shorter sample's better model is named only if it scores at most this: the highest
#: excess of a shipped model's own 300-character samples (3.42, en_ewt test) rounded up, so
#: that Korean (6.1 and more under every shipped model) is told no model fits, not to use
#: the Turkish one.
LANGUAGE_SHORT_EXCESS = 3.5

#: Another model is a candidate only where its profile keeps at least this share of the
#: sample's trigrams that the current model's keeps (:func:`language_verdict`'s ``known``):
#: the profile of another script scores text evenly, so its excess says nothing.  Measured
#: (the measurement above, samples of 300 and 1,000 characters): the 4 own-language false
#: alarms (en_ewt test: web addresses and invoice lists, named the Korean model) had ratios
#: 0.11-0.41; of the 223,783 other-language samples caught before, 16,652 had a ratio under
#: 0.5, all of them with the Korean model as the lower excess (Latin text: it no longer
#: counts), and 2,000 more between 0.5 and 1 (kept).
LANGUAGE_KNOWN_RATIO = 0.5


def language_verdict(excesses: dict, current: str, chars: int,
                     known: dict | None = None) -> tuple[bool, str | None]:
    """``(fits, better)`` of a sample of ``chars`` characters: whether it fits the model
    ``current``, and the model that fits it better (or None), from its
    :func:`~depparse.encoding.language.excess` under each model (``{name: bits}``,
    ``current`` among them).  See :data:`LANGUAGE_EXCESS` and the constants after it.

    ``known``: the share of the sample's trigrams each model's profile keeps
    (:func:`~depparse.encoding.language.known_share`); a model that knows less than
    :data:`LANGUAGE_KNOWN_RATIO` times the share ``current`` knows is no candidate, whatever
    its excess (the profile of another script: en_ewt's web addresses and invoice lists of
    300 characters scored lower under Korean's, which knew 8-23% of their trigrams against
    English's 58-76%)."""
    if chars < LANGUAGE_MIN_CHARS or current not in excesses:
        return True, None
    own = excesses[current]
    judged = chars >= LANGUAGE_ABSOLUTE_CHARS
    if judged and own <= LANGUAGE_EXCESS:
        return True, None
    if known is not None and current in known:
        excesses = {k: v for k, v in excesses.items()
                    if k == current
                    or known.get(k, 0.0) >= LANGUAGE_KNOWN_RATIO * known[current]}
    best = min(excesses, key=lambda k: (excesses[k], k != current))
    if best != current and own - excesses[best] >= LANGUAGE_MARGIN:
        limit = LANGUAGE_EXCESS if judged else LANGUAGE_SHORT_EXCESS
        return False, (best if excesses[best] <= limit else None)
    return not judged, None


@dataclass(frozen=True)
class LanguageFit:
    """What the language check found of an input (:func:`check_language`).

    Attributes
    ----------
    model : str
        The model that parses it (its name, or its file's stem).
    fits : bool
        Whether the input looks like the model's training data.
    better : ModelEntry or None
        A shipped model that fits it better.
    excess : dict
        Bits per trigram over each model's own level, by model name.
    chars : int
        Characters read.
    """

    model: str
    fits: bool
    better: ModelEntry | None
    excess: dict
    chars: int

    def message(self, source: str, advice=None) -> str | None:
        """The warning to give (None when the input fits): ``source`` is the input's name;
        ``advice(entry)`` says how to use the model that fits better (default: ``parse it
        with -m LANG``, the command line's way)."""
        if self.fits:
            return None
        mine = self.excess[self.model]
        head = (f"{source}: this does not look like the language of model {self.model} (its "
                f"first {self.chars:,} characters score {mine:.1f} bits per character trigram "
                f"over the model's own text; over {LANGUAGE_EXCESS} is another language), so "
                "it is parsed, tokenised and tagged poorly")
        if self.better is not None:
            how = (advice or (lambda e: f"parse it with -m {e.lang}"))(self.better)
            return (f"{head}; model {self.better.name} ({self.better.lang}) fits it better: "
                    f"{how}")
        others = sorted({e.lang for e in _profiled() if e.name != self.model})
        return (f"{head}; it fits none of the models installed"
                + (f" ({', '.join(others)} besides)" if others else "")
                + ": train one for its language with `depparse train`")

    def to_json(self) -> dict:
        return {"model": self.model, "fits": self.fits,
                "better": None if self.better is None else self.better.name,
                "better_option": None if self.better is None else f"-m {self.better.lang}",
                "chars": self.chars, "excess": {k: round(v, 3) for k, v in self.excess.items()},
                "threshold": LANGUAGE_EXCESS}


_PROFILES: dict = {}


def _profile(path: Path):
    """The character profile beside a model file (None where there is none or it cannot be
    read), read once per process."""
    from .encoding.language import Profile, profile_path

    p = profile_path(path)
    try:
        key = (str(p.resolve()), p.stat().st_mtime_ns)
    except OSError:
        return None
    if key not in _PROFILES:
        try:
            _PROFILES[key] = Profile.load(p)
        except (OSError, ValueError, KeyError, TypeError) as e:
            warnings.warn(f"{p}: the model's character profile cannot be read ({e}); the "
                          "language check is off for it", InputWarning, stacklevel=3)
            _PROFILES[key] = None
    return _PROFILES[key]


_PROFILED: list = []


def _profiled() -> list[ModelEntry]:
    """The known models that have a character profile (listed once per process)."""
    if not _PROFILED:
        _PROFILED.append([e for e in models() if _profile(e.path) is not None])
    return _PROFILED[0]


def check_language(model_path, texts) -> LanguageFit | None:
    """The language check of an input (its sentences' texts, the first
    :data:`LANGUAGE_SAMPLE_CHARS` characters of them read) for the model in ``model_path``.

    Every known model with a character profile (:func:`models`; the profile is a file beside
    the model, :func:`depparse.encoding.language.profile_path`) is a candidate, so a model
    shipped later is named without a change here.  None where the model has no profile.
    """
    from .encoding.language import trigrams

    path = Path(model_path)
    own = _profile(path)
    if own is None:
        return None
    sample, chars = [], 0
    for t in texts:
        if chars >= LANGUAGE_SAMPLE_CHARS:
            break
        sample.append(t)
        chars += len(t)
    try:
        here = path.resolve()
    except OSError:
        here = path
    current = next((e for e in _profiled() if e.path.resolve() == here), None)
    name = current.name if current is not None else path.stem
    # the sample's trigrams once, scored under every profile (excess: bits over its level)
    grams = [g for t in sample for g in trigrams(t)]
    profiles = {name: own, **{e.name: _profile(e.path) for e in _profiled() if e.name != name}}
    scores = {n: p.bits(grams) - (p.held_out_bits or 0.0) for n, p in profiles.items()}
    known = {n: p.known(grams) for n, p in profiles.items()}
    if any(v != v for v in scores.values()):  # nan: no trigram to score
        return LanguageFit(name, True, None, {}, chars)
    fits, better = language_verdict(scores, name, chars, known)
    entry = next((e for e in _profiled() if e.name == better), None)
    return LanguageFit(name, fits, entry, scores, chars)
