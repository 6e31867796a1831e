"""Soft label constraints (Anzaroot et al. 2014): the dual decomposition decoder against
brute-force enumeration, the constraint set, and penalties learned on real treebank data."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from depparse.decode.label_chain import label_chain, soft_label_chain, soft_objective
from depparse.features.label_constraints import constraint_set


def _instance(seed, k_max=4, L_max=5, lo=2):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, k_max + 1))
    L = lo + int(rng.integers(2, L_max + 1))
    h = int(rng.integers(0, k + 1))
    children = np.array([i for i in range(k + 1) if i != h], dtype=np.int64)[:k]
    if len(children) < k:
        children = np.arange(1, k + 1, dtype=np.int64)
        h = 0
    E = rng.normal(size=(k, L)) * 2
    E[:, :lo] = -np.inf
    first = rng.normal(size=L)
    trans = rng.normal(size=(3, L, L))
    K = int(rng.integers(1, 5))
    A = rng.integers(-1, 2, size=(K, L)).astype(float)
    A[:, :lo] = 0.0
    b = rng.integers(0, 3, size=K).astype(float)
    rho = rng.exponential(2.0, size=K) * (rng.random(K) < 0.8)
    return E, first, trans, children, h, lo, A, b, rho


def _brute(E, first, trans, children, h, lo, A, b, rho):
    L = E.shape[1]
    best = -np.inf
    for seq in itertools.product(range(lo, L), repeat=len(children)):
        v = soft_objective(E, first, trans, children, h, np.array(seq), A, b, rho)
        best = max(best, v)
    return best


@pytest.mark.parametrize("seed", range(60))
def test_soft_chain_against_brute_force(seed):
    """A labelling called proved has the brute-force optimum's soft score; one not proved is
    still a valid labelling scoring no more than it."""
    E, first, trans, children, h, lo, A, b, rho = _instance(seed)
    out = np.zeros(children.max() + 1, dtype=np.int64)
    it, proved = soft_label_chain(E, first, trans, children, h, lo, A, b, rho, 200, out)
    y = out[children]
    assert y.min() >= lo
    got = soft_objective(E, first, trans, children, h, y, A, b, rho)
    want = _brute(E, first, trans, children, h, lo, A, b, rho)
    assert got <= want + 1e-9
    if proved:
        assert got == pytest.approx(want, abs=1e-9)


def test_soft_chain_proves_most_random_instances():
    """Most random instances end with a proof (the relaxation can have a gap, so not all:
    of the 60 seeds above, measured when written, 29 need dual steps and 52 end proved; the
    random constraints mix signs, harder than the real "at most one" ones)."""
    proved = 0
    for seed in range(60):
        E, first, trans, children, h, lo, A, b, rho = _instance(seed)
        out = np.zeros(children.max() + 1, dtype=np.int64)
        proved += soft_label_chain(E, first, trans, children, h, lo, A, b, rho, 200, out)[1]
    assert proved >= 45


def test_zero_penalties_are_the_plain_chain():
    E, first, trans, children, h, lo, A, b, rho = _instance(3)
    out = np.zeros(children.max() + 1, dtype=np.int64)
    ref = out.copy()
    label_chain(E, first, trans, children, h, lo, ref)
    it, proved = soft_label_chain(E, first, trans, children, h, lo, A, b, np.zeros_like(rho),
                                  200, out)
    assert (it, proved) == (0, True)
    assert np.array_equal(out, ref)


def test_large_penalty_enforces_the_constraint():
    """Two children that both prefer label 2 under 'at most one 2' with a large penalty: one
    of them moves to its second choice, the one that costs less."""
    lo = 2
    E = np.array([[-np.inf, -np.inf, 5.0, 4.0], [-np.inf, -np.inf, 5.0, 1.0]])
    first, trans = np.zeros(4), np.zeros((3, 4, 4))
    children, h = np.array([1, 2]), 0
    A = np.array([[0.0, 0.0, 1.0, 0.0]])
    b = np.array([1.0])
    out = np.zeros(3, dtype=np.int64)
    it, proved = soft_label_chain(E, first, trans, children, h, lo, A, b, np.array([100.0]), 200,
                                  out)
    assert proved and it > 0
    assert list(out[1:]) == [3, 2]
    # a penalty below the cost of moving (1.0) leaves both on label 2
    soft_label_chain(E, first, trans, children, h, lo, A, b, np.array([0.5]), 200, out)
    assert list(out[1:]) == [2, 2]


def test_constraint_set_over_ud_labels():
    labels = ["<UNK>", "<ROOT>", "root", "nsubj", "nsubj:pass", "obj", "iobj", "csubj", "punct"]
    names, A, b = constraint_set(labels, 2)
    assert A.shape == (len(names), len(labels)) and b.shape == (len(names),)
    row = dict(zip(names, A, strict=True))
    assert list(row["at most one nsubj"]) == [0, 0, 0, 1, 1, 0, 0, 0, 0]  # subtypes count
    assert "at most one root" not in row
    assert list(row["iobj needs obj, ccomp or xcomp"]) == [0, 0, 0, 0, 0, -1, 1, 0, 0]
    assert "one clausal complement (ccomp, xcomp)" not in row  # neither label present
    assert A[:, :2].sum() == 0


def test_model_with_constraints_round_trip(tmp_path):
    """A model trained with --label-constraints stores them, parses with them (labels as
    good as without on its synthetic grammar) and refuses a component of another version."""
    import synthetic

    import depparse
    from depparse.errors import ModelError
    from depparse.inference.parser import Parser
    from depparse.model import Model

    tr = synthetic.sentences(150, seed=11)
    m = depparse.train(tr, None, model="sib", bits=16, pruner_bits=14, labeler_bits=15,
                       epochs=2, labeler_epochs=6, progress=False, pruner_folds=0,
                       label_constraints=True, tagger=False, tokenizer=False)
    comp = m.components["label_constraints"]
    names, A, _ = constraint_set(m.vocab.deprel.items, 6)
    assert comp.meta["names"] == names and np.array_equal(comp.arrays["A"], A)
    assert (comp.arrays["rho"] >= 0).all()
    path = tmp_path / "m.npz"
    m.save(path)
    te = synthetic.sentences(40, seed=12)
    parsed = depparse.load(path).parse(te)
    right = sum(int((np.asarray(g.rels[1:]) == np.asarray(s.rels[1:])).sum())
                for g, s in zip(te, parsed, strict=True))
    assert right / sum(s.n for s in te) > 0.95
    m2 = Model.load(path)
    m2.components["label_constraints"].meta["version"] = 99
    with pytest.raises(ModelError, match="label constraints of version 99"):
        Parser(m2)
    m2.components["label_constraints"].meta["version"] = 1
    del m2.components["label_constraints"].arrays["rho"]
    with pytest.raises(ModelError, match="lack the array 'rho'"):
        Parser(m2)


@pytest.mark.slow  # trains on an en_ewt slice: 10 s (measured)
@pytest.mark.corpora
def test_penalties_learned_on_real_treebank(corpora_dir):
    """On jackknifed en_ewt labels the learned penalties single out what the labeler gets
    wrong and the gold trees respect: two subjects of one predicate cost more than two
    punctuation children (which gold trees have at hundreds of heads), and the averaged
    penalties leave no more held-out labels wrong than none."""
    from depparse.conllu import read_conllu
    from depparse.encoding.vocab import Vocabularies
    from depparse.learn.labeler import fit_label_constraints, held_out_label_scores

    tr = read_conllu(corpora_dir / "en_ewt" / "en_ewt-ud-train.conllu")[:3000]
    v = Vocabularies.build(tr, min_count=2)
    held = held_out_label_scores([v.encode(s) for s in tr], [np.asarray(s.heads) for s in tr],
                                 [s.rels for s in tr], v, bits=18, epochs=4, folds=3)
    comp = fit_label_constraints(held, v.deprel.items, rates=(1.0,), require_gain=False)
    rho = dict(zip(comp.meta["names"], comp.arrays["rho"], strict=True))
    wrong = comp.meta["held_out_wrong"]
    print(f"held-out labels wrong {wrong}; one subject {rho['one subject (nsubj, csubj)']:.2f}, "
          f"punct {rho['at most one punct']:.2f}")
    assert rho["one subject (nsubj, csubj)"] > rho["at most one punct"]
    assert wrong["1.0"] <= wrong["none"]
