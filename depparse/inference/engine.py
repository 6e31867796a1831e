"""The parsing engine: one sentence through encode -> prune -> score parts -> decode -> label.

``mst`` models decode with Chu-Liu-Edmonds (or Eisner when projective) over all arcs; ``sib``
and ``gs`` models prune with the matrix-tree marginals of their arc-factored pruner
(:mod:`.pruning`) and decode with dual decomposition (Koo et al. 2010, Fig. 1 / Fig. 2);
labels come from the model's labeler (:mod:`.labeling`).  The decoding settings are the
model's (:class:`~depparse.config.DecodeConfig`), changed by :meth:`Engine.set_decoding`.

:class:`Engine` holds the model's parts and the settings, and its steps are public for the
training, the benchmarks and the tests: :meth:`~Engine.keep_mask` (the candidate arcs),
:meth:`~Engine.part_table` (the scored parts), :meth:`~Engine.decode` (the proved tree),
:meth:`~Engine.labels`, :meth:`~Engine.joint_table` (joint tagging's input),
:meth:`~Engine.parse_one` (all of them for one sentence) and :meth:`~Engine.iter_parsed` (a
stream, the encoder and the network a batch at a time).  The API over it is
:class:`~depparse.inference.parser.Parser`.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..config import check_solver
from ..decode.ad3 import ad3_decompose
from ..decode.bnb import PROOF_DUAL, PROOF_EXACT, decode_exact
from ..decode.dual import dual_decompose
from ..decode.eisner import eisner
from ..decode.joint import TagTable, decode_joint, joint_decompose
from ..decode.mst import chu_liu_edmonds
from ..decode.tag_chain import best_each, viterbi
from ..encoding.ahead import run_ahead
from ..encoding.minilm import one_blas_thread, word_vectors
from ..errors import UsageError
from ..features.dense import DenseArcs, model_dense_term
from ..features.label_dense import LabelDense
from ..features.parts import all_arcs, template_switches
from ..features.scoring import model_scorers, score
from ..features.tag_arcs import tag_arc_table
from ..model import Model
from ..network.biaffine import model_network
from .candidates import candidate_arcs
from .columns import TAG_COLUMNS
from .joint_tagging import JointSettings, tag_candidates
from .labeling import Labeler
from .tagging import Tagger
from .tokenizer import Tokenizer

__all__ = ["Engine", "JointInput", "ParseResult", "tree_decoder"]

#: Sentences per forward pass of a learned network in :meth:`Engine.iter_parsed`.
LEARNED_CHUNK = 32


def tree_decoder(projective):
    """The first-order tree decoder: Eisner's algorithm when projective, else CLE."""
    return eisner if projective else chu_liu_edmonds


@dataclass
class ParseResult:
    """Decoding outcome of one sentence."""

    heads: np.ndarray
    certificate: bool
    iterations: int
    seconds: float
    dual: np.ndarray | None = None
    primal: np.ndarray | None = None
    recomputed: np.ndarray | None = None
    kept_arcs: int = 0
    best_changes: list | None = None
    timed_out: bool = False
    # proof of optimality (depparse.decode.bnb): ``proof`` is "dual" (the dual decomposition
    # certificate), "branch-and-bound", "exact" (an arc-factored model: CLE/Eisner are exact)
    # or None (not proved: --no-proof, or --time-limit); ``iterations`` and the traces are
    # those of the first dual decomposition run, ``bnb_iterations`` those of the branch and
    # bound nodes (``nodes`` counts the first run too); ``bnb_seconds`` is part of ``seconds``
    optimal: bool = False
    proof: str | None = None
    # the graph ``proof`` holds over: "pruned" (the arcs the pruner kept, ``kept_arcs``),
    # "all" (every arc: an mst model, or --proof all); None when not proved
    optimal_over: str | None = None
    nodes: int = 0
    bnb_iterations: int = 0
    bnb_seconds: float = 0.0
    # the columns of TAG_COLUMNS the model's tagger predicted for this sentence (set by
    # Engine.parse_one; empty: the input's own tags)
    tagged: tuple = ()
    # joint tagging and parsing (Parser.set_joint): ``joint`` when the tree and the UPOS were
    # decoded together (the proof is then one of the joint analysis), ``tags_changed`` how
    # many UPOS it changed from the tagger's own sequence, ``tag_candidates`` the candidates
    # it chose among (all words together)
    joint: bool = False
    tags_changed: int = 0
    tag_candidates: int = 0


def _paired(vectors, pending):
    """Each encoder vector with its ``(sentence, tag_columns)``, taken from ``pending`` once
    the encoder has read the sentence (:meth:`Engine.iter_parsed`; the second iterator has no
    end of its own, hence ``strict=False``)."""
    return zip(vectors, iter(pending.popleft, None), strict=False)


class JointInput(NamedTuple):
    """What joint decoding of one sentence decodes (:meth:`Engine.joint_table`)."""

    pipe: Any  # the Sentence tagged by the tagger's own chain (the pipeline's tags)
    enc: Any  # its encoding (Encoded)
    keep: np.ndarray  # the kept arcs
    parts: Any  # PartTable, scored with the pipeline's tags
    tags: TagTable  # the candidate UPOS: the tagger's chain (weighted) and D
    best: np.ndarray  # the tagger's UPOS ids (index 0: -1)
    retag: Any  # retag(upos ids) -> the Sentence with those UPOS and what follows from them
    vectors: Any  # the encoder vectors the encoding used (or None)


def _with_given(weight, given):
    """``(weight, weight for sentences whose tags are given)``: a model without the second
    uses the first for both."""
    return float(weight), float(weight if given is None else given)

class Engine:
    """The pipeline of one :class:`~depparse.model.Model`, a sentence at a time (the module's
    docstring); ``path``: the model's file, for messages."""

    def __init__(self, model: Model, path=None):
        self.model = model
        self.path = None if path is None else str(path)
        self.config = model.config
        self.decoding = model.decoding
        self.order = model.config.order
        self.templates_on = template_switches(model.config.templates_off)
        self.w = np.ascontiguousarray(model.weights, dtype=np.float64)
        self.pruner_weights = (None if model.pruner is None
                               else np.ascontiguousarray(model.pruner, dtype=np.float64))
        if model.vocab is not None and model.vocab.context is not None:
            model.vocab.context.encoder  # noqa: B018 - load it now: a missing encoder fails here
        tok = model.components.get("tokenizer")
        self.tokenizer = None if tok is None else Tokenizer.from_component(tok)
        tag = model.components.get("tagger")
        self.tagger = None if tag is None else Tagger.from_component(tag)
        self.dense = model_dense_term(model.components.get("dense"), model.config.dense_layer,
                                      0 if model.vocab is None else model.vocab.vector_layer)
        self.learned = model_network(model.components.get("network"),
                                     model.config.learned_scale)
        # the network's UPOS and DEPREL views, multiplied into the tagger's and the labeler's
        # (products of experts; weights: ModelConfig.learned_tag_weight / _label_weight)
        # label_weight: for sentences whose UPOS the tagger predicts; label_weight_given: for
        # those whose tags are given; arc_weight(_given): the same for the network's arc
        # scores, a factor of the scale the parser's weights learnt beside
        self.tag_weight = self.label_weight = self.label_weight_given = 0.0
        self.arc_weight = self.arc_weight_given = 1.0
        self._net_upos = None
        if self.learned is not None:
            c = model.config
            self.arc_weight, self.arc_weight_given = _with_given(c.learned_arc_weight,
                                                                 c.learned_arc_weight_given)
            self.label_weight, self.label_weight_given = _with_given(
                c.learned_label_weight, c.learned_label_weight_given)
            if self.tagger is not None:
                self.tag_weight = float(model.config.learned_tag_weight or 0.0)
                # the tagger's UPOS classes as ids of the vocabulary the network predicts
                self._net_upos = np.array([model.vocab.upos.get(c) for c in self.tagger.upos],
                                          dtype=np.int64)
        self.joint = None  # JointSettings (set_joint): joint tagging and parsing
        pd = model.components.get("pruner_dense")
        self.pruner_dense = None if pd is None else DenseArcs.from_component(pd.meta, pd.arrays)
        self.labeler = None
        if model.labeler is not None:
            ld = model.components.get("label_dense")
            self.labeler = Labeler(model.vocab, model.labeler, model.config.labeler_bits,
                                   model.components.get("label_constraints"),
                                   None if ld is None else LabelDense.from_component(
                                       ld, self.dense, len(model.vocab.deprel)))

    # -- pruning ---------------------------------------------------------------------------
    @property
    def network_on_helper(self) -> bool:
        """With :meth:`iter_parsed`'s ``ahead`` > 0: does the learned network's own forward
        pass (BiLSTM and heads) run on the helper thread beside the encoders?  Yes, unless
        the network reads multilingual-e5-small's layers: that encoder is then the helper's
        largest cost, and the network's pass balances the two threads better on the
        decoder's (benchmarks/experiments/README.md, "The network's pass on the decoder's
        thread")."""
        return self.learned is None or not self.learned.spec.mix_layers

    def set_pruning(self, threshold=None, max_heads=None, network=None):
        """Prune harder (faster) or more loosely than the model was trained with.

        The pruner keeps, for each word, the heads whose marginal is at least ``threshold``
        times that of its best head, at most ``max_heads`` of them (the model's settings, 1e-5
        and 20 by default, when not given), and, in a model with a learned network, the heads
        whose network probability is at least ``network`` times the best head's, at most
        ``max_heads`` of them too (:mod:`.candidates`; default 1e-3, 0: none).  On en_ewt test,
        1e-4 / 10 heads parses with the shipped model 1.36 times as fast at 0.16 lower UAS
        (README, Command line).

        Raises
        ------
        ConfigError
            For a threshold outside ``[0, 1]`` or ``max_heads < 1``.
        UsageError
            For an ``mst`` model (it does not prune).
        """
        changes = {k: v for k, v in (("prune_threshold", threshold),
                                     ("prune_max_heads", max_heads),
                                     ("prune_network", network)) if v is not None}
        if not changes:
            return
        if self.order == 0:
            raise UsageError("this is an mst model: it scores all arcs and does not prune")
        self.set_decoding(**changes)

    def set_decoding(self, config=None, /, **fields):
        """Decode with other settings than the model's: any fields of
        :class:`~depparse.config.DecodeConfig` (``proof``, ``budget``, ``solver``, ...), on
        top of ``config`` (a whole DecodeConfig, e.g. one saved from :attr:`decoding` to go
        back to) where given.  The one way the settings change after loading
        (:meth:`set_pruning` and :meth:`set_proof` call it); nothing changes when a value is
        refused.

        Raises
        ------
        ConfigError
            For a value the field does not take, or a solver that cannot decode this model
            (:func:`~depparse.config.check_solver`).
        """
        new = dataclasses.replace(self.decoding if config is None else config,
                                  **fields)  # validates the values
        check_solver(self.config, new)
        self.decoding = new

    def set_experts(self, tag=None, label=None, arc=None, label_given=None, arc_given=None):
        """Weigh the learned network's views otherwise than the model does (products of
        experts; the model's weights are those its training chose): ``tag`` times its
        ``log P(UPOS | word)`` in the tagger; ``label`` times its ``log P(DEPREL | h, m)`` in
        the labeler and ``arc`` times its arc scores in the part table, for sentences whose
        UPOS the tagger predicts; ``label_given`` and ``arc_given`` for those whose tags are
        given.  Returns the weights before, as keywords for this method (to go back).

        Raises
        ------
        UsageError
            For a model without a learned network, a tag weight without a tagger, or a
            weight that is negative or not finite.
        """
        old = dict(tag=self.tag_weight, label=self.label_weight, arc=self.arc_weight,
                   label_given=self.label_weight_given, arc_given=self.arc_weight_given)
        new = {k: v for k, v in (("tag", tag), ("label", label), ("arc", arc),
                                 ("label_given", label_given), ("arc_given", arc_given))
               if v is not None}
        if new and self.learned is None:
            raise UsageError("this model has no learned network: it has no views to weigh")
        for k, v in new.items():
            if not (np.isfinite(v) and v >= 0):
                raise UsageError(f"the network's {k} weight {v}: must be finite and >= 0")
        if new.get("tag") and self.tagger is None:
            raise UsageError("a tag weight needs a model with a tagger; this one has none")
        got = {**old, **{k: float(v) for k, v in new.items()}}
        self.tag_weight, self.label_weight, self.arc_weight = (got["tag"], got["label"],
                                                               got["arc"])
        self.label_weight_given, self.arc_weight_given = got["label_given"], got["arc_given"]
        return old

    def set_proof(self, over="pruned", max_words=None):
        """Prove every tree optimal over ``over``: ``"pruned"``, the arcs the pruner keeps
        (the default), or ``"all"``, every arc of the sentence (decoded without pruning, up
        to ``max_words`` words, default the model's 80; a longer sentence keeps the pruned
        proof).  ``ParseResult.optimal_over`` says which a tree got (``parse --proof``).

        Raises
        ------
        ConfigError
            For another ``over`` or ``max_words < 1``.
        """
        changes = {"proof": True, "proof_over": over}
        if max_words is not None:
            changes["proof_max_words"] = max_words
        self.set_decoding(**changes)

    def set_joint(self, weight=None, k=None, margin=None, on=True):
        """Decode the UPOS of the sentences the tagger tags together with their trees
        (joint tagging and parsing, :mod:`depparse.decode.joint`): ``weight`` of the tagger's
        scores against the parser's, at most ``k`` candidate tags per word within ``margin``
        of the best (:class:`~depparse.inference.joint_tagging.JointSettings`; its defaults when not
        given).  ``on=False`` turns it off (the pipeline).

        Raises
        ------
        UsageError
            For a model without a tagger, with head bigrams, or decoding with AD3.
        ConfigError
            For settings out of range.
        """
        if not on:
            self.joint = None
            return
        if self.tagger is None:
            raise UsageError("joint tagging needs a model with a tagger; this one has none")
        if self.config.head_bigrams:
            raise UsageError("joint tagging does not combine with head bigrams (a gsh model)")
        if self.decoding.solver != "subgradient":
            raise UsageError("joint tagging decodes by subgradient dual decomposition: not with "
                             "--solver ad3")
        given = {k_: v for k_, v in (("weight", weight), ("k", k), ("margin", margin))
                 if v is not None}
        self.joint = JointSettings(**given)

    def keep_mask(self, enc, single_root=None):
        """Arcs the decoder may use: all for ``mst`` models, else the pruner's kept arcs and
        the learned network's likely heads (:func:`~.candidates.candidate_arcs`)."""
        d = self.decoding
        single = d.single_root if single_root is None else single_root
        pruner_weights = self.pruner_weights if self.order > 0 else None
        net = (self.learned.arc_logprobs(enc)
               if self.learned is not None and d.prune_network > 0 and self.order > 0 else None)
        return candidate_arcs(enc, pruner_weights, self.config.pruner_bits, d.prune_threshold,
                              d.prune_max_heads, single, self.pruner_dense, net,
                              d.prune_network)

    def pruner_recall(self):
        """``(recall, at_least)``: the pruner's gold-arc recall on dev (a percentage) that the
        model's training measured, for the pruning this parser does, or ``(None, False)``
        where it is not known (another threshold or cap than the model's, an ``mst`` model,
        no measurement).  ``at_least``: the parser keeps more arcs than were measured (the
        learned network's heads on top of a measurement of the pruner alone, or at a lower
        ``prune_network``), so that the recall is at least that.

        The network's heads are capped at ``prune_max_heads`` per word since 2026-12-06
        (:func:`~.candidates.network_heads`); a record made before (without
        ``pruner_network_capped``) measured them uncapped.  Its recall is returned for the
        model's own pruning, where the cap leaves the measurement as it was on seventeen of the
        twenty shipped models' dev data (is_modern's 99.41% is 99.31% with the cap, vi_vtb's
        99.63% 99.62%: benchmarks/experiments/README.md, "A cap on the network's heads"),
        and not for a lower ``prune_network``, whose capped heads need not hold the uncapped
        ones."""
        d, trained = self.decoding, self.model.decoding
        hist = self.model.info.get("history", []) if isinstance(self.model.info, dict) else []
        got = next((h for h in hist if isinstance(h, dict) and "pruner_dev_recall" in h), None)
        if (self.order == 0 or got is None or d.prune_threshold != trained.prune_threshold
                or d.prune_max_heads != trained.prune_max_heads):
            return None, False
        measured = float(got.get("pruner_network", 0.0))  # 0: the pruner alone
        now = d.prune_network if self.learned is not None else 0.0
        if now == measured:
            return float(got["pruner_dev_recall"]), False
        capped = bool(got.get("pruner_network_capped", False))
        # a superset of the measured arcs: the network's heads on top of the pruner alone,
        # or, capped both times, the top heads of a lower threshold
        if measured == 0.0 or (capped and 0.0 < now < measured):
            return float(got["pruner_dev_recall"]), True
        return None, False

    def _proves_all(self, n) -> bool:
        """Is a sentence of ``n`` words decoded over all its arcs, so that its proof holds
        over every tree (an ``mst`` model; ``proof_over = "all"`` up to ``proof_max_words``
        words)?"""
        d = self.decoding
        return self.order == 0 or (d.proof_over == "all" and n <= d.proof_max_words)

    def part_table(self, enc, keep=None, weights=None, dense=None, arc_weight=1.0):
        """The scored parts (:class:`~depparse.decode.part_table.PartTable`) of an encoded sentence
        over its candidate arcs (``keep``, computed by :meth:`keep_mask` when not given):
        :func:`~depparse.features.scoring.score` with :meth:`scorers`.  ``weights`` and
        ``dense`` replace the model's parser weights and dense arc term.  The learned
        network's arc scores (models with ``learned_scale``; :mod:`depparse.network.biaffine`)
        are added last, times ``arc_weight`` (1: as in training; parsing passes
        :attr:`arc_weight` or :attr:`arc_weight_given`)."""
        if keep is None:
            keep = self.keep_mask(enc)
        return score([(enc, keep)], self.scorers(weights, dense, arc_weight), self.order,
                     self.config.head_bigrams)[0]

    def scorers(self, weights=None, dense=None, arc_weight=1.0) -> list:
        """The model's scorers of the part tables, in the order they add
        (:mod:`depparse.features.scoring`): the sparse weights (``weights`` in their place),
        the dense arc term (``dense`` in its place) and the learned network's arc term times
        ``arc_weight``, each where the model has it."""
        return model_scorers(self.w if weights is None else weights, self.config.bits,
                             self.order, self.templates_on,
                             self.dense if dense is None else dense, self.learned, arc_weight)

    # -- decoding --------------------------------------------------------------------------
    def decode(self, enc, keep=None, max_iter=None, single_root=None, weights=None,
               trace=False, time_limit=None, dense=None, arc_weight=None) -> ParseResult:
        """Best tree of one encoded sentence.

        Parameters
        ----------
        enc : depparse.encoding.Encoded
        keep : (N, N) bool, optional
            Kept arcs (computed by :meth:`keep_mask` when not given).
        max_iter : int, optional
            Iteration cap K of dual decomposition (default: the model's).
        single_root : bool, optional
            Default: the model's setting (True for UD).
        weights : array, optional
            Use these parser weights instead of the model's (training-time evaluation).
        dense : depparse.features.dense.DenseArcs, optional
            Likewise for the dense arc term of a model that has one.
        arc_weight : float, optional
            Factor of the learned network's arc scores (:meth:`part_table`); default
            :attr:`arc_weight_given`, as for a sentence whose tags are given (this method does
            not tag).
        trace : bool
            Keep the per-iteration dual/primal/recomputed traces and the best-tree history.
        time_limit : float, optional
            Anytime decoding: seconds for the sentence (default: the model's decoding setting,
            :data:`~depparse.config.PROOF_SECONDS`; 0: no limit); then the best tree so far,
            marked not proved.

        With the model's ``proof`` setting (the default), a sentence that dual decomposition
        (``solver``) has not certified after :meth:`~depparse.config.DecodeConfig.first_budget`
        iterations (``max(budget, budget_per_word * n)``, at most ``max_iter``) is finished
        by branch and bound (:func:`~depparse.decode.bnb.decode_exact`), so that the tree is
        proved optimal; without it, dual decomposition stops at ``max_iter`` iterations with
        the best tree (Koo et al. 2010, Sec. 7.5).  The proof holds over the arcs decoded:
        the pruner's kept arcs, or every arc of the sentence where :meth:`_proves_all` (then
        ``keep`` is not computed; a ``keep`` given is decoded over as it is), and
        ``ParseResult.optimal_over`` says which (``"pruned"`` or ``"all"``).
        """
        d = self.decoding
        t0 = time.perf_counter()
        single, K, time_limit = self._limits(max_iter, single_root, time_limit)
        if keep is None:
            # --proof all: no pruning, so that the optimum is one over every tree (affordable
            # up to proof_max_words: benchmarks/results/proofs.md)
            keep = (all_arcs(enc.n + 1) if self._proves_all(enc.n)
                    else self.keep_mask(enc, single))
        over_all = _every_arc(keep)
        parts = self.part_table(enc, keep, weights, dense,
                                self.arc_weight_given if arc_weight is None else arc_weight)
        if self.order == 0:
            heads = tree_decoder(d.projective)(parts.arc, single_root=single)
            return ParseResult(heads, True, 1, time.perf_counter() - t0,
                               kept_arcs=int(keep.sum()), optimal=True, proof=PROOF_EXACT,
                               nodes=1, optimal_over=_over(True, over_all))
        kw = dict(alpha=d.alpha, single_root=single, projective=d.projective,
                  time_limit=time_limit)
        if d.proof:
            r = decode_exact(parts, budget=d.first_budget(enc.n, K), solver=d.solver, history=trace,
                             **kw)
            proof, nodes = r.proof, r.nodes
            extra = dict(bnb_iterations=r.iterations - r.root_iterations,
                         bnb_seconds=r.seconds_bnb)
            iterations = r.root_iterations
        else:
            decoder = ad3_decompose if d.solver == "ad3" else dual_decompose
            r = decoder(parts, max_iter=K, **kw)
            proof, nodes, extra = (PROOF_DUAL if r.certificate else None), 1, {}
            iterations = r.iterations
        res = ParseResult(r.heads, r.certificate, iterations, time.perf_counter() - t0,
                          kept_arcs=int(keep.sum()), timed_out=r.timed_out,
                          optimal=proof is not None, proof=proof, nodes=nodes,
                          optimal_over=_over(proof is not None, over_all), **extra)
        if trace:
            res.dual, res.primal, res.recomputed = r.dual, r.primal, r.recomputed
            res.best_changes = r.best_changes
        return res

    def parse_heads(self, sentences, **kwargs):
        """Decode a list of :class:`~depparse.conllu.Sentence`; returns ParseResults."""
        enc = self.model.vocab.encode
        return [self.decode(enc(s), **kwargs) for s in sentences]

    # -- full parsing (heads + labels) -------------------------------------------------------
    def parse_one(self, sentence, max_iter=None, single_root=None, time_limit=None,
                  trace=False, tag_columns=(), vectors=None, network=None):
        """Parse one sentence: returns ``(parsed_sentence, ParseResult)``.

        Only HEAD and DEPREL change, and the columns of ``tag_columns`` (any of ``"UPOS"``,
        ``"XPOS"``, ``"LEMMA"``, ``"FEATS"``), which the model's tagger predicts first;
        DEPREL comes from the model's labeler (``_`` when the model has none).  ``vectors``:
        the words' encoder vectors of the contextual classes' layer, when the caller has
        them (:meth:`iter_parsed`); computed here otherwise.  ``network``: the learned
        network's outputs for the sentence (``Encoded.network``: computed with a batch of
        others, :meth:`iter_parsed`); computed for it alone otherwise.
        """
        if self.joint is not None and "UPOS" in tag_columns:
            return self._parse_joint(sentence, tuple(tag_columns), vectors, max_iter,
                                     single_root, time_limit, network)
        if tag_columns:
            sentence, vectors = self.tag_one(sentence, tag_columns, vectors, network)
        enc = self.model.vocab.encode(sentence, vectors)
        enc.network = network  # the network reads the forms alone: the tags do not matter
        r = self.decode(enc, max_iter=max_iter, single_root=single_root, trace=trace,
                        time_limit=time_limit, arc_weight=self.arc_weight
                        if "UPOS" in tag_columns else self.arc_weight_given)
        r.tagged = tuple(tag_columns)
        rels = self.labels(enc, r.heads, "UPOS" in tag_columns)
        return sentence.with_parse(r.heads, rels), r

    def joint_table(self, sentence, tag_columns=tuple(TAG_COLUMNS), vectors=None,
                    single_root=None, network=None) -> JointInput:
        """What joint decoding of one sentence decodes (:class:`JointInput`): the sentence
        tagged by the tagger's own chain (``tag_columns`` predicted), its part table over the
        kept arcs and its tag table over the candidate UPOS (:meth:`set_joint`'s settings,
        their defaults when it is off).  ``network``: as :meth:`parse_one` takes it."""
        js, vocab, tg = self.joint or JointSettings(), self.model.vocab, self.tagger
        shared = self._shared_vectors(sentence, vectors)
        vectors = shared if vectors is None else vectors
        cols = [TAG_COLUMNS[c] for c in tag_columns]
        forms = sentence.forms
        lat = tg.upos_lattice(forms, shared, self._tag_extra(sentence, vectors, network))
        task = tg.tasks["upos"]
        best = (viterbi(lat.emit, lat.ptr, lat.ids, task.trans) if task.viterbi
                else best_each(lat.emit, lat.ptr, lat.ids))

        def tagged(upos):
            lem, up, xp, fe = tg.tag_given_upos(forms, lat, upos)
            got = {"lemmas": lem, "upos": up, "xpos": xp, "feats": fe}
            return sentence.with_tags(**{c: got[c] for c in cols})

        pipe = tagged(best)
        enc = vocab.encode(pipe, vectors)
        enc.network = network
        keep = self.keep_mask(enc, single_root)
        parts = self.part_table(enc, keep, arc_weight=self.arc_weight)
        cptr, sel = tag_candidates(lat.emit, lat.ptr, lat.ids, task.trans, best, js.k,
                                   js.margin)
        ids = lat.ids[sel]
        cand_upos = np.array([vocab.upos.get(tg.upos[t]) for t in ids], dtype=np.int64)
        doff, dtab = tag_arc_table(enc, keep, self.w, self.config.bits, cptr, cand_upos,
                                   self.templates_on)
        tags = TagTable(cptr, ids, js.weight * lat.emit[sel], js.weight * task.trans, doff,
                        dtab)
        return JointInput(pipe, enc, keep, parts, tags, best, tagged, vectors)

    def _limits(self, max_iter, single_root, time_limit):
        """``(single_root, max_iter, time_limit)`` of a decoding: the arguments given, else
        the model's decoding settings (``time_limit`` None: no limit, for a 0 given)."""
        d = self.decoding
        single = d.single_root if single_root is None else bool(single_root)
        K = d.max_iter if max_iter is None else int(max_iter)
        return single, K, d.seconds(time_limit)

    def labels(self, enc, heads, predicted=False, weight=None):
        """The DEPREL strings of the tree ``heads`` of an encoded sentence, as parsing labels
        it (``""`` everywhere when the model has no labeler): the labeler's best labelling of
        its scores plus ``weight`` times the learned network's ``log P(DEPREL | h, m)``.

        ``weight`` defaults to :attr:`label_weight` where the tagger predicted the sentence's
        UPOS (``predicted``), else to :attr:`label_weight_given`; 0 for a model without a
        network."""
        if self.labeler is None:
            return [""] * len(heads)
        if weight is None:
            weight = self.label_weight if predicted else self.label_weight_given
        extra = None
        if weight and self.learned is not None:
            extra = weight * self.learned.label_logprobs(enc, heads)
        return self.labeler.label_strings(enc, heads, extra)

    def tag_one(self, sentence, tag_columns, vectors=None, network=None):
        """``(sentence, vectors)``: a copy of ``sentence`` with ``tag_columns`` (of
        :data:`TAG_COLUMNS`) predicted by the tagger, with the network's UPOS view times
        ``tag_weight``, as :meth:`parse_one` tags before it parses, and the encoder vectors
        it used (``vectors`` when given; ``network`` as :meth:`parse_one` takes it)."""
        shared = self._shared_vectors(sentence, vectors)
        vectors = shared if vectors is None else vectors
        extra = self._tag_extra(sentence, vectors, network)
        tagged = self.tagger.retag([sentence], None if shared is None else [shared],
                                   [TAG_COLUMNS[c] for c in tag_columns],
                                   None if extra is None else [extra])[0]
        return tagged, vectors

    def _tag_extra(self, sentence, vectors=None, network=None):
        """The learned network's UPOS view of an untagged sentence, for the tagger:
        ``tag_weight * log P(UPOS | word)`` (n + 1, U) in the order of the tagger's classes
        (None when the model has no network or the weight is 0).  Read from the network's
        outputs ``network`` (:meth:`parse_one`) where they hold it, else computed for the
        sentence alone."""
        if not self.tag_weight:
            return None
        lp = (network[1] if network is not None and network[1] is not None
              else self.learned.tag_logprobs(self.model.vocab.encode(sentence, vectors)))
        return self.tag_weight * lp[:, self._net_upos]

    def _parse_joint(self, sentence, tag_columns, vectors, max_iter, single_root, time_limit,
                     network=None):
        """:meth:`parse_one` with joint tagging and parsing (:meth:`set_joint`): the tree and
        the UPOS decoded together (:func:`~depparse.decode.joint.decode_joint`) over the
        tagger's candidate tags; XPOS, FEATS and LEMMA (where predicted) then follow the UPOS
        chosen, and the labeler reads them."""
        d = self.decoding
        t0 = time.perf_counter()
        single, K, time_limit = self._limits(max_iter, single_root, time_limit)
        ji = self.joint_table(sentence, tag_columns, vectors, single, network)
        kw = dict(alpha=d.alpha, single_root=single, projective=d.projective,
                  time_limit=time_limit)
        if d.proof:
            r = decode_joint(ji.parts, ji.tags, budget=d.first_budget(sentence.n, K), **kw)
            proof, nodes, root_iter = r.proof, r.nodes, r.root_iterations
            extra = dict(bnb_iterations=r.iterations - r.root_iterations,
                         bnb_seconds=r.seconds_bnb)
        else:
            r = joint_decompose(ji.parts, ji.tags, max_iter=K, **kw)
            proof, nodes, root_iter, extra = (PROOF_DUAL if r.certificate else None), 1, \
                r.iterations, {}
        upos = ji.tags.chosen(r.tags, ji.best)
        changed = int((upos[1:] != ji.best[1:]).sum())
        out, enc = ji.pipe, ji.enc
        if changed:
            out = ji.retag(upos)
            enc = self.model.vocab.encode(out, ji.vectors)
            enc.network = network
        res = ParseResult(r.heads, r.certificate, root_iter, time.perf_counter() - t0,
                          kept_arcs=int(ji.keep.sum()), timed_out=r.timed_out,
                          optimal=proof is not None, proof=proof, nodes=nodes,
                          optimal_over=_over(proof is not None, False),
                          tagged=tag_columns, joint=True, tags_changed=changed,
                          tag_candidates=int(ji.tags.ids.shape[0]), **extra)
        rels = self.labels(enc, r.heads, True)
        return out.with_parse(r.heads, rels), res

    def iter_parsed(self, items, *, ahead: int = 0, **kw):
        """:meth:`parse_one` of each ``(sentence, tag_columns)`` pair of an iterable, in
        order, lazily: the sentences are taken from ``items`` as the encoder needs them (a
        forward pass over a batch of them: ``Vocabularies.iter_context_vectors``, each
        sentence's vectors those it gets alone, bit for bit where the BLAS allows), so that a
        stream of any length is parsed in bounded memory.  Keywords: those of
        :meth:`parse_one` but ``tag_columns``, ``vectors`` and ``network``.

        ``ahead`` > 0: the encoder's passes, the learned network's (a chunk of
        :data:`LEARNED_CHUNK` sentences each; for a network over e5's layers, only those
        layers: its own pass runs on this thread, :attr:`network_on_helper`) and the reading
        of ``items`` they drive run on a second thread, up to that many passes (or chunks)
        ahead of the decoding; the output is the same.  What reading ``items`` raises is
        raised here, in its place in the order."""
        pending = collections.deque()

        def sentences():
            for s, cols in items:
                pending.append((s, cols))
                yield s

        # one BLAS thread for the whole batch (the encoder's and the labeler's dense products
        # are small: threads only contend, worst in --jobs workers); set once, not per
        # sentence, which would cost more than the labeler's products
        with one_blas_thread():
            if self.learned is None:
                vectors = self.model.vocab.iter_context_vectors(sentences(), ahead)
                try:
                    for v, (s, cols) in _paired(vectors, pending):
                        yield self.parse_one(s, vectors=v, tag_columns=cols, **kw)
                finally:
                    # a helper thread stops (and is joined) before the BLAS limit is lifted
                    vectors.close()
                return
            split = bool(ahead) and not self.network_on_helper
            chunks = self._network_chunks(sentences(), pending, outputs=not split)
            if ahead:
                # the network's forward pass on the helper as well (network_on_helper): 1.2
                # times the words/s of the encoder alone ahead (benchmarks/experiments/
                # README.md, "The learned network ahead too"), now that the decoders'
                # kernels release the GIL (nogil) and leave the helper its share of the
                # interpreter; with e5's layers, those alone on the helper
                chunks = run_ahead(chunks, ahead, name="depparse-encoder")
            try:
                for chunk, got in chunks:
                    # split: e5's layers came from the helper, the network's pass is here
                    outputs = self.learned.batch_outputs(got) if split else got
                    for (v, (s, cols)), out in zip(chunk, outputs, strict=True):
                        yield self.parse_one(s, vectors=v, tag_columns=cols, network=out,
                                             **kw)
            finally:
                chunks.close()

    def _network_chunks(self, sentences, pending, outputs=True):
        """``(chunk, network outputs)`` of :data:`LEARNED_CHUNK` sentences at a
        time (``chunk``: their ``(vectors, (sentence, tag_columns))``), the network's scores
        of a chunk from one forward pass (2.3x the words/s of one sentence at a time,
        benchmarks/experiments/README.md); its input is the words alone, so the tags
        predicted in parse_one do not change them.  ``outputs`` False: ``(chunk, encoded
        sentences)`` instead, with the encoder's layers that the network reads attached
        (:meth:`~depparse.network.biaffine.Network.attach_layers`), for the caller's
        ``batch_outputs``: the same outputs."""
        vectors = self.model.vocab.iter_context_vectors(sentences)
        try:
            stream = _paired(vectors, pending)
            while chunk := list(itertools.islice(stream, LEARNED_CHUNK)):
                encs = [self.model.vocab.encode(s, v) for v, (s, _) in chunk]
                self.learned.attach_layers(encs)  # e5's layers, where the network reads them
                yield chunk, self.learned.batch_outputs(encs) if outputs else encs
        finally:
            vectors.close()
    def tag(self, sentences, columns):
        """Copies of ``sentences`` with ``columns`` (of :data:`TAG_COLUMNS`) predicted by the
        model's tagger (the sentences themselves when there is nothing to predict)."""
        if not columns:
            return list(sentences)
        sentences = list(sentences)
        extras = None
        if self.tag_weight:  # the network's UPOS view, many sentences per forward pass
            outs = self.learned.batch_outputs([self.model.vocab.encode(s) for s in sentences])
            extras = [self.tag_weight * o[1][:, self._net_upos] for o in outs]
        return self.tagger.retag(sentences, None, [TAG_COLUMNS[c] for c in columns], extras)
    def _shared_vectors(self, sentence, vectors=None):
        """The encoder vectors of a sentence when the tagger and the contextual classes use
        the same layer (computed once for both; ``vectors`` when given), else None (each
        computes its own)."""
        ctx, enc = self.model.vocab.context, self.tagger.encoder
        if ctx is not None and enc is not None and int(enc["layer"]) == ctx.layer:
            return word_vectors(ctx.layer, sentence.forms[1:]) if vectors is None else vectors
        return None


def _every_arc(keep) -> bool:
    """Does ``keep`` hold every arc of its sentence (``h -> m`` for all ``m >= 1``, ``h != m``)?"""
    return bool(keep[all_arcs(keep.shape[0])].all())


def _over(proved, over_all):
    """``ParseResult.optimal_over`` of a decoding: None when not proved, else ``"all"`` when
    it was over every arc, ``"pruned"`` otherwise."""
    if not proved:
        return None
    return "all" if over_all else "pruned"
