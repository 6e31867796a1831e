"""A tiny synthetic grammar whose trees are a deterministic function of the UPOS sequence.

Sentences are built from phrases: a noun phrase ``(DET) (ADJ)* NOUN`` headed by its noun, a
prepositional phrase ``ADP NP`` whose noun attaches to the verb (the preposition attaches to
that noun, as in UD), an optional adverb attaching to the verb, and the clause
``NP VERB (NP) (PP) (ADV) PUNCT`` headed by the verb.  Forms are drawn at random from small
word lists, so the parser must learn the attachments from UPOS and word identity.
"""

from __future__ import annotations

import numpy as np

from depparse.conllu import read_conllu

WORDS = {
    "DET": ["the", "a", "every", "this"],
    "ADJ": ["big", "small", "red", "old", "happy"],
    "NOUN": ["dog", "cat", "park", "man", "idea", "house", "tree"],
    "VERB": ["sees", "likes", "finds", "chases", "wants"],
    "ADP": ["in", "near", "with", "under"],
    "ADV": ["quickly", "often", "today"],
    "PUNCT": ["."],
}


def _np(rng, words, head_slot):
    """Append an NP; returns the index (1-based) of its noun; its words point to it."""
    start = len(words)
    if rng.random() < 0.7:
        words.append(["DET", None, "det"])
    for _ in range(int(rng.integers(0, 3))):
        words.append(["ADJ", None, "amod"])
    words.append(["NOUN", head_slot, None])
    noun = len(words)
    for w in words[start:noun - 1]:
        w[1] = noun
    return noun


def sentence(rng):
    """One random sentence as a list of (upos, form, head, deprel)."""
    words: list = []
    subj = _np(rng, words, None)
    words.append(["VERB", 0, "root"])
    verb = len(words)
    words[subj - 1][1] = verb
    words[subj - 1][2] = "nsubj"
    if rng.random() < 0.7:
        obj = _np(rng, words, verb)
        words[obj - 1][2] = "obj"
    if rng.random() < 0.5:
        words.append(["ADP", None, "case"])
        adp = len(words)
        noun = _np(rng, words, verb)
        words[noun - 1][2] = "obl"
        words[adp - 1][1] = noun
    if rng.random() < 0.4:
        words.append(["ADV", verb, "advmod"])
    words.append(["PUNCT", verb, "punct"])
    return [(u, str(rng.choice(WORDS[u])), h, r) for u, h, r in words]


def conllu_text(n_sentences, seed=0):
    """CoNLL-U text of ``n_sentences`` random sentences."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_sentences):
        ws = sentence(rng)
        out.append(f"# sent_id = syn-{seed}-{k}")
        out.append("# text = " + " ".join(f for _, f, _, _ in ws))
        for i, (u, f, h, r) in enumerate(ws, 1):
            out.append(f"{i}\t{f}\t{f}\t{u}\t_\t_\t{h}\t{r}\t_\t_")
        out.append("")
    return "\n".join(out) + "\n"


def sentences(n_sentences, seed=0, tmp_path=None):
    """Parsed :class:`~depparse.conllu.Sentence` objects of the synthetic grammar."""
    import io

    return read_conllu(io.BytesIO(conllu_text(n_sentences, seed).encode()))


# -- a tagged version (issue 12: tagger and lemmatizer) ------------------------------------



def _made_up_nouns(n, seed):
    """``n`` distinct pronounceable nouns (CVCVC-like) not ending in *s*."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    while len(out) < n:
        letters = ("bdgklmnprt", "aeiou", "bdgklmnprt", "aeiou", "bdgklmnprt")
        w = "".join(str(rng.choice(list(a))) for a in letters[:int(rng.integers(3, 6))])
        if w not in out and w not in WORDS["NOUN"]:
            out.append(w)
    return out


#: Noun lemmas: a small lexicon, drawn uniformly, and a large one, drawn from a Zipf
#: distribution (many nouns are rare), and nonce nouns, never in training data.
NOUNS = ["dog", "cat", "park", "man", "idea", "house", "tree", "saw"]
MORE_NOUNS = NOUNS + _made_up_nouns(60, 7)
NONCE_NOUNS = [w for w in _made_up_nouns(80, 8) if w not in MORE_NOUNS][:20]
IRREGULAR_PLURAL = {"man": "men"}
VERBS = {"see": "saw", "like": "liked", "find": "found", "chase": "chased", "want": "wanted"}
DET_FEATS = {"the": "Definite=Def|PronType=Art", "a": "Definite=Ind|PronType=Art",
             "every": "PronType=Tot", "this": "Number=Sing|PronType=Dem",
             "these": "Number=Plur|PronType=Dem"}
XPOS = {"DET": "DT", "ADJ": "JJ", "ADP": "IN", "ADV": "RB", "PUNCT": "."}


def tagged_sentence(rng, nonce=False, large=False):
    """One sentence of the grammar of :func:`sentence` with morphology: a list of
    ``(form, lemma, upos, xpos, feats, head, deprel)``.

    Nouns are singular or plural (``-s``, *men*), verbs present (``-s``) or past (*saw*,
    *found*, ``-ed``), determiners agree in number with their noun, the first word is
    capitalized.  *saw* is a noun (lemma *saw*) or a past verb (lemma *see*), told apart by
    its position only.  Nouns come from :data:`NOUNS`, or with ``large`` from
    :data:`MORE_NOUNS`; with ``nonce`` a quarter of them are words never seen in training
    (:data:`NONCE_NOUNS`).
    """
    words = sentence(rng)
    rows = []
    for u, f, h, r in words:
        rows.append([f, f, u, XPOS.get(u, "_"), "_", h, r])
    for i, row in enumerate(rows):
        u = row[2]
        if u == "NOUN":
            if nonce and rng.random() < 0.25:
                lemma = str(rng.choice(NONCE_NOUNS))
            elif large:
                lemma = MORE_NOUNS[min(int(rng.zipf(1.3)), len(MORE_NOUNS)) - 1]
            else:
                lemma = str(rng.choice(NOUNS))
            plural = rng.random() < 0.4
            form = IRREGULAR_PLURAL.get(lemma, lemma + "s") if plural else lemma
            row[:5] = [form, lemma, u, "NNS" if plural else "NN",
                       "Number=Plur" if plural else "Number=Sing"]
            for dep in rows:
                if dep[5] == i + 1 and dep[2] == "DET":
                    d = str(rng.choice(["the", "these"] if plural else
                                       ["the", "a", "every", "this"]))
                    dep[0] = dep[1] = d
                    dep[4] = DET_FEATS[d]
        elif u == "VERB":
            lemma = str(rng.choice(list(VERBS)))
            past = rng.random() < 0.5
            form = VERBS[lemma] if past else lemma + "s"
            row[:5] = [form, lemma, u, "VBD" if past else "VBZ",
                       "Mood=Ind|Tense=Past|VerbForm=Fin" if past else
                       "Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin"]
        elif u == "ADJ":
            row[4] = "Degree=Pos"
    rows[0][0] = rows[0][0][:1].upper() + rows[0][0][1:]
    return rows


def tagged_conllu_text(n_sentences, seed=0, nonce=False, large=False):
    """CoNLL-U text of ``n_sentences`` random :func:`tagged_sentence` sentences."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_sentences):
        rows = tagged_sentence(rng, nonce, large)
        out.append(f"# sent_id = tagged-{seed}-{k}")
        out.append("# text = " + " ".join(r[0] for r in rows))
        for i, r in enumerate(rows, 1):
            out.append("\t".join([str(i), *r[:5], str(r[5]), r[6], "_", "_"]))
        out.append("")
    return "\n".join(out) + "\n"
