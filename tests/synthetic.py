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
