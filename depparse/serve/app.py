"""The ASGI application: UDPipe's REST routes, depparse's JSON route and the tree viewer.

Routes
------
``GET /``
    The tree viewer (``static/index.html``, ``static/viewer.js``, ``static/page.css`` and the
    trees' ``trees.css``, all served from the package: no file from elsewhere).
``GET /models``
    UDPipe's answer: ``{"models": {name: ["tokenizer", "tagger", "parser"]}, "default_model":
    name}`` (a model lists the steps it has).
``GET|POST /process``
    UDPipe's ``process`` (parameters: :mod:`.protocol`); the answer is UDPipe's JSON,
    ``{"model", "acknowledgements", "result"}``, ``result`` holding the CoNLL-U that
    ``depparse parse`` writes for the same input; ``warnings`` is added when there are any.
``GET|POST /parse``
    The same parameters (it parses unless ``parser=none``); the answer adds ``sentences``:
    per sentence its words, lemmas, tags, heads, labels, ``optimal``, ``proof``,
    ``certificate``, ``iterations``, ``nodes``, ``seconds``, ``timed_out``, the badge's words
    and the section of HTML with its drawing that the page shows.
``GET /status``
    Workers, requests in progress, the queue's size, worker restarts, memory (``memory_mb``:
    the proportional memory of the server and all its processes, shared pages divided among
    them: :func:`~.workers.pss_mb`).

Errors are a status code and one line of ``text/plain``, as UDPipe answers them: 400 for a bad
parameter or input (for unreadable input, the line ``depparse parse`` prints for the same
data in a file named ``data``, less its advice on ``--skip-bad``), 404, 405, 413 for a body
over ``max_request`` bytes, 415 for a body that is neither url-encoded nor multipart, 503 when
the queue is full, and 500 only when a worker process died (the workers are then started
afresh).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from importlib import resources
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from .. import __version__
from .protocol import RequestError, form_pairs, make_job, query_pairs
from .workers import ClientGone, WorkerDied, Workers, pss_mb

__all__ = ["ACKNOWLEDGEMENT", "create_app"]

log = logging.getLogger("depparse")

ACKNOWLEDGEMENT = (f"depparse {__version__}: non-projective dependency parsing with head "
                   "automata and dual decomposition (Koo, Rush, Collins, Jaakkola and Sontag, "
                   "EMNLP 2010), every tree proved optimal or marked not proved")

_HEADERS = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
_PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: "
                "blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
                "form-action 'self'; frame-ancestors 'none'")
_STATIC = {"index.html": ("depparse.serve", "static/index.html", "text/html; charset=utf-8"),
           "viewer.js": ("depparse.serve", "static/viewer.js", "text/javascript; charset=utf-8"),
           "page.css": ("depparse.serve", "static/page.css", "text/css; charset=utf-8"),
           "trees.css": ("depparse.viewer", "trees.css", "text/css; charset=utf-8")}


def _error(status: int, message: str) -> PlainTextResponse:
    return PlainTextResponse(message.rstrip("\n") + "\n", status_code=status, headers=_HEADERS)


async def _body(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) as soon as it is over ``limit`` bytes."""
    size = request.headers.get("content-length")
    if size is not None:
        try:
            n = int(size)
        except ValueError:
            raise RequestError(400, f"Content-Length {size!r} is not a number") from None
        if n > limit:
            raise RequestError(413, f"the request body is {n:,} bytes; this server takes at "
                                    f"most {limit:,} (depparse serve --max-request-size)")
    parts, got = [], 0
    async for chunk in request.stream():
        got += len(chunk)
        if got > limit:
            raise RequestError(413, f"the request body is over {limit:,} bytes, the most this "
                                    "server takes (depparse serve --max-request-size)")
        parts.append(chunk)
    return b"".join(parts)


def create_app(workers: Workers, *, max_request: int = 4 << 20, time_limit: float = 10.0,
               aliases: dict[str, str] | None = None, model_files: dict[str, str] | None = None,
               close_workers: bool = True) -> Starlette:
    """The server's ASGI application over a started :class:`~.workers.Workers` pool.

    Parameters
    ----------
    workers : Workers
        Started (:meth:`~.workers.Workers.start`): its models are the only ones a request may
        name.
    max_request : int
        Bytes of request body.
    time_limit : float
        Seconds of decoding per sentence (a request may ask for less).
    aliases : dict, optional
        Other names of the served models (``{"en": "en_ewt_gs"}``).
    model_files : dict, optional
        Served name -> model file (its model card, ``NAME.md`` beside it, is named in the
        answers' ``acknowledgements``).
    close_workers : bool
        Stop the workers when the application shuts down.
    """
    served = list(workers.models)
    default = served[0]
    names = {n: n for n in served}
    names.update({a: n for a, n in (aliases or {}).items() if n in names and a not in names})
    answers = itertools.count(1)
    thanks = {}  # the acknowledgements of each model: depparse, and the model's card
    for name in served:
        thanks[name] = [ACKNOWLEDGEMENT]
        card = Path((model_files or {}).get(name, "")).with_suffix(".md")
        if (model_files or {}).get(name) and card.is_file():
            thanks[name].append(f"model {name}: its training data and licence are in its model "
                                f"card, {card.name}")

    files = {}
    for key, (pkg, rel, kind) in _STATIC.items():
        files[key] = (resources.files(pkg).joinpath(rel).read_bytes(), kind)

    async def page(request: Request) -> Response:
        body, kind = files["index.html"]
        return Response(body, media_type=kind,
                        headers={**_HEADERS, "Content-Security-Policy": _PAGE_POLICY})

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in files or name == "index.html":
            return _error(404, f"no such file: /static/{name}")
        body, kind = files[name]
        return Response(body, media_type=kind, headers=_HEADERS)

    async def models(request: Request) -> Response:
        caps = workers.capabilities
        return JSONResponse({"models": {n: [k for k in ("tokenizer", "tagger", "parser")
                                            if caps.get(n, {}).get(k)] for n in served},
                             "default_model": default}, headers=_HEADERS)

    async def status(request: Request) -> Response:
        return JSONResponse({"models": served, "workers": workers.jobs,
                             "requests": workers.pending, "queue": workers.queue,
                             "restarts": workers.restarts,
                             "memory_mb": round(await asyncio.to_thread(pss_mb), 1)},
                            headers=_HEADERS)

    async def handle(request: Request, rich: bool) -> Response:
        t0 = time.perf_counter()
        try:
            pairs = query_pairs(request.scope.get("query_string", b""))
            with workers.admit():
                if request.method == "POST":
                    body = await _body(request, max_request)
                    pairs += form_pairs(body, request.headers.get("content-type", ""))
                job = make_job(pairs, names, default, time_limit, parse_default=rich)
                answer = await workers.run(job, rich, f"a{next(answers)}-s",
                                           gone=request.is_disconnected)
        except RequestError as e:
            return _error(e.status, e.message)
        except WorkerDied as e:
            return _error(500, str(e))
        except (ClientDisconnect, ClientGone):
            log.info("the client went away before its answer")
            return Response(status_code=400)  # nobody reads it
        out = {"model": job.model, "acknowledgements": thanks[job.model],
               "result": answer.conllu()}
        if answer.warnings:
            out["warnings"] = answer.warnings
        if rich:
            out["sentences"] = answer.info
            out["words"] = sum(len(s["words"]) for s in answer.info)
            out["seconds"] = round(time.perf_counter() - t0, 4)
        return JSONResponse(out, headers=_HEADERS)

    async def process(request: Request) -> Response:
        return await handle(request, rich=False)

    async def parse(request: Request) -> Response:
        return await handle(request, rich=True)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return _error(404, f"no such URL: {request.url.path}; this server answers / (the "
                               "tree viewer), /models, /process, /parse and /status")
        if exc.status_code == 405:
            return _error(405, f"{request.method} is not allowed on {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        if close_workers:
            workers.close()

    routes = [Route("/", page, methods=["GET"]),
              Route("/static/{name}", static, methods=["GET"]),
              Route("/models", models, methods=["GET"]),
              Route("/status", status, methods=["GET"]),
              Route("/process", process, methods=["GET", "POST"]),
              Route("/parse", parse, methods=["GET", "POST"])]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error},
                     lifespan=lifespan)
