"""Tagging and lemmatizing: UPOS, XPOS, FEATS and LEMMA of words that lack them.

A :class:`Tagger` is a pipeline of linear classifiers over hashed features
(:mod:`depparse.features.tags`), trained as averaged perceptrons
(:mod:`depparse.learn.tagger`; Collins 2002):

1. **UPOS**: a first-order sequence model (tag bigrams, :func:`depparse.decode.tag_chain.viterbi`)
   over the word, its affixes, shape and a window of two words each side, plus, where the
   model has them, the word's contextual vector (MiniLM, :mod:`depparse.encoding.minilm`) as
   real-valued features;
2. **XPOS** and **FEATS** (whole bundles, or one classifier per feature): the same features
   and the predicted UPOS of the word and its neighbours; the candidates of a word are the
   classes seen with its predicted UPOS in training;
3. **LEMMA**: the training data's (form, UPOS) -> lemma dictionary where it is unambiguous,
   else the best of the edit scripts (:mod:`depparse.features.lemmas`) that apply to the form,
   by a classifier over the form, its affixes, the predicted tags and features.

It is stored in a model file as the component ``"tagger"`` (:meth:`Tagger.to_component`,
:meth:`Tagger.from_component`): hashed weights as 8-bit companded integers, the rest float16.

References
----------
M. Collins. Discriminative training methods for hidden Markov models: theory and experiments
with perceptron algorithms. EMNLP 2002.
A. Ratnaparkhi. A maximum entropy model for part-of-speech tagging. EMNLP 1996.
M. Straka and J. Straková. Tokenizing, POS tagging, lemmatizing and parsing UD 2.0 with
UDPipe. CoNLL 2017 Shared Task (lemma rules, tag candidates per form).
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..conllu import ROOT
from ..decode.tag_chain import best_each, viterbi
from ..encoding.minilm import one_blas_thread, word_vectors
from ..errors import ModelError, check_component
from ..features.lemmas import ScriptIndex, from_key
from ..features.tags import Lexicon, candidate_scores, lemma_bases, string_hash, tag_bases
from ..model import Component

__all__ = ["FORMAT", "Tagger", "TaggerTask", "UposLattice", "VERSION", "all_candidates",
           "allowed_candidates", "feat_hashes", "join_feats", "scaled_vectors"]

FORMAT = "depparse-tagger"
VERSION = 1


def join_feats(pairs) -> str:
    """A FEATS bundle from ``(name, value)`` pairs, sorted by name regardless of case (UD)."""
    return "|".join(f"{k}={v}" for k, v in sorted(pairs, key=lambda kv: kv[0].lower()))


class UposLattice(NamedTuple):
    """The tagger's UPOS chain of one sentence (:meth:`Tagger.upos_lattice`): the word atoms
    and dense vectors (for the second stage), the candidates ``ptr`` / ``ids`` (CSR, every
    class) and their scores ``emit``."""

    atoms: np.ndarray
    vec: np.ndarray
    ptr: np.ndarray
    ids: np.ndarray
    emit: np.ndarray


_FEAT_CACHE: dict[str, tuple[int, list[int]]] = {}


def feat_hashes(feats) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The FEATS atoms of the lemmatizer: bundle hash per word, and each feature's in CSR.

    Parameters
    ----------
    feats : sequence of str, length N
        FEATS per word (index 0, the root, is ignored; ``""`` or ``"_"``: none).

    Returns
    -------
    bundle : (N,) uint64
    ptr : (N + 1,) int64
    ids : (M,) uint64
    """
    N = len(feats)
    bundle = np.zeros(N, dtype=np.uint64)
    ptr = np.zeros(N + 1, dtype=np.int64)
    ids: list[int] = []
    for i in range(1, N):
        f = feats[i] if feats[i] != "_" else ""
        got = _FEAT_CACHE.get(f)
        if got is None:
            got = (string_hash(f), [string_hash(x) for x in f.split("|")] if f else [])
            if len(_FEAT_CACHE) < 100_000:
                _FEAT_CACHE[f] = got
        bundle[i] = got[0]
        ids.extend(got[1])
        ptr[i + 1] = len(ids)
    return bundle, ptr, np.array(ids, dtype=np.uint64)


@nb.njit(cache=True)
def allowed_candidates(allowed, upos):
    """Candidates (CSR) of every word: the classes allowed after its UPOS.

    Parameters
    ----------
    allowed : (U, C) bool
        ``allowed[u, y]``: class ``y`` may follow UPOS ``u`` (every row has one at least).
    upos : (N,) int64
        UPOS ids (index 0 ignored).

    Returns
    -------
    ptr : (N + 1,) int64
    ids : (M,) int64
    """
    N = upos.shape[0]
    C = allowed.shape[1]
    ptr = np.zeros(N + 1, dtype=np.int64)
    for i in range(1, N):
        cnt = 0
        for y in range(C):
            if allowed[upos[i], y]:
                cnt += 1
        ptr[i + 1] = ptr[i] + cnt
    ids = np.empty(ptr[N], dtype=np.int64)
    for i in range(1, N):
        k = ptr[i]
        for y in range(C):
            if allowed[upos[i], y]:
                ids[k] = y
                k += 1
    return ptr, ids


def all_candidates(N: int, C: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidates (CSR) when every one of ``C`` classes may be any word's."""
    ptr = np.concatenate([[0, 0], np.arange(1, N, dtype=np.int64) * C])
    return ptr.astype(np.int64), np.tile(np.arange(C, dtype=np.int64), N - 1)


class TaggerTask:
    """One classifier of the pipeline: a column (or one feature) and its weights.

    Attributes
    ----------
    name : str
        ``"upos"``, ``"xpos"``, ``"feats"``, ``"feat=<Name>"`` or ``"lemma"``.
    classes : list of str
    salt : numpy.uint64
        Mixed into every feature hash (:func:`depparse.features.tags.candidate_scores`).
    viterbi : bool
        Decode the sentence jointly with tag bigrams (else every word on its own).
    allowed : (U, C) bool array or None
        The classes allowed after each UPOS (None: all; the lemmatizer: per form).
    dense : (C, D) float array
        Weights of the dense features (D = 0 without an encoder).
    trans : (C + 1, C + 1) float array
        Tag-bigram scores (last row / column: START / END); zeros unless ``viterbi``.
    """

    def __init__(self, name, classes, viterbi=False, allowed=None, dim=0):
        self.name = name
        self.classes = list(classes)
        self.index = {c: i for i, c in enumerate(self.classes)}
        self.salt = np.uint64(string_hash("task:" + name))
        self.viterbi = bool(viterbi)
        self.allowed = None if allowed is None else np.ascontiguousarray(allowed, dtype=np.bool_)
        C = len(self.classes)
        self.dense = np.zeros((C, dim))
        self.trans = np.zeros((C + 1, C + 1))

    def candidates(self, N, upos=None):
        """Candidates (CSR) of the words of a sentence of ``N`` positions."""
        if self.allowed is None:
            return all_candidates(N, len(self.classes))
        return allowed_candidates(self.allowed, upos)

    def dense_args(self, vec):
        """``(full, vec)`` for :func:`~depparse.features.tags.candidate_scores`: the dense
        scores of all classes by one matrix product where every class is a candidate, else
        the vectors (their products are taken for the candidates only)."""
        none = np.empty((vec.shape[0], 0))  # float64 as the product: one compiled signature
        if self.dense.shape[1] == 0:
            return none, vec[:, :0]
        if self.allowed is None and self.name != "lemma":
            # (a float32 model's product widened, as the kernel widened each value it read)
            return (vec @ self.dense.T).astype(np.float64, copy=False), vec[:, :0]
        return none, vec

    def scores(self, bases, counts, w, mask, vec, ptr, ids):
        """The score of every candidate (:func:`~depparse.features.tags.candidate_scores`)."""
        E = np.empty(ids.shape[0])
        full, v = self.dense_args(vec)
        candidate_scores(bases, counts, self.salt, w, mask, full, v, self.dense, ptr, ids, E)
        return E

    def decode(self, bases, counts, w, mask, vec, ptr, ids):
        """Best class id of every word (index 0: -1) and the candidates' scores."""
        E = self.scores(bases, counts, w, mask, vec, ptr, ids)
        if self.viterbi:
            return viterbi(E, ptr, ids, self.trans), E
        return best_each(E, ptr, ids), E


class Tagger:
    """UPOS, XPOS, FEATS and LEMMA prediction (module docstring).

    Built by :func:`depparse.learn.tagger.train_tagger` or :meth:`from_component`.

    Parameters
    ----------
    tasks : list of TaggerTask
        ``upos`` first, then ``xpos``, then ``feats`` or the ``feat=<Name>`` tasks, then
        ``lemma`` (classes: edit-script keys).
    w : (2**bits,) float array
        Hashed weights of all tasks.
    lemma_dict : dict
        ``(form, upos) -> lemma`` of the training words where unambiguous.
    encoder : dict or None
        ``{"layer": L, "scale": s}``: the MiniLM layer whose word vectors (unit length
        times ``s``) are dense features.
    info : dict
        What training recorded (settings, epochs, sizes).
    """

    def __init__(self, tasks, w, lemma_dict, encoder=None, info=None):
        self.tasks = {t.name: t for t in tasks}
        self.order = [t.name for t in tasks]
        self.w = w
        self.bits = int(np.log2(w.shape[0]))
        self.mask = np.uint64(w.shape[0] - 1)
        self.lemma_dict = dict(lemma_dict)
        self.encoder = encoder
        self.info = dict(info or {})
        self.upos = self.tasks["upos"].classes
        self.feat_tasks = [t for t in tasks if t.name.startswith("feat=")]
        self.dim = max(t.dense.shape[1] for t in tasks)
        self.scripts = ScriptIndex([from_key(s) for s in self.tasks["lemma"].classes])
        self.lexicon = Lexicon()

    # -- storage ---------------------------------------------------------------------------

    def to_component(self) -> Component:
        """The component ``"tagger"`` of a model file (module docstring).

        Hashed weights: the non-zero ones, companded to 8 bits (``q = round(127 sign(w)
        sqrt(|w| / max|w|))``), with a bit mask of where they are; dense and transition
        weights float16.
        """
        w = np.asarray(self.w, dtype=np.float64)
        top = float(np.abs(w).max()) or 1.0
        q = np.rint(127.0 * np.sign(w) * np.sqrt(np.abs(w) / top)).astype(np.int8)
        nz = q != 0
        arrays = {"w_mask": np.packbits(nz), "w_values": q[nz],
                  "w_scale": np.array([top], dtype=np.float32)}
        tasks = []
        for j, t in enumerate(self.tasks[n] for n in self.order):
            tasks.append({"name": t.name, "classes": t.classes, "viterbi": t.viterbi})
            arrays[f"t{j}.dense"] = t.dense.astype(np.float16)
            if t.viterbi:
                arrays[f"t{j}.trans"] = t.trans.astype(np.float16)
            if t.allowed is not None:
                arrays[f"t{j}.allowed"] = np.packbits(t.allowed, axis=1)
        text = "".join(f"{f}\t{u}\t{lem}\n" for (f, u), lem in sorted(self.lemma_dict.items()))
        arrays["lemma_dict"] = np.frombuffer(text.encode("utf-8", "surrogatepass"),
                                             dtype=np.uint8)
        meta = {"format": FORMAT, "version": VERSION, "bits": self.bits, "tasks": tasks,
                "encoder": self.encoder, "info": self.info}
        return Component(meta, arrays)

    @classmethod
    def from_component(cls, c: Component) -> Tagger:
        """The tagger stored in a model file's component (:meth:`to_component`).

        Raises
        ------
        ModelError
            If the component is not a tagger, has an unknown format version, or its arrays
            do not fit its description.
        """
        meta = c.meta
        check_component(meta, FORMAT, VERSION, "tagger")
        try:
            a = c.arrays
            size = 1 << int(meta["bits"])
            nz = np.unpackbits(a["w_mask"], count=size).astype(bool)
            q = a["w_values"].astype(np.float32)
            if q.shape != (int(nz.sum()),):
                raise ValueError("weight values do not match their mask")
            w = np.zeros(size, dtype=np.float32)
            w[nz] = np.sign(q) * (q / 127.0) ** 2 * np.float32(a["w_scale"][0])
            enc = meta.get("encoder")
            tasks = []
            for j, d in enumerate(meta["tasks"]):
                C = len(d["classes"])
                allowed = None
                if f"t{j}.allowed" in a:
                    allowed = np.unpackbits(a[f"t{j}.allowed"], axis=1, count=C).astype(bool)
                dense = a[f"t{j}.dense"].astype(np.float32)
                t = TaggerTask(d["name"], d["classes"], d["viterbi"], allowed, dense.shape[1])
                if dense.ndim != 2 or dense.shape[0] != C or (enc is None and dense.shape[1]):
                    raise ValueError(f"task {d['name']}: dense weights of shape {dense.shape}")
                t.dense = dense
                if t.viterbi:
                    t.trans = a[f"t{j}.trans"].astype(np.float64)
                    if t.trans.shape != (C + 1, C + 1):
                        raise ValueError(f"task {d['name']}: transitions of shape "
                                         f"{t.trans.shape}")
                tasks.append(t)
            lemma_dict = {}
            text = a["lemma_dict"].tobytes().decode("utf-8", "surrogatepass")
            for line in text.split("\n")[:-1]:  # (not splitlines: forms may hold U+2028)
                f, u, lem = line.split("\t")
                lemma_dict[(f, u)] = lem
            names = [t.name for t in tasks]
            if names[:2] != ["upos", "xpos"] or names[-1] != "lemma":
                raise ValueError(f"unexpected tasks {names}")
            return cls(tasks, w, lemma_dict, enc, meta.get("info"))
        except ModelError:
            raise
        except (KeyError, ValueError, TypeError, IndexError, UnicodeDecodeError) as e:
            raise ModelError(f"the model's tagger component is corrupt ({e})") from None

    # -- prediction ------------------------------------------------------------------------

    def vectors(self, forms, vectors=None) -> np.ndarray:
        """(N, D) dense features of the words ``forms[1:]`` (row 0 zeros; D = 0 without an
        encoder): the word vectors given (n, D), or the encoder's, scaled to the norm
        ``encoder["scale"]``."""
        N = len(forms)
        if self.encoder is None:
            return np.zeros((N, 0), dtype=np.float32)
        if vectors is None:
            vectors = word_vectors(int(self.encoder["layer"]), list(forms[1:]))
        v = np.asarray(vectors)
        if v.shape != (N - 1, self.dim):
            raise ValueError(f"word vectors of shape {v.shape} for {N - 1} words; this tagger "
                             f"takes ({N - 1}, {self.dim})")
        return scaled_vectors(v, float(self.encoder["scale"]))

    def tag_forms(self, forms, vectors=None, extra=None):
        """Predicted ``(lemmas, upos, xpos, feats)`` of one sentence.

        Parameters
        ----------
        forms : sequence of str, length n + 1
            The word forms; index 0 (the root) is ignored.
        vectors : (n, D) array, optional
            The encoder's word vectors, when the caller has them already (the parser's
            contextual classes use the same layer); computed here otherwise.
        extra : (n + 1, U) array, optional
            Scores added to the UPOS scores (``U``: the tagger's UPOS classes, in the order
            of :attr:`upos`; row 0 unused): another model's view of the tags, such as the
            parser's learned network's weighted log-probabilities (:meth:`upos_lattice`).

        Returns
        -------
        tuple of four (n + 1,) object arrays
            LEMMA, UPOS, XPOS, FEATS; index 0 as in :class:`~depparse.conllu.Sentence`
            (``"<ROOT>"``, FEATS ``""``).
        """
        lat = self.upos_lattice(forms, vectors, extra)
        t = self.tasks["upos"]
        upos = (viterbi(lat.emit, lat.ptr, lat.ids, t.trans) if t.viterbi
                else best_each(lat.emit, lat.ptr, lat.ids))
        return self.tag_given_upos(forms, lat, upos)

    def upos_lattice(self, forms, vectors=None, extra=None) -> UposLattice:
        """The UPOS chain of one sentence (:class:`UposLattice`): every class is a candidate
        of every word, scored by the tagger's first stage, plus ``extra[i, u]`` (optional,
        (n + 1, U)) for class ``u`` of word ``i``; :func:`~depparse.decode.tag_chain.viterbi` over
        it with the task's transitions is the tagger's UPOS (joint tagging and parsing
        chooses among its best candidates instead, :mod:`depparse.decode.joint`).

        Adding a second model's log-probabilities to the emissions decodes the product of
        the two experts (Hinton 2002) under the tagger's transitions."""
        N = len(forms)
        atoms = self.lexicon.sentence(forms)
        vec = self.vectors(forms, vectors)
        dummy = np.zeros(N, dtype=np.int64)
        bases, c1, _ = tag_bases(atoms, dummy, False)
        t = self.tasks["upos"]
        ptr, ids = t.candidates(N)
        emit = t.scores(bases, c1, self.w, self.mask, vec, ptr, ids)
        if extra is not None:
            extra = np.asarray(extra, dtype=np.float64)
            if extra.shape != (N, len(t.classes)):
                raise ValueError(f"extra UPOS scores of shape {extra.shape} for {N} positions "
                                 f"and {len(t.classes)} classes")
            emit += extra[np.repeat(np.arange(N), np.diff(ptr)), ids]
        return UposLattice(atoms, vec, ptr, ids, emit)

    def tag_given_upos(self, forms, lat, upos):
        """``(lemmas, upos, xpos, feats)`` of :meth:`tag_forms` for the UPOS ids ``upos``
        (index 0: -1), the second stage and the lemmatizer reading them; ``lat`` from
        :meth:`upos_lattice`."""
        N = len(forms)
        atoms, vec = lat.atoms, lat.vec
        w, mask = self.w, self.mask
        bases, _, c2 = tag_bases(atoms, upos, True)
        out = {}
        for name in self.order[1:-1]:
            t = self.tasks[name]
            out[name], _ = t.decode(bases, c2, w, mask, vec, *t.candidates(N, upos))
        upos_s = _strings(self.upos, upos, ROOT)
        xpos_s = _strings(self.tasks["xpos"].classes, out["xpos"], ROOT)
        if "feats" in out:
            feats_s = _strings(self.tasks["feats"].classes, out["feats"], "")
        else:
            feats_s = np.empty(N, dtype=object)
            for i in range(N):
                feats_s[i] = join_feats([(t.name[5:], t.classes[out[t.name][i]])
                                         for t in self.feat_tasks if out[t.name][i] > 0])
        lemmas = self.lemmatize(forms, atoms, upos, out["xpos"], upos_s, feats_s, vec)
        return lemmas, upos_s, xpos_s, feats_s

    def lemmatize(self, forms, atoms, upos, xpos, upos_s, feats_s, vec):
        """LEMMA of every word given its predicted tags (dictionary, else edit scripts)."""
        N = len(forms)
        lemmas = np.empty(N, dtype=object)
        lemmas[0] = ROOT
        ptr = np.zeros(N + 1, dtype=np.int64)
        ids: list[int] = []
        made: list[str] = []
        for i in range(1, N):
            got = self.lemma_dict.get((forms[i], upos_s[i]))
            if got is None:
                cid, clem = self.scripts.candidates(forms[i])
                ids.extend(cid)
                made.extend(clem)
                if not cid:  # no script applies (or the training data had no lemmas)
                    lemmas[i] = forms[i] if self.lemma_dict else "_"
            else:
                lemmas[i] = got
            ptr[i + 1] = len(ids)
        if ids:
            t = self.tasks["lemma"]
            bundle, fptr, fids = feat_hashes(feats_s)
            bases, counts = lemma_bases(atoms, upos, xpos, bundle, fptr, fids)
            ida = np.array(ids, dtype=np.int64)
            E = t.scores(bases, counts, self.w, self.mask, vec, ptr, ida)
            for i in range(1, N):
                if ptr[i + 1] > ptr[i]:
                    c = ptr[i] + int(np.argmax(E[ptr[i]:ptr[i + 1]]))
                    lemmas[i] = made[c]
        return lemmas

    def tag(self, sentences, vectors=None, extras=None) -> list[tuple]:
        """:meth:`tag_forms` of every sentence (``vectors``: one (n, D) array per sentence,
        optional; ``extras``: one ``extra`` UPOS score array per sentence, optional)."""
        with one_blas_thread():
            return [self.tag_forms(s.forms, None if vectors is None else vectors[k],
                                   None if extras is None else extras[k])
                    for k, s in enumerate(sentences)]

    def retag(self, sentences, vectors=None, columns=("lemmas", "upos", "xpos", "feats"),
              extras=None):
        """Copies of the sentences carrying the predicted columns (:meth:`Sentence.with_tags`).

        Parameters
        ----------
        sentences : sequence of Sentence
        vectors : list of (n, D) arrays, optional
        columns : sequence of str
            Which of ``lemmas``, ``upos``, ``xpos``, ``feats`` to replace (the others keep
            the input's values).
        extras : list of (n + 1, U) arrays, optional
            Scores added to each sentence's UPOS scores (:meth:`tag_forms`).

        Returns
        -------
        list of Sentence
        """
        out = []
        for s, (lem, up, xp, fe) in zip(sentences, self.tag(sentences, vectors, extras),
                                        strict=True):
            got = {"lemmas": lem, "upos": up, "xpos": xp, "feats": fe}
            out.append(s.with_tags(**{c: got[c] for c in columns}))
        return out


def scaled_vectors(vectors, scale: float) -> np.ndarray:
    """(n + 1, D) float32: a zero row for the root, then each vector at norm ``scale``."""
    v = np.asarray(vectors, dtype=np.float32)
    out = np.zeros((v.shape[0] + 1, v.shape[1]), dtype=np.float32)
    out[1:] = v * (scale / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12))
    return out


def _strings(classes, ids, root):
    out = np.empty(len(ids), dtype=object)
    out[0] = root
    for i in range(1, len(ids)):
        out[i] = classes[ids[i]]
    return out

