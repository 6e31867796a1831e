"""The commands that show trees: ``depparse serve`` (a UDPipe-compatible REST service and the
tree viewer, :mod:`depparse.serve`) and ``depparse show`` (trees of a CoNLL-U file as one
HTML page, :mod:`depparse.viewer`)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import socket
import sys
from pathlib import Path

from ..errors import DepparseError, ReportError, UsageError, extra_command

__all__ = ["COMMANDS", "EXAMPLES", "add_parsers"]

log = logging.getLogger("depparse")

EXAMPLES = {
    "serve": """examples:
  depparse serve                                  # http://127.0.0.1:8000/, the English model
  depparse serve --port 8080 --workers 2 --time-limit 5
  curl -F tokenizer= -F tagger= -F parser= -F data='The cat sat on the mat.' \\
       http://127.0.0.1:8000/process              # as UDPipe's REST API answers
""",
    "show": """examples:
  depparse show parsed.conllu -o trees.html
  depparse show parsed.conllu --gold gold.conllu -o trees.html   # wrong heads/labels in red
  depparse parse in.conllu -o out.conllu --report run.json
  depparse show out.conllu --report run.json -o trees.html       # with each tree's proof
""",
}


def add_parsers(sub, common) -> None:
    """Add ``serve`` and ``show`` to the sub-command parsers ``sub``; ``common`` adds the flags
    every command has (``-q``, ``--debug``)."""
    def make(name, help_, description):
        return sub.add_parser(name, help=help_, description=description,
                              epilog=EXAMPLES[name],
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    s = make("serve", "serve the parser over HTTP (UDPipe's REST API) and the tree viewer",
             "Serve parsing over HTTP: UDPipe's REST API (GET /models, GET|POST /process), "
             "depparse's JSON (/parse: each tree with its proof) and, at /, a page that draws "
             "the trees.  Parsing runs in worker processes.  Needs the serve extra (pip install "
             "'depparse[serve]').")
    s.add_argument("-m", "--model", action="append", metavar="MODEL",
                   help="model file or shipped model name; repeat to serve several (requests "
                        "choose among these by name) (default: en_ewt_gs)")
    s.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: 127.0.0.1, this machine only)")
    s.add_argument("--port", type=int, default=8000,
                   help="port (default: 8000; 0: any free port, printed at start)")
    s.add_argument("--workers", type=int, default=2,
                   help="worker processes that parse (default: 2)")
    s.add_argument("--queue", type=int, default=64,
                   help="requests parsed or waiting at once; more are answered 503 "
                        "(default: 64)")
    s.add_argument("--time-limit", type=float, default=10.0, metavar="SECONDS",
                   help="decoding time per sentence; a tree not proved by then is the best "
                        "one found, marked not proved; a request may ask for less "
                        "(default: 10)")
    s.add_argument("--max-request-size", type=int, default=4 << 20, metavar="BYTES",
                   help="largest request body; larger ones are answered 413 "
                        "(default: 4194304, 4 MiB)")
    s.add_argument("--max-words", type=int, default=1000,
                   help="longest sentence in words; longer ones are answered 400 "
                        "(default: 1000)")
    common(s)

    w = make("show", "draw the trees of a CoNLL-U file as an HTML page",
             "Draw every sentence of a CoNLL-U file as a dependency tree (arcs with labels "
             "above the words, UPOS and lemma below, crossing arcs in orange) in one HTML "
             "page that needs nothing else (no script, no file from elsewhere).")
    w.add_argument("file", metavar="FILE", help="CoNLL-U file ('-' = stdin)")
    w.add_argument("--gold", metavar="GOLD",
                   help="gold CoNLL-U file of the same sentences: wrong heads and labels are "
                        "marked in red (default: none)")
    w.add_argument("--report", metavar="REPORT.json",
                   help="the parse report of FILE ('depparse parse --report'): each tree "
                        "gets its proof's badge (default: none)")
    w.add_argument("-o", "--output", metavar="HTML", help="page to write (default: stdout)")
    d = w.add_mutually_exclusive_group()
    d.add_argument("--rtl", dest="rtl", action="store_true", default=None,
                   help="lay the words out right to left (default: when most letters are of "
                        "right-to-left scripts)")
    d.add_argument("--ltr", dest="rtl", action="store_false",
                   help="lay the words out left to right (default: see --rtl)")
    common(w)


# ---------------------------------------------------------------------------------------
# serve


def _listen(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise UsageError(f"--host {host}: {e.strerror}") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {e.strerror}") from None
    sock.listen(2048)  # connections wait in the backlog while the workers start
    return sock


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def cmd_serve(args):
    try:
        import uvicorn

        from ..serve import Workers, create_app
    except ImportError as e:
        raise UsageError(f"depparse serve needs the serve extra ({e.name} is missing): "
                         f"run `{extra_command('serve')}`") from None
    import asyncio

    from ..api import NAMES, resolve_model
    from ..catalog import models as models_known
    from ..catalog import not_found_message
    from ..errors import ModelError

    for flag, value, low in (("--workers", args.workers, 1), ("--queue", args.queue, 1),
                             ("--max-request-size", args.max_request_size, 1),
                             ("--max-words", args.max_words, 1), ("--port", args.port, 0)):
        if value < low:
            raise UsageError(f"{flag} must be >= {low}")
    if args.port > 65535:
        raise UsageError("--port must be <= 65535")
    if not args.time_limit > 0:
        raise UsageError("--time-limit must be > 0")
    models: dict[str, str] = {}
    for m in args.model or [None]:
        try:
            path = resolve_model(m)
        except ModelError as e:
            raise UsageError(str(e)) from None
        if not path.is_file():
            raise UsageError(not_found_message(path, models_known(), path=True))
        if path.stem in models:
            raise UsageError(f"two models are named {path.stem}: serve models of different "
                             "file names")
        models[path.stem] = str(path.resolve())
    sock = _listen(args.host, args.port)
    if not _loopback(args.host):
        print(f"depparse: warning: listening on {args.host}: anyone who can reach this "
              "machine can use the parser (the server has no authentication)", file=sys.stderr)
    workers = Workers(models, args.workers, args.queue, args.max_words)
    try:
        asyncio.run(workers.start())
    except DepparseError:
        workers.close()
        sock.close()
        raise
    # the names a served model answers to besides its file's: "default", and its catalog
    # entry's (language, treebank, package)
    aliases = {a: Path(f).stem for a, f in NAMES.items()}
    for entry in models_known():
        if entry.path.resolve() == Path(models.get(entry.path.stem, "")):
            aliases.update({n: entry.path.stem for n in entry.names()})
    app = create_app(workers, max_request=args.max_request_size, time_limit=args.time_limit,
                     aliases=aliases, model_files=models)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"depparse: serving {', '.join(models)} at http://{shown}:{port}/ with "
          f"{workers.jobs} worker process{'es' if workers.jobs > 1 else ''} (Ctrl-C stops it)",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning" if args.quiet else "info",
                            access_log=not args.quiet, lifespan="on",
                            timeout_graceful_shutdown=10,
                            # a GET's parameters are in its URL: as long as a body may be
                            h11_max_incomplete_event_size=args.max_request_size + 65536)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        workers.close()
        sock.close()


# ---------------------------------------------------------------------------------------
# show


def _report_proofs(path, sents):
    from ..report import load_report

    try:
        rep = load_report(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (ValueError, ReportError) as e:
        raise UsageError(f"{path}: not a parse report ({' '.join(str(e).split())})") from None
    raw = rep["sentences"]
    if len(raw) != len(sents) or any(r["n"] != s.n for r, s in zip(raw, sents, strict=False)):
        raise UsageError(f"{path}: the report is not of this file (its sentences or their "
                         "lengths differ)")
    keys = ("optimal", "proof", "certificate", "iterations", "nodes", "seconds", "timed_out",
            "optimal_over")
    model = rep.get("model", {})
    recall = {k: model.get(k) for k in ("pruner_dev_recall", "pruner_dev_recall_at_least")}
    return [{**{k: r.get(k) for k in keys}, **recall} for r in raw]


def cmd_show(args):
    from ..atomic import atomic_output
    from ..viewer import page_html, tree_from_sentence
    from .commands import check_output, read_conllu_file

    check_output(args.output, "page")
    sents = read_conllu_file(args.file)
    gold = None
    if args.gold:
        gold = read_conllu_file(args.gold)
        if len(gold) != len(sents):
            raise UsageError(f"{args.gold}: {len(gold):,} sentences, but {args.file} has "
                             f"{len(sents):,}: give the gold file of the same sentences")
        for k, (s, g) in enumerate(zip(sents, gold, strict=True), 1):
            if s.n != g.n or list(s.forms) != list(g.forms):
                raise UsageError(f"{args.gold}:{g.line_no}: sentence {k} differs from "
                                 f"{args.file}:{s.line_no} ({g.n} and {s.n} words): give the "
                                 "gold file of the same sentences")
    proofs = _report_proofs(args.report, sents) if args.report else [None] * len(sents)
    trees = [tree_from_sentence(s, p, None if gold is None else gold[k])
             for k, (s, p) in enumerate(zip(sents, proofs, strict=True))]
    name = "<stdin>" if args.file == "-" else os.path.basename(args.file)
    words = sum(s.n for s in sents)
    intro = f"{len(sents):,} sentences, {words:,} words"
    if gold is not None:
        heads = sum(int(h != gh) for s, g in zip(sents, gold, strict=True)
                    for h, gh in zip(s.heads[1:], g.heads[1:], strict=True) if gh >= 0)
        intro += f"; against {os.path.basename(args.gold)}: {heads:,} wrong heads"
    if args.report:
        proved = sum(bool(p["optimal"]) for p in proofs)
        intro += f"; {proved:,} of {len(sents):,} trees proved optimal"
    page = page_html(trees, f"{name}: dependency trees", intro, rtl=args.rtl)
    if args.output:
        with atomic_output(args.output, "w", encoding="utf-8") as f:
            f.write(page)
        log.info("%s trees written to %s", f"{len(sents):,}", args.output)
    else:
        sys.stdout.write(page)
        sys.stdout.flush()


COMMANDS = {"serve": cmd_serve, "show": cmd_show}
