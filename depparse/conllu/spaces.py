"""The exact whitespace of a text, kept in MISC, and the text rebuilt from CoNLL-U.

UD's ``SpaceAfter=No`` says only whether a token is followed by whitespace.  To keep every
space, tab and line break of a plain-text input, depparse's tokenizer also writes UDPipe's
fields (UDPipe 1 user's manual, "Tokenizer"; Straka and Straková 2017):

``SpacesAfter=...``
    The whitespace after the token where it is not one space (``SpaceAfter=No`` stays the
    mark of none): a run of spaces, a tab, the line breaks at the end of a paragraph, the
    end of the document.
``SpacesBefore=...``
    The whitespace before the token that the token before it does not hold: the start of
    the document, and the indentation of a token that begins a line (the whitespace between
    two tokens goes to the first up to and including its last LF, the rest to the second; so a
    text read in batches cut after an LF gets the same fields as read whole).

Values are escaped as UDPipe does: ``\\s`` a space, ``\\t`` a tab, ``\\r`` and ``\\n`` the line
breaks, ``\\p`` a ``|``, ``\\\\`` a backslash.  depparse adds ``\\uXXXX`` (``\\UXXXXXXXX`` above
U+FFFF) for other whitespace and control characters (a no-break space, U+2028, a form feed),
which a CoNLL-U field should not hold as they are.

:func:`document_text` rebuilds the text: the tokens' forms (a multiword token's, not its
words'), each with its ``SpacesBefore`` and followed by its ``SpacesAfter``, else by nothing
after ``SpaceAfter=No`` and one space otherwise.  For depparse's own output of a text it is
that text, character for character (a byte-order mark at its start dropped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .sentence import Sentence

__all__ = ["document_text", "escape_spaces", "space_fields", "token_spaces", "tokens_with_misc",
           "unescape_spaces"]

_NAMED = {" ": "\\s", "\t": "\\t", "\r": "\\r", "\n": "\\n", "|": "\\p", "\\": "\\\\"}
_BACK = {"s": " ", "t": "\t", "r": "\r", "n": "\n", "p": "|", "\\": "\\"}
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.DOTALL)


def escape_spaces(s: str) -> str:
    """``s`` as a MISC value (see the module docstring)."""
    out = []
    for c in s:
        e = _NAMED.get(c)
        if e is None and (c.isspace() or not c.isprintable()):
            e = f"\\u{ord(c):04X}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08X}"
        out.append(c if e is None else e)
    return "".join(out)


def unescape_spaces(s: str) -> str:
    """The inverse of :func:`escape_spaces` (an unknown escape ``\\x`` reads as ``x``)."""
    def one(m: re.Match) -> str:
        if m.group(1) or m.group(2):
            return chr(int(m.group(1) or m.group(2), 16))
        return _BACK.get(m.group(3), m.group(3))

    return _ESCAPE.sub(one, s)


def space_fields(before: str, after: str) -> list[str]:
    """The MISC fields of a token with whitespace ``before`` it (not held by the token before)
    and ``after`` it: ``SpacesBefore``, then ``SpaceAfter=No`` or ``SpacesAfter`` (none for
    one space after)."""
    out = [f"SpacesBefore={escape_spaces(before)}"] if before else []
    if not after:
        out.append("SpaceAfter=No")
    elif after != " ":
        out.append(f"SpacesAfter={escape_spaces(after)}")
    return out


def token_spaces(misc: str) -> tuple[str, str]:
    """The whitespace before and after a token by its MISC column: ``SpacesBefore`` (else
    none), ``SpacesAfter`` (else none after ``SpaceAfter=No``, else one space)."""
    before, after, no_space = "", None, False
    if misc != "_":
        for field in misc.split("|"):
            key, _, value = field.partition("=")
            if key == "SpacesBefore":
                before = unescape_spaces(value)
            elif key == "SpacesAfter":
                after = unescape_spaces(value)
            elif key == "SpaceAfter" and value == "No":
                no_space = True
    return before, after if after is not None else "" if no_space else " "


def document_text(sentences: Iterable[Sentence]) -> str:
    """The text of ``sentences`` rebuilt from their tokens and the whitespace their MISC
    column records (see the module docstring).

    For the output of ``depparse parse --input text`` (or of
    :meth:`~depparse.inference.tokenizer.Tokenizer.tokenize`) this is the input text exactly;
    for a treebank without ``SpacesAfter`` it is its tokens joined as ``SpaceAfter=No`` says,
    with one space after each sentence.
    """
    parts = []
    for s in sentences:
        for form, misc, _ in tokens_with_misc(s):
            before, after = token_spaces(misc)
            parts += (before, form, after)
    return "".join(parts)


def tokens_with_misc(s: Sentence) -> list[tuple[str, str, list[str] | None]]:
    """The tokens of a sentence as written: ``(FORM, MISC, words)`` of each multiword token
    (its range line; ``words``: the forms of its words) and of each word outside one
    (``words`` None); empty nodes left out."""
    out: list[tuple[str, str, list[str] | None]] = []
    end = 0  # the last word inside the multiword token being read
    for line in s.lines:
        if not line or line.startswith("#"):
            continue
        cols = line.split("\t")
        wid = cols[0]
        if "." in wid:
            continue  # an empty node
        if "-" in wid:
            end = int(wid.split("-")[1])
            out.append((cols[1], cols[9], []))
        elif int(wid) <= end:
            out[-1][2].append(cols[1])  # type: ignore[union-attr]
        else:
            out.append((cols[1], cols[9], None))
    return out
