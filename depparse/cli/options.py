"""The command line's options: flags derived from the config classes, help texts with an
example per command (:func:`build_parser`)."""

from __future__ import annotations

import argparse
from dataclasses import fields

from ..config import DecodeConfig, ModelConfig, TrainConfig
from ..errors import ConfigError, UsageError
from ..inference.joint_tagging import JointSettings

JOINT_DEFAULTS = JointSettings()

__all__ = ["CONFIGS", "EXAMPLES", "add_config_flags", "build_parser", "configs_from_args",
           "recipe_settings"]

CONFIGS = (ModelConfig, DecodeConfig, TrainConfig)


def _add_common(p):
    p.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def _flag(f) -> str:
    return f.metadata.get("flag") or "--" + f.name.replace("_", "-")


def _cli_fields(command):
    for cls in CONFIGS:
        for f in fields(cls):
            if command in f.metadata.get("cli", ()):
                yield cls, f


def add_config_flags(p, command, model_defaults=False, recipe_defaults=False):
    """Flags of ``command`` derived from the fields of the config classes (help, choices,
    defaults).  ``model_defaults``: the default is the loaded model's (``None`` here);
    ``recipe_defaults``: the flags given are recorded (``args._given``), so that
    :func:`recipe_settings` gives the others the recipe's values."""
    taken = {_flag(f) for _, f in _cli_fields(command)}
    for _, f in _cli_fields(command):
        m = f.metadata
        shown = m.get("shown") or ("none" if f.default is None else f.default)
        if f.type in ("bool", bool):
            if f.default:  # a flag that turns it off (e.g. --multi-root for single_root)
                g = p.add_mutually_exclusive_group()
                g.add_argument(_flag(f), dest=f.name,
                               action=_given(argparse._StoreFalseAction, recipe_defaults),
                               default=None if model_defaults else f.default,
                               help=m.get("flag_help") or m["help"])
                # (and one that turns it on, unless another setting has that flag: --proof
                # is proof_over's, and turns proofs on)
                if model_defaults and "--" + f.name.replace("_", "-") not in taken:
                    g.add_argument("--" + f.name.replace("_", "-"), dest=f.name,
                                   action="store_true", default=None,
                                   help=m["help"] + " (default: the model's setting)")
            else:
                p.add_argument(_flag(f), dest=f.name,
                               action=_given(argparse._StoreTrueAction, recipe_defaults),
                               default=None if model_defaults else f.default,
                               help=m["help"] + " (default: off)")
            continue
        kind = {"int": int, "float": float, "str": str}[str(f.type).split(" ")[0]]
        help_ = m["help"] + (f" (default: the model's; {shown} unless trained otherwise)"
                             if model_defaults else f" (default: {shown})")
        p.add_argument(_flag(f), dest=f.name, type=kind, choices=m.get("choices"),
                       metavar=m.get("metavar"), default=None if model_defaults else f.default,
                       action=_given(argparse._StoreAction, recipe_defaults), help=help_)


def _given(base, record):
    """``base`` (an argparse action class), recording its destination in
    ``namespace._given`` when the flag is given (``record``), else ``base`` itself."""
    if not record:
        return base

    class Given(base):
        def __call__(self, parser, namespace, values, option_string=None):
            super().__call__(parser, namespace, values, option_string)
            given = getattr(namespace, "_given", set())
            given.add(self.dest)
            namespace._given = given

    return Given


def recipe_settings(args, command, recipe: dict) -> None:
    """The recipe's settings for the flags of ``command`` that were not given (the flags
    given beside a recipe override it)."""
    given = getattr(args, "_given", set())
    for _, f in _cli_fields(command):
        if f.name in recipe and f.name not in given:
            setattr(args, f.name, recipe[f.name])


def configs_from_args(args, command, model_defaults=False):
    """``{config class: keyword dict}`` of the flags of ``command`` that were given (all of
    them unless ``model_defaults``), validated: a bad value is a UsageError naming the flag."""
    out = {cls: {} for cls in CONFIGS}
    for cls, f in _cli_fields(command):
        v = getattr(args, f.name)
        if v is not None or not model_defaults:
            out[cls][f.name] = v
    for cls, kw in out.items():
        try:
            cls(**kw)
        except ConfigError as e:
            flag = next((_flag(f) for c, f in _cli_fields(command)
                         if c is cls and f.name == e.field), e.field)
            raise UsageError(f"{flag} {e.rule}") from None
    return out


EXAMPLES = {
    "train": """examples:
  depparse train --treebank UD_Greek-GDT/ -o el.npz       # the default recipe: as shipped
  depparse train el_gdt-ud-train.conllu --dev el_gdt-ud-dev.conllu -o el.npz   # the same
  depparse train train.conllu -o small.npz --recipe none --model sib --epochs 4 --bits 20
  depparse train train.conllu -o en.npz --resume          # continue after an interruption
  depparse train --treebank UD_Turkish-IMST/ --recipe tr_imst -o tr.npz   # a shipped recipe
""",
    "parse": """examples:
  depparse parse input.conllu -o output.conllu             # the shipped English model
  echo "The cat sat on the mat." | depparse parse --input text -   # plain text
  echo "The cat sat on the mat ." | depparse parse --input horizontal -   # words, tokenized
  depparse parse - < input.conllu > output.conllu          # stdin to stdout (or -o -)
  depparse parse input.conllu -o out.conllu --report run.json --jobs 2
  depparse parse big.conllu -o big.parsed.conllu --resume  # continue a run that was stopped
  depparse parse --input text corpus/*.txt -o parsed/      # one output per input file
  depparse parse corpus/ -o parsed/ --scheduler tcp://10.0.0.5:8786  # Dask workers (shared fs)
  depparse parse input.conllu -m my_model.npz --prune-threshold 1e-4 --prune-max-heads 10
""",
    "evaluate": """examples:
  depparse evaluate gold.conllu output.conllu
  depparse evaluate gold.conllu output.conllu --parse-report run.json --json
""",
    "models": """examples:
  depparse models                # name, language, treebank, version, size, test scores
  depparse models --json         # the same as JSON (with the paths and every card score)
""",
    "report": """examples:
  depparse report run.json                       # writes run_html/index.html
  depparse report run.json -o report_folder/
  depparse parse dev.conllu --no-proof --report sub.json -o /dev/null
  depparse parse dev.conllu --no-proof --solver ad3 --report ad3.json -o /dev/null
  depparse report sub.json --compare ad3.json       # the two solvers on one plot
""",
}


def _recipe_names():
    from ..recipes import names

    return names()


def _sub(sub, name, help_, description):
    return sub.add_parser(name, help=help_, description=description, epilog=EXAMPLES[name],
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser(extra=()):
    from .. import __version__

    ap = argparse.ArgumentParser(
        prog="depparse",
        description="Non-projective dependency parsing with head automata and dual "
                    "decomposition (Koo et al. 2010).  Every parse says whether it is "
                    "proved to be the model's highest-scoring tree (a certificate), over the "
                    "arcs the pruner keeps or, with 'parse --proof all', over all arcs.",
        epilog="Run 'depparse COMMAND --help' for the options and an example of each command.")
    ap.add_argument("--version", action="version", version=f"depparse {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = _sub(sub, "train", "train a model on a CoNLL-U treebank",
             "Train a parser (and its arc pruner and DEPREL labeler) on a CoNLL-U treebank "
             "with gold trees.  A checkpoint is written after every epoch and removed when "
             "the model is written.")
    t.add_argument("train", nargs="?", metavar="TRAIN", help="training CoNLL-U file")
    t.add_argument("--train", dest="train_flag", metavar="TRAIN", help=argparse.SUPPRESS)
    t.add_argument("--dev", help="development CoNLL-U file: UAS and certificates after every "
                                 "epoch, LAS at the end (default: none)")
    t.add_argument("--treebank", metavar="DIR",
                   help="a UD treebank's folder instead of TRAIN and --dev: its "
                        "*-ud-train.conllu and *-ud-dev.conllu (without a dev file, the last "
                        "10%% of the training sentences, as UDPipe does; default: none)")
    t.add_argument("--recipe", metavar="NAME|FILE",
                   help="start from a recipe's settings (flags given beside it override "
                        "them): a shipped one (" + ", ".join(_recipe_names()) + ") or a JSON "
                        "file (depparse/recipes/), or 'none' for the flags' own defaults (default: "
                        "default, the kind of model that ships, for any language: the "
                        "learned network over the multilingual encoder, its epochs from the "
                        "treebank's size, the experts' weights chosen on dev; the flags "
                        "below show their own defaults)")
    t.add_argument("-o", "--output", metavar="MODEL", help="model file to write (.npz; required)")
    t.add_argument("--out", dest="output", help=argparse.SUPPRESS)
    add_config_flags(t, "train", recipe_defaults=True)
    t.add_argument("--no-labeler", action="store_true",
                   help="do not train a DEPREL labeler (as --labeler-epochs 0)")
    t.add_argument("--checkpoint", metavar="FILE",
                   help="checkpoint file (default: MODEL.ckpt.npz)")
    t.add_argument("--keep-checkpoint", action="store_true",
                   help="keep the checkpoint after the model is written (default: remove it)")
    t.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    t.add_argument("--scheduler", metavar="ADDRESS",
                   help="train on a Dask cluster by iterative parameter mixing "
                        "(McDonald et al. 2010), e.g. tcp://127.0.0.1:8786 (default: here)")
    t.add_argument("--shards", type=int,
                   help="with --scheduler: data shards (default: one per worker)")
    _add_common(t)

    p = _sub(sub, "parse", "parse CoNLL-U files or plain text",
             "Parse CoNLL-U files (or plain text, --input text): HEAD and DEPREL are filled "
             "in; LEMMA, UPOS, XPOS and FEATS too in a sentence that has none of them, and "
             "where a file lacks a column altogether; every other byte is kept.  The input "
             "is read, parsed and written as a stream (any size, bounded memory); the output "
             "grows as OUT.partial and is renamed to OUT at the end.  Progress and a "
             "one-line summary go to stderr.")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="CoNLL-U files, or plain-text files with --input text (horizontal, "
                        "vertical) ('-' = stdin); a folder stands for its *.conllu (*.txt) "
                        "files")
    p.add_argument("--input", choices=("conllu", "text", "horizontal", "vertical"),
                   default="conllu",
                   help="conllu: CoNLL-U files (tokenized); text: plain UTF-8 text, "
                        "paragraphs separated by blank lines, which the model's tokenizer "
                        "splits into sentences and words; horizontal: a sentence per line, "
                        "its words separated by spaces; vertical: a word per line (up to a "
                        "tab), a blank line after each sentence (UDPipe's formats; the output "
                        "is CoNLL-U) (default: conllu)")
    p.add_argument("--normalized-spaces", action="store_true",
                   help="with --input text: UD's SpaceAfter=No alone in MISC (UDPipe's "
                        "tokenizer option), not the text's exact whitespace in SpacesAfter and "
                        "SpacesBefore (default: the exact whitespace, so that the text can be "
                        "rebuilt)")
    p.add_argument("--retag", action="store_true",
                   help="predict UPOS, XPOS, LEMMA and FEATS with the model's tagger even "
                        "where the input has them (default: in the sentences that have none "
                        "of the four, and the columns a file lacks altogether)")
    p.add_argument("--joint", action="store_true",
                   help="decode the UPOS the model's tagger predicts together with the tree "
                        "(joint tagging and parsing by dual decomposition, Rush et al. 2010), "
                        "each analysis proved optimal under the joint model; XPOS, FEATS and "
                        "LEMMA follow the UPOS chosen (default: the tagger fixes the tags "
                        "first)")
    p.add_argument("--joint-weight", type=float, default=None, metavar="W",
                   help="with --joint: the weight of the tagger's scores against the parser's "
                        f"(default: {JOINT_DEFAULTS.weight:g})")
    p.add_argument("--joint-candidates", type=int, default=None, metavar="K",
                   help="with --joint: at most K candidate tags per word (default: "
                        f"{JOINT_DEFAULTS.k})")
    p.add_argument("--joint-margin", type=float, default=None, metavar="M",
                   help="with --joint: a tag is a candidate when its max-marginal under the "
                        "tagger's chain is within M of the best (default: "
                        f"{JOINT_DEFAULTS.margin:g})")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="output file ('-': stdout; a device or FIFO is written in place), or "
                        "a folder (an existing one, or a name ending in '/'): one output per "
                        "input, named as the input with .conllu for its extension; inputs "
                        "whose output is there already, newer than the input, are skipped "
                        "(default: stdout)")
    p.add_argument("--resume", action="store_true",
                   help="continue a run that was stopped (killed, Ctrl-C) from its last "
                        "commit (every few seconds): the output is the same as a run that "
                        "was never stopped (default: refuse to replace a stopped run's "
                        "OUT.partial)")
    p.add_argument("--force", action="store_true",
                   help="write over an input given as the output, parse again the inputs "
                        "whose output in the folder is complete, start a stopped run again")
    p.add_argument("--in-place", action="store_true",
                   help="replace each input file by its parse (no -o)")
    p.add_argument("--progress-interval", type=float, default=None, metavar="SECONDS",
                   help="when stderr is not a terminal (a log file), a progress line every "
                        "SECONDS (default: 60; 0: none); a terminal gets a live line")
    p.add_argument("-m", "--model", help="model file, or an installed model's name, treebank "
                                         "or language ('depparse models' lists them) "
                                         "(default: en_ewt_gs, the English model)")
    add_config_flags(p, "parse", model_defaults=True)
    p.add_argument("--report", metavar="REPORT.json",
                   help="also write a parse report: per-sentence certificates, iterations, "
                        "times (JSON; read by 'depparse report') (default: none)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes (default: 1; 0: one per CPU); same output as 1")
    p.add_argument("--threads", type=int, choices=(1, 2),
                   help="threads of one process (--jobs 1): 2 runs the encoders and the "
                        "learned network (over e5's layers: the encoders alone) a batch ahead "
                        "of the decoding, 1 keeps to one core; same output (default: 2 where "
                        "the machine has two CPUs or more)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="parse on a Dask cluster (e.g. tcp://127.0.0.1:8786): its workers "
                        "read the inputs and write shard files beside the output, on a "
                        "filesystem they share with this machine (default: here)")
    p.add_argument("--shard-size", metavar="BYTES",
                   help="with --scheduler: bytes of input per task, e.g. 4M (default: about 8 "
                        "tasks per worker thread, 64K to 8M)")
    p.add_argument("--skip-bad", action="store_true",
                   help="skip malformed sentences (listed on stderr as FILE:LINE: message) "
                        "and parse the others; the output holds the good sentences only")
    _add_common(p)

    e = _sub(sub, "evaluate", "UAS/LAS of a system file against a gold file",
             "Score a parsed file against the gold file of the same sentences: UAS, LAS "
             "(CoNLL 2018 definitions: every word, punctuation included; LAS compares the "
             "universal part of DEPREL), both also without punctuation.")
    e.add_argument("gold", metavar="GOLD", help="gold-standard CoNLL-U file")
    e.add_argument("system", metavar="SYSTEM", help="parsed CoNLL-U file (same sentences)")
    e.add_argument("--parse-report", "--report", dest="parse_report", metavar="REPORT.json",
                   help="the parse report of SYSTEM ('depparse parse --report'): adds the "
                        "certificate rate (default: none)")
    e.add_argument("--json", action="store_true", help="print the scores as JSON")
    _add_common(e)

    r = _sub(sub, "report", "HTML/PNG/Markdown report from a parse report",
             "Write an HTML page with figures, a Markdown summary and summary.json from a "
             "parse report ('depparse parse --report').")
    r.add_argument("report", metavar="REPORT.json", help="the parse report to render")
    r.add_argument("--compare", nargs="+", default=[], metavar="OTHER.json",
                   help="parse reports of other runs on the same input (e.g. --solver ad3 and "
                        "subgradient, both with --no-proof): their certificates against the "
                        "iteration cap on one plot with this run's (default: none)")
    r.add_argument("-o", "--output", "--out-dir", dest="output", metavar="FOLDER",
                   help="output folder (default: REPORT_html beside the report)")
    _add_common(r)
    ms = _sub(sub, "models", "list the models that can be loaded by name",
              "List the models depparse can load by name (the checkout's models/ folder, "
              "then the installed model packages): language, treebank, version, file size, "
              "and the test scores their model cards report.")
    ms.add_argument("--json", action="store_true", help="print the list as JSON")
    _add_common(ms)
    for add in extra:  # more commands: add(sub-command parsers, the common flags' adder)
        add(sub, _add_common)
    return ap

