"""The server's requests: UDPipe's REST parameters read, checked and turned into a :class:`Job`.

``/process`` takes the parameters of UDPipe's REST service (UDPipe 2 API reference, method
``process``), so that an existing UDPipe client works unchanged:

``data`` (required)
    The text to process, UTF-8.
``model``
    A served model's name (``GET /models``; an alias such as ``en``), or its name as UDPipe
    names its models (``english``, ``english-ewt``, ``english-ewt-ud-2.17-251125``,
    ``en_ewt-ud-2.17-251125``: language or treebank, then UD's release and date, which are
    not checked), as ``depparse parse -m`` reads it (:mod:`depparse.catalog`); default: the
    first.
``tokenizer``
    Present: ``data`` is plain text, which the model's tokenizer splits into sentences and
    words (``depparse parse --input text``).  Its value holds UDPipe's tokenizer options
    (``;``-separated, UDPipe 1 User's Manual, Sec. 1.3): ``normalized_spaces`` writes
    ``SpaceAfter=No`` alone in MISC, not the text's exact whitespace (``SpacesAfter``,
    ``SpacesBefore``); ``presegmented``: every line is a sentence (only cut into words);
    ``ranges``: ``TokenRange=start:end`` in the MISC of every token, where it is in
    ``data`` (characters from 0, ``end`` one past the token; a multiword token's on its
    token line; ``data`` as received, a ``text/*`` part's CRLFs read as LF).  Any other
    option is refused (400).
``input``
    Without ``tokenizer``: ``conllu`` (the default), ``horizontal`` (a sentence per line,
    words separated by spaces) or ``vertical`` (a word per line, the form before the first
    tab; a blank line ends a sentence) (:mod:`depparse.conllu.formats`).  With
    ``tokenizer`` it is ``conllu`` (what UDPipe's client always sends; the tokenizer reads
    the text), or ``horizontal`` with ``tokenizer=presegmented`` (a sentence per line, the
    tokenizer cuts the words); other combinations are refused (400).
``tagger``
    Present (and not ``none``): predict UPOS, XPOS, LEMMA and FEATS of every word, as
    ``depparse parse --retag``.  Absent: only the columns that are ``_`` on every word are
    predicted, as ``depparse parse`` does (the parser needs them).  It takes no options
    (another value than an empty one, ``1``, ``true`` ... is refused: 400).
``parser``
    Present (and not ``none``): parse, filling HEAD and DEPREL.  Absent: tokenize and tag
    only.  (``/parse``, depparse's own route, parses unless ``parser=none``.)  No options,
    as ``tagger``.
``output``
    ``conllu``, the only format depparse writes.
``time_limit``
    depparse's own: seconds of decoding per sentence, at most the server's
    (``depparse serve --time-limit``); a tree not proved by then is the best one found,
    marked not proved (anytime decoding).

Every parameter may come in the URL's query string (GET or POST) or in a POST body encoded
as ``application/x-www-form-urlencoded`` or ``multipart/form-data``.  A multipart part declared
``text/*`` is in MIME's canonical form, its lines ended by CRLF (RFC 2046, Sec. 4.1.1; UDPipe's
own client sends its parameters so): its CRLFs are read as line ends (LF); a part without a
type or of another one (a file, ``curl -F data=@file``) is taken byte for byte.  Anything else is
answered with a 4xx status and one line saying what is wrong: an unknown or repeated
parameter, a value outside its choices or an option depparse cannot honour, text that is not
UTF-8, an unknown model.  Nothing asked for is ignored or replaced by a default.
"""

from __future__ import annotations

import email.parser
import email.policy
import urllib.parse
from dataclasses import dataclass

__all__ = ["EXTRA", "INPUTS", "PARAMETERS", "TOKENIZER_OPTIONS", "Job", "RequestError",
           "form_pairs", "make_job", "model_name", "query_pairs"]

#: UDPipe's parameters of ``process``.
PARAMETERS = ("model", "tokenizer", "tagger", "parser", "input", "output", "data")
#: depparse's own.
EXTRA = ("time_limit",)
#: What ``input`` may be (``text`` is depparse's name for "through the tokenizer").
INPUTS = ("conllu", "horizontal", "vertical", "text")
#: Values of ``tokenizer``/``tagger``/``parser`` that only switch the step on.
_PLAIN = ("", "1", "true", "yes", "on", "default", "tokenizer", "tagger", "parser")
#: UDPipe's tokenizer options that depparse's tokenizer honours.
TOKENIZER_OPTIONS = ("normalized_spaces", "presegmented", "ranges")


class RequestError(Exception):
    """A request the server cannot carry out: ``status`` (400, 404, 413, 415, 503 ...) and a
    one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(status, message)
        self.status = status
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Job:
    """What a worker is asked to do with one request's ``data``."""

    model: str
    data: str
    input: str  # one of INPUTS
    tag: bool  # predict all four tag columns (--retag)
    parse: bool
    time_limit: float
    warnings: tuple[str, ...] = ()
    normalized_spaces: bool = False  # the tokenizer's MISC: SpaceAfter=No alone
    presegmented: bool = False  # the tokenizer: a sentence per line
    ranges: bool = False  # the tokenizer's MISC: TokenRange=start:end


def _utf8(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RequestError(400, f"{what} is not UTF-8 text (byte {e.start + 1}: invalid "
                                f"{e.reason})") from None


def query_pairs(raw: bytes | str, what: str = "the URL's query string") -> list[tuple[str, str]]:
    """``name=value`` pairs of a query string or a url-encoded body (strictly UTF-8)."""
    text = _utf8(raw, what) if isinstance(raw, bytes) else raw
    try:
        return urllib.parse.parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text),
                                      encoding="utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise RequestError(400, f"{what}: a %-escaped value is not UTF-8 text "
                                f"(invalid {e.reason})") from None
    except ValueError as e:
        raise RequestError(400, f"{what} is not url-encoded name=value pairs ({e})") from None


def form_pairs(body: bytes, content_type: str) -> list[tuple[str, str]]:
    """The parameters of a POST body (url-encoded or multipart; none for an empty body)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if not body:
        return []
    if kind == "application/x-www-form-urlencoded":
        return query_pairs(body, "the request body")
    if kind == "multipart/form-data":
        return _multipart(body, content_type)
    raise RequestError(415, f"unsupported Content-Type {content_type or '(none)'!r}: send the "
                            "parameters url-encoded (application/x-www-form-urlencoded) or as "
                            "multipart/form-data, or in the query string")


def _multipart(body: bytes, content_type: str) -> list[tuple[str, str]]:
    head = f"Content-Type: {content_type}\r\n\r\n".encode("latin-1", "replace")
    parser = email.parser.BytesFeedParser(policy=email.policy.HTTP)
    parser.feed(head)
    parser.feed(body)
    msg = parser.close()
    parts = msg.get_payload() if msg.is_multipart() else None
    if not parts or not isinstance(parts, list):
        raise RequestError(400, "the multipart/form-data body has no parts (is its boundary "
                                "right?)")
    out = []
    for part in parts:
        name = part.get_param("name", header="content-disposition")
        if not name:
            raise RequestError(400, "a part of the multipart/form-data body has no name")
        payload = part.get_payload(decode=True)
        if payload is None:
            raise RequestError(400, f"part {name!r} of the multipart/form-data body cannot be "
                                    "read")
        value = _utf8(payload, f"parameter {name!r}")
        if str(part.get("content-type", "")).lower().startswith("text/"):
            value = value.replace("\r\n", "\n")  # a text part's canonical line ends
        out.append((str(name), value))
    return out


def _switch(params: dict, name: str, default: bool,
            known: tuple[str, ...] = ()) -> tuple[bool, set[str]]:
    """On/off of ``tokenizer``/``tagger``/``parser`` (present and not ``none`` is on), and
    which of the options ``known`` it was given.

    Raises
    ------
    RequestError
        400 for another option (one depparse cannot honour)."""
    if name not in params:
        return default, set()
    value = params[name].strip()
    if value.lower() == "none":
        return False, set()
    given = [o.strip().lower() for o in value.split(";")]
    options = [o.strip() for o, g in zip(value.split(";"), given, strict=True)
               if g not in _PLAIN + known]
    if options:
        takes = (f"takes only {', '.join(known)}" if known
                 else "takes no options (give it empty to switch it on)")
        raise RequestError(400, f"{name} option{'s' if len(options) > 1 else ''} "
                                f"{';'.join(options)!r} not known: depparse's {name} {takes}")
    return True, set(given) & set(known)


def model_name(name: str, models: dict[str, str]) -> str | None:
    """The served model that a request's ``model`` names: a served name or alias (``models``,
    also in lower case), else UDPipe's name of it without UD's release and date
    (``english-ewt-ud-2.17-251125`` -> ``english-ewt``, :func:`depparse.catalog.base_name`);
    None if none."""
    from ..catalog import base_name

    for key in (name, name.lower(), base_name(name)):
        if key in models:
            return models[key]
    return None


def make_job(pairs: list[tuple[str, str]], models: dict[str, str], default_model: str,
             max_time_limit: float, parse_default: bool = False) -> Job:
    """Check a request's parameters and make its :class:`Job`.

    Parameters
    ----------
    pairs : list of (name, value)
        From the query string and the body, in that order.
    models : dict
        Accepted model names and aliases -> the served model's name.
    max_time_limit : float
        The server's seconds per sentence (``time_limit`` may only lower it).
    parse_default : bool
        Whether an absent ``parser`` means "parse" (``/parse``) or not (``/process``).

    Raises
    ------
    RequestError
        400 for an unknown or repeated parameter, a missing ``data``, an unknown model,
        input or output format, or a bad ``time_limit``.
    """
    params: dict[str, str] = {}
    for name, value in pairs:
        if name not in PARAMETERS and name not in EXTRA:
            raise RequestError(400, f"unknown parameter {name!r}; the parameters are "
                                    f"{', '.join(PARAMETERS + EXTRA)}")
        if name in params:
            raise RequestError(400, f"parameter {name!r} is given twice")
        params[name] = value
    if "data" not in params:
        raise RequestError(400, "the parameter 'data' is required (the text to process)")
    name = params.get("model", "") or default_model
    model = model_name(name, models)
    if model is None:
        raise RequestError(400, f"the requested model {name!r} does not exist; this server "
                                f"has {', '.join(sorted(set(models.values())))} (GET /models)")
    tokenize, options = _switch(params, "tokenizer", False, TOKENIZER_OPTIONS)
    kind = params.get("input", "conllu").strip() or "conllu"
    if kind not in INPUTS:
        raise RequestError(400, f"unknown input format {kind!r}; depparse reads "
                                f"{', '.join(INPUTS)}")
    if tokenize and kind not in ("conllu", "text") and not (
            kind == "horizontal" and "presegmented" in options):
        raise RequestError(400, f"input={kind} cannot be tokenized: the tokenizer reads plain "
                                "text (input=conllu, what UDPipe's client sends, or none); "
                                "leave out tokenizer to read the words as they are, or give "
                                "tokenizer=presegmented for a sentence per line")
    tag = _switch(params, "tagger", False)[0]
    parse = _switch(params, "parser", parse_default)[0]
    out = params.get("output", "conllu").strip() or "conllu"
    if out != "conllu":
        raise RequestError(400, f"unknown output format {out!r}; depparse writes conllu")
    limit = max_time_limit
    if params.get("time_limit", "").strip():
        try:
            limit = float(params["time_limit"])
        except ValueError:
            raise RequestError(400, f"time_limit must be a number of seconds, not "
                                    f"{params['time_limit']!r}") from None
        if not 0 < limit <= max_time_limit:
            raise RequestError(400, f"time_limit must be > 0 and at most {max_time_limit:g} "
                                    "seconds (the server's limit, depparse serve --time-limit)")
    return Job(model, params["data"], "text" if tokenize else kind, tag, parse, limit, (),
               "normalized_spaces" in options, "presegmented" in options, "ranges" in options)
