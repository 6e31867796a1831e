"""The served models, loaded once in the server's fork server, before any worker exists.

:class:`~depparse.serve.workers.Workers` starts its workers with the ``forkserver`` start
method and names this module as the fork server's preload: the fork server, a process of its
own started once, without the server's threads, imports it, and this import loads every model
named in ``$DEPPARSE_SERVE_MODELS`` (a JSON object, served name -> model file: set by
``Workers`` only while it starts the fork server) with every kernel a request may use
(:func:`_load`, which the workers also use for a model the fork server did not load).  Each
worker is then forked from that state: the model arrays, the encoder's weights and Numba's
compiled code are the fork server's pages, shared copy-on-write by all the workers, instead of
a copy per worker.  The collector is
frozen afterwards (:func:`gc.freeze`), so that its bookkeeping does not write into the shared
objects and copy their pages.

Nothing here may stop the fork server: a model that fails to load is left out (the worker
then loads it itself and reports the error as it always has), and so is everything when the
variable is not set (another program's fork server, or this module imported elsewhere).
Ctrl-C is ignored from the start (the fork server ignores it only after its preload, and the
workers inherit it ignored: Ctrl-C is the server's to handle).
"""

from __future__ import annotations

import gc
import json
import os
import signal

__all__ = ["ENV", "LOADED", "LOADED_IN"]

#: The variable that names the models to load (JSON: served name -> model file).
ENV = "DEPPARSE_SERVE_MODELS"

#: Served name -> (model file, Parser ready to parse), for the models loaded at import.
LOADED: dict = {}
#: The process that loaded them (a worker forked from it has another pid).
LOADED_IN = os.getpid()


_WARMUP = ("1\ta\t_\t_\t_\t_\t2\tnsubj\t_\t_\n2\tb\t_\t_\t_\t_\t0\troot\t_\t_\n"
           "3\t.\t_\t_\t_\t_\t2\tpunct\t_\t_\n")


def _load(path):
    """Load a model and every kernel a request may use (tokenizer, tagger, parser, labeler)."""
    from ..api import load
    from ..conllu import read_sentence

    parser = load(path)
    sents = ([read_sentence(_WARMUP, "<warmup>")] if parser.tokenizer is None
             else parser.read_text("The cat sat on the mat. It purred.", source="<warmup>"))
    list(parser.engine.iter_parsed(parser.columns.assign(sents)))
    return parser


def _preload() -> None:
    if ENV not in os.environ:
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        models = json.loads(os.environ.pop(ENV, None) or "{}")  # not for the workers
    except ValueError:
        return
    if not isinstance(models, dict):
        return
    for name, path in models.items():
        try:
            LOADED[name] = (path, _load(path))
        except Exception:  # noqa: BLE001 - the worker loads it again and says what failed
            continue
    gc.freeze()


_preload()
