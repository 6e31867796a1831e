"""Lemma edit scripts: the classes of the lemmatizer.

A lemma is predicted as an *edit script* that turns the word form into it (Chrupała 2006;
Straka and Straková 2017, UDPipe, use such "lemma rules"; Müller et al. 2015, Lemming, edit
trees): a case mode and the strings to strip and add at either end.  A script is the tuple
``(case, pre_strip, pre_add, suf_strip, suf_add)``, applied to the *base*, the form itself
(case ``"k"``) or its lower-case (cases ``"l"``, ``"t"``, ``"u"``)::

    base = form if case == "k" else form.lower()
    lemma = pre_add + base[len(pre_strip):len(base) - len(suf_strip)] + suf_add
    then "t": the first character upper-cased; "u": all of it upper-cased

where the base must start with ``pre_strip`` and end with ``suf_strip``.  :func:`derive`
finds, for a pair, the script of fewest edited characters (the kept middle is the longest
common substring of base and lemma, the leftmost one), preferring the lower-case base on a
tie, so that *running*/*Running* -> *run* are one class; it checks every script it returns
by :func:`apply`, and any pair has one (in the worst case case ``"k"`` with the whole form
stripped and the whole lemma added).  Scripts that strip a whole word only apply to forms
ending in that word, so they act as lexical exceptions (*was* -> *be*).

The lemmatizer (:mod:`depparse.inference.tagging`) chooses among the training scripts that
apply to a word (:class:`ScriptIndex`) with a linear classifier.

References
----------
G. Chrupała. Simple data-driven context-sensitive lemmatization. Procesamiento del Lenguaje
Natural 37, 2006.
T. Müller, R. Cotterell, A. Fraser and H. Schütze. Joint lemmatization and morphological
tagging with Lemming. EMNLP 2015.
M. Straka and J. Straková. Tokenizing, POS tagging, lemmatizing and parsing UD 2.0 with
UDPipe. CoNLL 2017 Shared Task.
"""

from __future__ import annotations

__all__ = ["CASES", "ScriptIndex", "apply", "derive", "from_key", "key"]

#: Case modes, in the order :func:`derive` prefers them on a tie.
CASES = ("l", "k", "t", "u")


def apply(script: tuple, form: str) -> str | None:
    """The lemma that ``script`` makes of ``form``, or None where it does not apply.

    Parameters
    ----------
    script : tuple of str
        ``(case, pre_strip, pre_add, suf_strip, suf_add)`` (module docstring).
    form : str

    Returns
    -------
    str or None
    """
    case, ps, pa, ss, sa = script
    base = form if case == "k" else form.lower()
    if len(base) < len(ps) + len(ss) or not base.startswith(ps) or not base.endswith(ss):
        return None
    out = pa + base[len(ps):len(base) - len(ss)] + sa
    if case == "t":
        return out[:1].upper() + out[1:]
    if case == "u":
        return out.upper()
    return out


def _common(a: str, b: str) -> tuple[int, int, int]:
    """``(i, j, length)`` of the longest common substring of ``a`` and ``b`` (leftmost in
    ``a``, then in ``b``); ``(len(a), len(b), 0)`` when there is none."""
    best = (len(a), len(b), 0)
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            if ai == b[j - 1]:
                c = prev[j - 1] + 1
                cur[j] = c
                if c > best[2]:
                    best = (i - c, j - c, c)
        prev = cur
    return best


def _edits(base: str, lemma: str) -> tuple[str, str, str, str]:
    i, j, n = _common(base, lemma)
    if n == 0:
        return "", "", base, lemma
    return base[:i], lemma[:j], base[i + n:], lemma[j + n:]


def derive(form: str, lemma: str) -> tuple:
    """The edit script of fewest edited characters that makes ``lemma`` of ``form``.

    Parameters
    ----------
    form, lemma : str

    Returns
    -------
    tuple of str
        ``(case, pre_strip, pre_add, suf_strip, suf_add)``; ``apply(derive(f, l), f) == l``
        for every pair of non-empty strings.
    """
    best = None
    best_cost = -1
    lower = form.lower()
    for case in CASES:
        base = form if case == "k" else lower
        if case == "t":
            if not lemma or lemma[:1].upper() + lemma[1:] != lemma:
                continue
            target = lemma[:1].lower() + lemma[1:]
        elif case == "u":
            if lemma.upper() != lemma or lemma.lower() == lemma:
                continue
            target = lemma.lower()
        else:
            target = lemma
        script = (case, *_edits(base, target))
        if apply(script, form) != lemma:
            continue
        cost = sum(len(x) for x in script[1:])
        if best is None or cost < best_cost:
            best, best_cost = script, cost
    if best is None:  # a case change that lower()/upper() do not invert: replace the word
        best = ("k", "", "", form, lemma)
    return best


def key(script: tuple) -> str:
    """A script as one string (for JSON): its fields joined by ``\\x1f``."""
    return "\x1f".join(script)


def from_key(s: str) -> tuple:
    """Inverse of :func:`key`."""
    parts = tuple(s.split("\x1f"))
    if len(parts) != 5 or parts[0] not in CASES:
        raise ValueError(f"not an edit script: {s!r}")
    return parts


class ScriptIndex:
    """The scripts of a lemmatizer, grouped by what they strip and indexed by the suffix.

    Parameters
    ----------
    scripts : sequence of tuple
        The classes; a script's id is its position.
    """

    def __init__(self, scripts):
        self.scripts = [tuple(s) for s in scripts]
        # (keep case, suf_strip) -> {pre_strip: [(id, pre_add, suf_add, case)]}
        self.by_suffix: dict[tuple[bool, str], dict[str, list]] = {}
        for i, (case, ps, pa, ss, sa) in enumerate(self.scripts):
            groups = self.by_suffix.setdefault((case == "k", ss), {})
            groups.setdefault(ps, []).append((i, pa, sa, case))
        self.max_suffix = max((len(s[3]) for s in self.scripts), default=0)
        self._cache: dict[str, tuple[list[int], list[str]]] = {}

    def candidates(self, form: str) -> tuple[list[int], list[str]]:
        """The ids of the scripts that apply to ``form`` and the lemma each makes (cached).

        Parameters
        ----------
        form : str

        Returns
        -------
        ids : list of int
        lemmas : list of str
            ``lemmas[j] == apply(scripts[ids[j]], form)``, never empty (a script that would
            make an empty lemma is left out).
        """
        got = self._cache.get(form)
        if got is not None:
            return got
        ids: list[int] = []
        lemmas: list[str] = []
        for keep, base in ((True, form), (False, form.lower())):
            n = len(base)
            for k in range(min(n, self.max_suffix) + 1):
                groups = self.by_suffix.get((keep, base[n - k:]))
                if groups is None:
                    continue
                for ps, members in groups.items():
                    if n < len(ps) + k or not base.startswith(ps):
                        continue
                    mid = base[len(ps):n - k]
                    for i, pa, sa, case in members:
                        lem = pa + mid + sa
                        if case == "t":
                            lem = lem[:1].upper() + lem[1:]
                        elif case == "u":
                            lem = lem.upper()
                        if lem:
                            ids.append(i)
                            lemmas.append(lem)
        got = (ids, lemmas)
        if len(self._cache) < 500_000:
            self._cache[form] = got
        return got
