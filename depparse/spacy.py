"""depparse inside spaCy: a pipeline component and a pipeline with depparse's own tokenizer.

Installed with the extra ``pip install 'depparse[spacy]'``, which registers the component
under spaCy's entry-point group ``spacy_factories``, so that spaCy finds it by name::

    import spacy
    nlp = spacy.blank("en")
    nlp.add_pipe("depparse", config={"model": "en"})
    doc = nlp("The cat sat on the mat. It purred.")
    [(t.text, t.pos_, t.dep_, t.head.i) for t in doc]

The component (:class:`DepparseComponent`) parses the ``Doc``'s tokens as they are (spaCy's
tokenizer decides the words) and fills ``token.head``, ``dep_`` (UD DEPREL; the root is its
own head, labelled ``root``), ``pos_`` (UPOS), ``tag_`` (XPOS), ``lemma_``, ``morph`` (FEATS)
and the sentence starts.  Sentences are those already set on the ``Doc`` (a sentencizer or
depparse's tokenizer before it), else those depparse's tokenizer finds in ``doc.text``.  Each
sentence's proof goes on the ``Doc``: ``doc._.depparse_proofs`` is one dict per sentence, in
order (``optimal``, ``proof``: ``"dual"`` or ``"branch-and-bound"``, ``certificate``,
``iterations``, ``seconds``, ``nodes``), and ``span._.depparse_proof`` the one of a sentence.
``doc.noun_chunks`` reads depparse's UD labels (:func:`noun_chunks`, which the component puts
on its pipeline's vocabulary and on every ``Doc`` it parses): spaCy's own English iterator
reads ClearNLP labels (``dobj``, ``pobj``, ``ROOT``) and would miss every object.

:func:`load` gives a whole pipeline the way spacy-udpipe and spacy-stanza do: depparse's own
tokenizer reads the raw text (sentences, tokens, and multiword tokens split into their
words: the ``Doc`` has one token per syntactic word, so Portuguese ``do`` becomes ``de o``,
and ``doc.text`` shows the words, not the contraction), then the component parses.
displaCy draws the result (``spacy.displacy.render(doc, style="dep")``).

The module is a face above the API: it calls :func:`depparse.load`,
:meth:`~depparse.inference.parser.Parser.parse_results` and
:meth:`~depparse.inference.parser.Parser.read_text`, never the kernels.  It is named
``depparse.spacy`` so that ``depparse.spacy.load("en")`` reads like ``spacy.load``; inside it
``import spacy`` is spaCy itself (imports are absolute in Python 3).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

try:
    import spacy
except ImportError as e:  # the extra is not installed: say which
    from .errors import extra_command

    raise ImportError("depparse.spacy needs spaCy, which is not installed: run "
                      f"`{extra_command('spacy')}`") from e
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.tokens import Doc, Span

from .api import load as load_parser
from .api import resolve_model
from .conllu import read_conllu, token_spaces, tokens_with_misc

__all__ = ["DepparseComponent", "DepparseTokenizer", "load", "noun_chunks", "parser_for"]

_PARSERS: dict = {}


def parser_for(model):
    """The :class:`~depparse.inference.parser.Parser` of ``model`` (a name or a path), loaded
    once per process and shared by the components and tokenizers that name it."""
    path = Path(resolve_model(model)).resolve()
    if path not in _PARSERS:
        _PARSERS[path] = load_parser(path)
    return _PARSERS[path]


def _sentence_proof(span):
    proofs = span.doc._.depparse_proofs
    if not proofs:
        return None
    starts = [s.start for s in span.doc.sents]
    try:
        return proofs[starts.index(span.start)]
    except ValueError:
        return None


if not Doc.has_extension("depparse_proofs"):
    Doc.set_extension("depparse_proofs", default=None)
if not Span.has_extension("depparse_proof"):
    Span.set_extension("depparse_proof", getter=_sentence_proof)


#: UD relations (the part before ``:``) whose NOUN, PROPN or PRON heads a noun chunk; a
#: coordinated noun (``conj``) heads one where the first conjunct does.  ``nmod:poss`` is
#: left out: a possessor ("my", "the city's") stays inside its noun's chunk.
CHUNK_HEADS = frozenset({"nsubj", "obj", "iobj", "obl", "nmod", "appos", "root", "vocative",
                         "dislocated", "expl"})
#: Relations of a noun's dependents that belong to its chunk: before it (``the``, ``a small``,
#: ``my``, ``two``) and after it (``gato preto``, ``John Smith``).  Anything else (``case``:
#: "on the mat" gives "the mat"; ``cc``, ``punct``, a clause) ends the chunk on that side.
CHUNK_LEFT = frozenset({"det", "amod", "nummod", "compound", "nmod:poss", "flat", "fixed",
                        "clf", "goeswith"})
CHUNK_RIGHT = frozenset({"amod", "compound", "flat", "fixed", "goeswith"})
_NOMINAL = frozenset({"NOUN", "PROPN", "PRON"})


def _rel(token) -> str:
    return token.dep_.lower()


def _base(rel: str) -> str:
    return rel.split(":", 1)[0]


def _in(rel: str, allowed: frozenset) -> bool:
    return rel in allowed or _base(rel) in allowed


def _heads_chunk(token) -> bool:
    rel = _rel(token)
    if rel == "nmod:poss":
        return False
    if _base(rel) in CHUNK_HEADS:
        return True
    if _base(rel) != "conj":
        return False
    head = token.head  # the first conjunct decides, as in spaCy's iterators
    while _base(_rel(head)) == "conj" and head.head.i != head.i:
        head = head.head
    return _rel(head) != "nmod:poss" and _base(_rel(head)) in CHUNK_HEADS


def noun_chunks(doclike):
    """Base noun phrases of a ``Doc`` or ``Span`` parsed with UD labels: spaCy's
    ``noun_chunks`` syntax iterator for depparse's trees.

    A chunk is headed by a NOUN, PROPN or PRON whose relation is in :data:`CHUNK_HEADS` (or a
    ``conj`` of one); it spans the head and its adjacent dependents of :data:`CHUNK_LEFT` and
    :data:`CHUNK_RIGHT` with their subtrees (so the preposition of "on the mat" stays out, as
    in spaCy's English iterator).  Chunks never nest: a noun inside an earlier chunk is
    skipped.

    Yields
    ------
    (int, int, int)
        Start and end token index and the label ``NP``'s string id, as spaCy's syntax
        iterators do.

    Raises
    ------
    ValueError
        If the ``Doc`` has no dependency annotation (spaCy's ``E029``).
    """
    from spacy.errors import Errors

    doc = doclike.doc
    if not doc.has_annotation("DEP"):
        raise ValueError(Errors.E029)
    np_label = doc.vocab.strings.add("NP")
    prev_end = -1
    for word in doclike:
        if word.pos_ not in _NOMINAL or not _heads_chunk(word):
            continue
        start = word.i
        for child in reversed(list(word.lefts)):  # nearest first; stop at a gap
            if not _in(_rel(child), CHUNK_LEFT) or child.right_edge.i != start - 1:
                break
            start = child.left_edge.i
        end = word.i
        for child in word.rights:
            if not _in(_rel(child), CHUNK_RIGHT) or child.left_edge.i != end + 1:
                break
            end = child.right_edge.i
        if start <= prev_end:
            continue
        prev_end = end
        yield start, end + 1, np_label


def _nonspace_count(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


class DepparseComponent:
    """spaCy pipeline component: depparse's tagger, lemmatizer and proved-optimal parser.

    Parameters
    ----------
    nlp : spacy.language.Language
    name : str
    model : str
        A depparse model: a name (``"en"``, ``"pt"``, ``"en_ewt_gs"``), or a model file.
    """

    def __init__(self, nlp: Language, name: str, model: str):
        self.name = name
        self.model = model
        self.parser = parser_for(model)
        # the Docs this pipeline makes from now on (a DocBin's too) read UD labels; the Doc
        # being parsed gets it in __call__ (it was made before)
        nlp.vocab.get_noun_chunks = noun_chunks

    def _sentences(self, doc: Doc) -> list[list[int]]:
        """The token indices of each sentence (whitespace tokens left out)."""
        words = [t.i for t in doc if not t.is_space]
        if not words:
            return []
        if doc.has_annotation("SENT_START"):
            out = [[t.i for t in s if not t.is_space] for s in doc.sents]
            return [s for s in out if s]
        if self.parser.tokenizer is None:
            return [words]  # no sentence splitter: the whole Doc is one sentence
        # depparse's sentence ends, mapped onto spaCy's tokens by counting the characters
        # that are not whitespace (the tokenizer only ever changes whitespace)
        ends, total = [], 0
        for s in self.parser.read_text(doc.text, source="<doc>"):
            total += _nonspace_count(s.text or "")
            ends.append(total)
        out: list[list[int]] = [[]]
        k, seen = 0, 0
        for t in doc:
            if t.is_space:
                continue
            while k < len(ends) - 1 and seen >= ends[k]:
                k += 1
                out.append([])
            out[-1].append(t.i)
            seen += _nonspace_count(t.text)
        return [s for s in out if s]

    def __call__(self, doc: Doc) -> Doc:
        sentences = self._sentences(doc)
        doc.noun_chunks_iterator = noun_chunks
        if not sentences:
            doc._.depparse_proofs = []
            return doc
        blocks = []
        for ids in sentences:
            rows = []
            for j, i in enumerate(ids, 1):
                t = doc[i]
                form = t.text.replace("\t", " ").replace("\n", " ")
                misc = "_" if t.whitespace_ else "SpaceAfter=No"
                rows.append(f"{j}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
            blocks.append("\n".join(rows) + "\n")
        data = io.BytesIO("\n".join(blocks).encode("utf-8"))
        data.name = "<spacy doc>"
        sents = read_conllu(data)
        results = self.parser.parse_results(sents, trace=False)
        heads = list(range(len(doc)))
        deps = [""] * len(doc)
        proofs = []
        for ids, (parsed, r) in zip(sentences, results, strict=True):
            for j, i in enumerate(ids, 1):
                t = doc[i]
                h = int(parsed.heads[j])
                heads[i] = i if h == 0 else ids[h - 1]
                deps[i] = parsed.rels[j] or "dep"
                if parsed.upos[j] != "_":
                    t.pos_ = parsed.upos[j]
                if parsed.xpos[j] != "_":
                    t.tag_ = parsed.xpos[j]
                if parsed.lemmas[j] != "_" or t.text == "_":  # '_': no lemma predicted
                    t.lemma_ = parsed.lemmas[j]
                t.set_morph(parsed.feats[j] or None)
            proofs.append({"optimal": bool(r.optimal), "proof": r.proof,
                           "certificate": bool(r.certificate), "iterations": int(r.iterations),
                           "seconds": float(r.seconds), "nodes": int(r.nodes)})
        prev = None
        for t in doc:  # whitespace tokens hang on the word before them (after: at the start)
            if t.is_space:
                heads[t.i] = prev if prev is not None else next(
                    (i for i in range(t.i + 1, len(doc)) if not doc[i].is_space), t.i)
                deps[t.i] = "dep"
                t.pos_ = "SPACE"
            else:
                prev = t.i
        # one call sets every head (relative offsets, as spaCy stores them) and label; the
        # sentence starts follow from the trees
        arr = np.zeros((len(doc), 2), dtype="uint64")
        arr[:, 0] = (np.array(heads, dtype="int64") - np.arange(len(doc))).astype("uint64")
        arr[:, 1] = [doc.vocab.strings.add(d) for d in deps]
        doc.from_array([HEAD, DEP], arr)
        doc._.depparse_proofs = proofs
        return doc


@Language.factory("depparse", default_config={"model": "en"})
def make_depparse(nlp: Language, name: str, model: str) -> DepparseComponent:
    """spaCy's factory of the ``"depparse"`` component (entry point ``spacy_factories``)."""
    return DepparseComponent(nlp, name, model)


class DepparseTokenizer:
    """A spaCy tokenizer that is depparse's: sentences, tokens and the words of multiword
    tokens of raw text, as the model's tokenizer finds them (``Parser.read_text``).

    The ``Doc`` has one token per syntactic word (a multiword token's words are separate
    tokens, separated by a space), and its sentence starts are set.  The text's whitespace is
    kept as spaCy keeps it (one space after a word, the rest of a run of whitespace as a
    whitespace token), so ``doc.text`` is the text wherever it has no multiword tokens.
    """

    def __init__(self, vocab, model: str):
        self.vocab = vocab
        self.model = model
        self.parser = parser_for(model)

    def __call__(self, text: str) -> Doc:
        entries = []  # (word, the whitespace before it, whether it starts a sentence)
        gap = ""  # the whitespace since the last word
        for s in self.parser.read_text(text, source="<text>"):
            first = True
            for form, misc, words in tokens_with_misc(s):
                before, after = token_spaces(misc)
                gap += before
                for word in words or [form]:  # a multiword token's words: a space between
                    entries.append((word, gap, first))
                    gap, first = " ", False
                gap = after
        if not entries:  # no words: the whitespace as one token
            return Doc(self.vocab, words=[text] if text else [], spaces=[False] if text else [])
        # spaCy's way: one space after a word is its ``whitespace_``, more whitespace is a token
        # of its own (of the sentence before it; at the start, of the first)
        words, spaces, starts = [], [], []
        for k, (word, before, start) in enumerate([*entries, (None, gap, False)]):
            if words and before.startswith(" "):
                spaces[-1], before = True, before[1:]
            if before and (words or word is not None):
                words.append(before)
                spaces.append(False)
                starts.append(not words[:-1])
            if word is not None:
                words.append(word)
                spaces.append(False)
                starts.append(start and not (k == 0 and before))
        return Doc(self.vocab, words=words, spaces=spaces, sent_starts=starts)

    # spaCy calls these when it saves or loads a pipeline: nothing to store (the model is
    # named in the config)
    def to_bytes(self, **kwargs) -> bytes:
        return b""

    def from_bytes(self, data: bytes, **kwargs):
        return self

    def to_disk(self, path, **kwargs) -> None:
        pass

    def from_disk(self, path, **kwargs):
        return self


def load(model: str = "en") -> Language:
    """A spaCy pipeline of depparse alone: its tokenizer, then the ``"depparse"`` component.

    Parameters
    ----------
    model : str
        A depparse model: a name (``"en"``, ``"pt"``, ``"tr"``) or a model file.

    Returns
    -------
    spacy.language.Language
        ``spacy.blank`` of the model's language (``"xx"``, spaCy's multi-language class,
        where spaCy has none for it) with depparse's tokenizer; ``nlp(text)`` gives a parsed
        ``Doc``.
    """
    from . import catalog

    lang = "xx"
    try:
        # a name (UDPipe's have dots: english-ewt-ud-2.17-251125), unless it is a file
        entry = None if Path(model).exists() else catalog.find(model)
        if entry is not None:
            lang = entry.lang
    except Exception:  # noqa: BLE001 - a path, or a name resolved below with its message
        pass
    parser_for(model)  # a bad name fails here, with the installed models listed
    try:
        nlp = spacy.blank(lang)
    except (ImportError, KeyError, ValueError):
        nlp = spacy.blank("xx")
    nlp.tokenizer = DepparseTokenizer(nlp.vocab, model)
    nlp.add_pipe("depparse", config={"model": model})
    return nlp
