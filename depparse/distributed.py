"""Parsing and training on a Dask cluster (``dask.distributed``).

Parsing files (:func:`iter_parse_files`, ``depparse parse --scheduler ADDRESS``)
    The workers read the files themselves, from a filesystem they share with the client:
    the client sends file names and byte ranges, never sentences.  Files larger than one
    shard are first scanned by the workers (:func:`~depparse.shards.scan_range`: line
    breaks, and the sentence or paragraph start at or after each nominal cut), which gives
    the shards (``[start, end)`` between two sentence starts, and the line of ``start``);
    then each shard is a task (:func:`~depparse.shards.parse_shard`) that reads, tokenizes,
    tags and parses its bytes into a shard file of its own, written to a temporary name and
    renamed, then its meta file (the counts).  The parser is sent to every worker once
    (``broadcast=True``).  The client holds the shard list (also saved as ``plan.json``) and
    the counts, and yields the shards in file order, for joining
    (:class:`~depparse.shards.Joiner`).  A worker that dies mid-shard makes the scheduler run
    its shards again elsewhere; the new run writes the same shard file again, so nothing is
    lost and nothing duplicated.  Bad input is returned by the task (not raised, so not
    retried), and reported once the shards before it are done: the first error in file
    order, as a local run reports it.

Parsing sentences (:func:`parse_distributed`, the Python API)
    A list of sentences held by the caller is cut into shards of consecutive sentences;
    each shard is one task, sent with its sentences.  The
    parser is scattered to every worker once (``broadcast=True``, so losing a worker loses
    no copy that the others need).  Results are taken in shard order, so the output
    is in input order and identical to a local run; a worker that dies mid-run only makes
    the scheduler run its shards again elsewhere: no sentence is lost, none is duplicated
    (each shard's result is taken exactly once).  A result that was on its way from the
    dead worker may arrive only after the cluster's connect timeout
    (``distributed.comm.timeouts.connect``, 30 s by default), when the scheduler gives up on
    that worker and runs the shard again.

Training (:func:`train_distributed`, ``depparse train --scheduler ADDRESS``)
    Iterative parameter mixing (McDonald, Hall and Mann 2010, "Distributed Training
    Strategies for the Structured Perceptron", Fig. 3): the training data is split into
    ``S`` shards; in every epoch each shard runs one perceptron epoch
    (:meth:`~depparse.learn.perceptron.Trainer.run_epoch`) starting from the current mixed
    weights, and the mixed weights become the uniform average of the ``S`` results.

    Averaging.  A shard's epoch starts with ``acc = 0, c = 0``; after its ``c_i`` examples
    ``c_i * w_i - acc_i`` is the sum of the weight vectors after each of its examples
    (the lazy-averaging identity of :mod:`depparse.learn.perceptron`).  The mixed state
    keeps the invariant ``w - acc / C = (sum of all those vectors) / C``, ``C`` the examples
    seen by all shards in all epochs, by the update::

        w'   = mean_i w_i
        C'   = C + sum_i c_i
        acc' = acc + C' (w' - w) + sum_i (acc_i - c_i (w_i - w))

    so :meth:`Trainer.averaged` is the average over every example of every shard, and with
    ``S = 1`` the update is exactly (up to rounding) the single-process perceptron.  Like the
    perceptron itself, IPM needs a few more epochs than one process to converge (McDonald
    et al., Fig. 4): on 2,000 en_ewt sentences with 2 shards, UAS 1.0 below after 3 epochs,
    0.5 below after 5, equal after 8 (``benchmarks/bench_parallel.py ipm``).  The
    state after each epoch is a function of the state before it only (shards and their
    example orders are seeded), so checkpoints and ``--resume`` work as in
    :func:`depparse.learn.perceptron.train`, and the result does not depend on which worker
    ran which shard.  Workers send back only the touched weights (sparse).

Both parsing paths run their tasks through the one executor
(:func:`~depparse.inference.executor.map_in_order` on a :class:`DaskBackend`), as ``--jobs``
and the server run theirs on a process pool.

``client_or_address`` may be a :class:`distributed.Client`, a scheduler address
(``"tcp://127.0.0.1:8786"``), or, for :func:`train_distributed` only, ``None``: the shards
then run one after the other in this process (same result, for tests and debugging).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import os
import time
import uuid
from contextlib import closing, contextmanager

import numpy as np

from .api import load
from .atomic import atomic_output
from .errors import ConfigError, SchedulerError, require_extra
from .inference.executor import map_in_order
from .inference.parallel import warmup
from .inference.parser import Parser

__all__ = ["DaskBackend", "SchedulerError", "connect", "iter_parse_files", "parse_distributed",
           "train_distributed"]

log = logging.getLogger(__name__)


@contextmanager
def connect(client_or_address, timeout=15):
    """A :class:`distributed.Client` for a client or an address (closed on exit if opened)."""
    require_extra("distributed", "dask", "a Dask cluster (--scheduler)")
    from distributed import Client

    if isinstance(client_or_address, Client):
        yield client_or_address
        return
    address = str(client_or_address)
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, ValueError) as e:
        raise SchedulerError(f"cannot connect to the Dask scheduler at {address}: "
                             f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                             ) from None
    try:
        yield client
    finally:
        client.close()


def _n_workers(client):
    return max(1, len(client.scheduler_info().get("workers", {})))


def _nthreads(client):
    return max(1, sum(client.nthreads().values()))


class DaskBackend:
    """The one executor's backend (:mod:`depparse.inference.executor`) on a Dask cluster:
    each chunk a task, ``retries`` times tried again where it raised (a worker's death does
    not count: the scheduler runs its tasks again elsewhere by itself), keyed
    ``{prefix}-{i}`` for the ``i``-th chunk; ``window`` tasks in flight (None: every one)."""

    def __init__(self, client, prefix, retries=3, window=None):
        self.client, self.prefix, self.retries, self.window = client, prefix, retries, window
        self._count = itertools.count()

    def submit(self, fn, *args):
        # the future is held by map_in_order alone: once its result is taken, the workers may
        # drop the result; a task still running when the map stops is cancelled there
        return self.client.submit(fn, *args, pure=False, retries=self.retries,
                                  key=f"{self.prefix}-{next(self._count)}")

    def died(self, error) -> bool:
        return False  # the scheduler reruns a dead worker's tasks: nothing is lost

    def cancel(self, futures) -> None:
        self.client.cancel(list(futures))  # one message to the scheduler

    def close(self, stop: bool = False) -> None:
        pass  # the cluster is the caller's (connect)


# ---------------------------------------------------------------------------------------
# parsing


def _parse_shard(parser, kw, shard):
    """Worker task: ``(heads, rels, ParseResult)`` of every sentence of a shard."""
    out = []
    for s in shard:
        parsed, r = parser.engine.parse_one(s, **kw)
        out.append((parsed.heads, parsed.rels, r))
    return out


def iter_parse_distributed(parser_or_model_path, sentences, client_or_address, *,
                           max_iter=None, single_root=None, time_limit=None, trace=False,
                           shard_size=None, retries=3, on_shard=None):
    """Like :func:`parse_distributed`, but yields ``(Sentence, ParseResult)`` in input order
    as soon as the shards before them are done (for writing the output while parsing)."""
    require_extra("distributed", "dask", "a Dask cluster (--scheduler)")
    if isinstance(parser_or_model_path, Parser):
        parser = parser_or_model_path
    else:
        parser = load(parser_or_model_path)
    sentences = list(sentences)
    if not sentences:
        return
    kw = dict(max_iter=max_iter, single_root=single_root, time_limit=time_limit, trace=trace)
    # loads the numba kernels here, or compiles them into the on-disk cache that workers on
    # this machine then load instead of compiling each on its own
    warmup(parser, **{k: v for k, v in kw.items() if k != "time_limit"})
    with connect(client_or_address) as client:
        n = len(sentences)
        if shard_size is None:
            shard_size = max(1, min(256, -(-n // (8 * _nthreads(client)))))
        bounds = [(a, min(n, a + shard_size)) for a in range(0, n, shard_size)]
        pf = client.scatter(parser, broadcast=True, hash=False)
        tasks = DaskBackend(client, f"depparse-parse-{uuid.uuid4().hex[:12]}", retries)
        shards = (sentences[a:b] for a, b in bounds)
        try:
            with closing(map_in_order(tasks, _parse_shard, shards, (pf, kw))) as done:
                for i, (shard, res) in enumerate(done):
                    if len(res) != len(shard):  # pragma: no cover
                        raise RuntimeError(f"shard {i} returned {len(res)} results for "
                                           f"{len(shard)} sentences")
                    if on_shard is not None:
                        on_shard(i, len(bounds))
                    for s, (heads, rels, r) in zip(shard, res, strict=True):
                        yield s.with_parse(heads, rels), r
        finally:
            client.cancel([pf])


def parse_distributed(parser_or_model_path, sentences, client_or_address, *, max_iter=None,
                      single_root=None, time_limit=None, return_results=False, trace=None,
                      shard_size=None, retries=3, on_shard=None):
    """Parse sentences on a Dask cluster; the output is in input order.

    Parameters
    ----------
    parser_or_model_path : Parser, str or Path
        A :class:`~depparse.inference.parser.Parser`, or a model file / shipped model name (loaded
        here, then sent to the workers).
    sentences : list of Sentence
    client_or_address : distributed.Client or str
        A client, or the scheduler's address (a client is opened and closed here).
    max_iter, single_root, time_limit
        As in :meth:`~depparse.inference.parser.Parser.parse`.
    return_results : bool
        Return ``(sentence, ParseResult)`` pairs instead of sentences.
    trace : bool, optional
        Keep dual/primal traces (default: when ``return_results``).
    shard_size : int, optional
        Sentences per task (default: about 8 tasks per worker thread, at most 256).
    retries : int
        Times a shard whose task raised is tried again (a worker's death does not count:
        the scheduler reschedules its tasks by itself).
    on_shard : callable, optional
        ``on_shard(shard_index, n_shards)`` as each shard's results are taken, in shard
        order (progress; tests).

    Returns
    -------
    list of Sentence, or of (Sentence, ParseResult)

    Raises
    ------
    SchedulerError
        If the scheduler cannot be reached.
    ModelError
        If the model cannot be loaded.
    """
    trace = return_results if trace is None else trace
    out = list(iter_parse_distributed(
        parser_or_model_path, sentences, client_or_address, max_iter=max_iter,
        single_root=single_root, time_limit=time_limit, trace=trace, shard_size=shard_size,
        retries=retries, on_shard=on_shard))
    return out if return_results else [p for p, _ in out]


# ---------------------------------------------------------------------------------------
# parsing files: byte-range shards read by the workers

PLAN_FORMAT = "depparse-parse-plan"
PLAN_VERSION = 1


def _file_key(path):
    """A file's identity in the plan: its real path, size and modification time."""
    st = os.stat(path)
    return json.dumps([os.path.realpath(path), st.st_size, st.st_mtime_ns])


def _plan(client, inputs, names, kind, shard_bytes, columns, shard_dir, token, known):
    """The shards of the inputs (:mod:`depparse.shards`): the files of more than one range
    are scanned by the workers (the client reads none of the corpus); ``known``: the
    ``{file key: [(start, end, line), ...]}`` of a stopped run's plan, not scanned again.
    Returns the tasks and the files' bounds (for the plan file)."""
    import hashlib

    from .shards import ShardTask, cut_points, plan_file, scan_range

    keys = [_file_key(f) for f in inputs]
    sizes = [json.loads(k)[1] for k in keys]
    cuts = [cut_points(n, shard_bytes) for n in sizes]
    futures = {}
    for k, f in enumerate(inputs):
        if len(cuts[k]) > 1 and keys[k] not in known:
            for i, a in enumerate(cuts[k]):
                b = cuts[k][i + 1] if i + 1 < len(cuts[k]) else sizes[k]
                futures[(k, i)] = client.submit(scan_range, f, kind, a, b, pure=False,
                                                retries=3, key=f"depparse-scan-{token}-{k}-{i}")
    scans = dict(zip(futures, client.gather(list(futures.values())), strict=True))
    tasks, bounds_of = [], {}
    for k, f in enumerate(inputs):
        if keys[k] in known:
            bounds = [tuple(x) for x in known[keys[k]]]
        elif not sizes[k]:
            bounds = []
        elif len(cuts[k]) == 1:
            bounds = [(0, sizes[k], 1)]
        else:
            bounds = plan_file(sizes[k], cuts[k], [scans[(k, i)] for i in range(len(cuts[k]))])
        bounds_of[keys[k]] = bounds
        cols = columns.get(names[k]) if columns else None
        # named by the file and the offset: the same shard has the same files in every run
        # (a resumed run may skip the inputs whose outputs are complete)
        stem = hashlib.sha1(keys[k].encode("utf-8")).hexdigest()[:16]
        for a, b, line in bounds:
            tasks.append(ShardTask(len(tasks), k, f, names[k], a, b, line,
                                   None if cols is None else tuple(cols),
                                   os.path.join(shard_dir, f"shard-{stem}-{a:013d}")))
    return tasks, bounds_of


def _load_plan(path, fingerprint):
    """``(shard_bytes, {file key: bounds})`` of a stopped run with this fingerprint, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            plan = json.load(f)
        if (plan.get("format") != PLAN_FORMAT or plan.get("version") != PLAN_VERSION
                or plan.get("fingerprint") != fingerprint):
            return None
        return int(plan["shard_bytes"]), dict(plan["files"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def iter_parse_files(parser, inputs, client_or_address, shard_dir, *, kind="conllu",
                     names=None, columns=None, retag=False, skip_bad=False, report=False,
                     max_iter=None, single_root=None, time_limit=None, trace=False,
                     shard_bytes=None, resume=False, fingerprint=None, retries=3,
                     on_plan=None, on_shard=None, normalized_spaces=False):
    """Parse files on a Dask cluster whose workers read them (a shared filesystem), each
    shard into a shard file of ``shard_dir``; yields the shards in order, for joining.

    The files are cut into byte-range shards at sentence (CoNLL-U) or paragraph (plain text)
    boundaries, each parsed by a worker into its shard file (:mod:`depparse.shards`); the
    client sends file names and byte offsets and gets back counts.  The plan (each file's
    shards) is kept in ``shard_dir/plan.json``; a shard is complete when its meta file is
    there, so that a run stopped and continued (``resume``) parses only the shards that
    were not complete.  A worker that dies mid-shard leaves at most a temporary file: the
    scheduler runs the shard again elsewhere and the new run writes it whole (a shard task
    writes to a temporary name and renames).

    Parameters
    ----------
    parser : Parser
        Sent to every worker once.
    inputs : list of str
        The files, as the workers see them (absolute paths on the shared filesystem).
    client_or_address : distributed.Client or str
    shard_dir : str
        An existing folder on the shared filesystem.
    kind : {"conllu", "text"}
    names : list of str, optional
        The inputs as the user gave them (the sentences' ``source``; default ``inputs``).
    columns : dict, optional
        ``{name: columns}``: the tag columns each CoNLL-U file lacks, decided from its first
        sentences (:meth:`~depparse.inference.columns.ColumnPolicy.of_file`), as a local run
        decides them.
    retag, skip_bad, normalized_spaces : bool
        As ``depparse parse --retag``, ``--skip-bad``, ``--normalized-spaces``.
    report : bool
        Also write each shard's report entries (``--report``).
    max_iter, single_root, time_limit, trace
        As in :meth:`~depparse.inference.engine.Engine.parse_one`.
    shard_bytes : int, optional
        Nominal shard size (default :func:`~depparse.shards.shard_bytes_for`; a resumed run
        keeps the stopped run's).
    resume : bool
        Keep the plan and the complete shards of a stopped run with the same
        ``fingerprint``: the shards of a file that did not change (same real path, size
        and modification time) keep their bounds and files, also when the inputs are not
        the same list (a folder whose complete outputs are skipped).
    fingerprint : JSON value
        What identifies the run (model, settings, inputs), kept with the plan and shards.
    retries : int
        Times a task that raised is tried again (a dead worker does not count).
    on_plan : callable, optional
        ``on_plan(tasks, done)`` once the plan is known (``done``: shards complete already).
    on_shard : callable, optional
        ``on_shard(index, n_shards)`` as each shard parsed here is taken, in file order
        (tests, progress).

    Yields
    ------
    (ShardTask, dict, str)
        Each shard, in order, with its meta (:func:`~depparse.shards.parse_shard`) and the
        leading text of its file.

    Raises
    ------
    DepparseError
        The first bad input in file order (a ConlluError ``FILE:LINE: message``), once the
        shards before it are done; SchedulerError if the scheduler cannot be reached.
    """
    require_extra("distributed", "dask", "a Dask cluster (--scheduler)")
    from .shards import load_meta, shard_bytes_for

    inputs = [str(f) for f in inputs]
    names = list(names) if names is not None else list(inputs)
    kw = dict(max_iter=max_iter, single_root=single_root, time_limit=time_limit, trace=trace)
    settings = dict(kind=kind, retag=bool(retag), skip_bad=bool(skip_bad),
                    report=bool(report), kw=kw, fingerprint=fingerprint,
                    normalized_spaces=bool(normalized_spaces))
    plan_path = os.path.join(shard_dir, "plan.json")
    token = uuid.uuid4().hex[:12]
    with connect(client_or_address) as client:
        stopped = _load_plan(plan_path, fingerprint) if resume else None
        known: dict = {}
        if stopped is not None:
            shard_bytes, known = stopped
        elif shard_bytes is None:
            shard_bytes = shard_bytes_for(sum(os.path.getsize(f) for f in inputs),
                                          _nthreads(client))
        tasks, bounds_of = _plan(client, inputs, names, kind, int(shard_bytes), columns,
                                 shard_dir, token, known)
        known.update(bounds_of)
        with atomic_output(plan_path, "w", encoding="utf-8") as f:
            json.dump({"format": PLAN_FORMAT, "version": PLAN_VERSION,
                       "fingerprint": fingerprint, "shard_bytes": int(shard_bytes),
                       "files": known}, f)
        slots: dict = {}
        if resume:
            for t in tasks:
                meta = load_meta(t, fingerprint, report)
                if meta is not None:
                    slots[t.index] = meta
        if on_plan is not None:
            on_plan(tasks, len(slots))
        todo = [t for t in tasks if t.index not in slots]
        pf = client.scatter(parser, broadcast=True, hash=False) if todo else None
        # every shard to do in flight at once; the results come back in file order
        fresh = map_in_order(DaskBackend(client, f"depparse-shard-{token}", retries),
                             _shard_task, todo, (pf, settings))
        leads: dict = {}
        try:
            for t in tasks:
                meta = slots.pop(t.index, None)
                if meta is None:
                    done, meta = next(fresh)
                    if done is not t:  # pragma: no cover - map_in_order keeps the order
                        raise RuntimeError(f"shard {done.index} came back for {t.index}")
                    if on_shard is not None:
                        on_shard(t.index, len(tasks))
                # the first bad input in file order, once the shards before it are done;
                # the shards after it, in flight until then, are cancelled (fresh.close())
                if "error" in meta:
                    raise meta["error"]
                if t.start == 0:
                    leads[t.name] = meta["lead"]
                yield t, meta, leads.get(t.name, "")
        finally:
            fresh.close()
            if pf is not None:
                client.cancel([pf])


def _shard_task(parser, settings, task):
    """Worker task: :func:`~depparse.shards.parse_shard` of one byte-range shard."""
    from .shards import parse_shard

    return parse_shard(parser, task, settings)


# ---------------------------------------------------------------------------------------
# training: iterative parameter mixing


def _shard_seed(seed, k):
    return int(seed) + 7919 * int(k)


def _ipm_epoch(settings, w, shard, seed, epoch):
    """Worker task: one perceptron epoch over ``shard`` from the mixed weights ``w``.

    ``settings`` are the trainer's ``(config, decoding, training)``.  Returns
    ``(idx, w_i[idx], acc_i[idx], c_i, mistakes, correct)`` with ``idx`` the weights the epoch
    touched (``w_i`` equals ``w`` and ``acc_i`` is 0 everywhere else).
    """
    t = _new_trainer(settings, seed)
    t.w = np.array(w, dtype=np.float64, copy=True)
    t.epoch = int(epoch)
    mistakes, correct = t.run_epoch(shard)
    idx = np.flatnonzero((t.w != w) | (t.acc != 0))
    return idx, t.w[idx], t.acc[idx], float(t.c), int(mistakes), int(correct)


def _new_trainer(settings, seed, bits=None):
    """A fresh trainer (zero weights) with ``settings = (config, decoding, training)`` and its
    own seed (and, for warming up, fewer weights)."""
    from .learn.perceptron import Trainer  # the trainer: only when training

    config, decoding, training = settings
    if bits is not None:
        config = dataclasses.replace(config, bits=bits)
    return Trainer(config, None, None, decoding, dataclasses.replace(training, seed=seed))


def _warm_trainer(settings, example):
    """One perceptron step on a throw-away trainer with small weights (kernels loaded)."""
    _new_trainer(settings, 0, bits=min(settings[0].bits, 12)).step(*example)


def mix(trainer, results):
    """Fold the shards' results of one epoch into ``trainer`` (see the module docstring);
    returns the epoch's ``(mistakes, correct)`` summed over the shards."""
    w = trainer.w
    S = len(results)
    w_new = w.copy()
    c_new = trainer.c + sum(r[3] for r in results)
    extra = np.zeros_like(w)
    for idx, wi, acci, ci, _, _ in results:
        d = wi - w[idx]
        w_new[idx] += d / S
        extra[idx] += acci - ci * d
    trainer.acc = trainer.acc + c_new * (w_new - w) + extra
    trainer.w = w_new
    trainer.c = c_new
    trainer.epoch += 1
    return sum(r[4] for r in results), sum(r[5] for r in results)


def shard_indices(n, shards, seed):
    """Example indices of each shard: a seeded permutation dealt out round-robin."""
    if shards <= 1:
        return [np.arange(n)]
    perm = np.random.default_rng([int(seed), 4242]).permutation(n)
    return [np.sort(perm[k::shards]) for k in range(shards)]


def train_distributed(train_sents, dev_sents=None, config=None, decoding=None, training=None,
                      client_or_address=None, *, shards=None, checkpoint=None, resume=False,
                      progress=True):
    """Train a model by iterative parameter mixing on a Dask cluster.

    Parameters are those of :func:`depparse.learn.perceptron.train`, plus:

    client_or_address : distributed.Client, str or None
        The cluster; ``None`` runs the shards one after the other in this process.
    shards : int, optional
        Number of shards ``S`` (default: the number of workers; 1 without a cluster).  A
        resumed run keeps the checkpoint's ``S``.

    The pruner, the (jackknifed) arc pruning of the training data, the per-epoch dev
    evaluation and the labeler run in this process; the perceptron epochs on the workers.

    Returns
    -------
    Model
        With averaged weights; ``info["ipm_shards"]`` holds ``S``.
    """
    if config is not None and config.dense_layer:
        raise ConfigError("dense_layer", "is not supported by iterative parameter mixing "
                          "(--scheduler): train the dense arc term in one process")
    if training is not None and training.template_budget:
        raise ConfigError("template_budget", "is not supported by iterative parameter mixing "
                          "(--scheduler): choose templates in one process")
    if config is not None and config.learned_scale:
        raise ConfigError("learned_scale", "is not supported by iterative parameter mixing "
                          "(--scheduler): train the learned network in one process")
    from .learn.perceptron import finish_model, record_epoch, setup_training  # (trainer)

    t_start = time.perf_counter()
    setup = setup_training(train_sents, dev_sents, config, decoding, training, checkpoint, resume)
    trainer, data = setup.trainer, setup.data
    epochs, seed = trainer.training.epochs, trainer.training.seed
    settings = (trainer.config, trainer.decoding, trainer.training)

    with _cluster(client_or_address) as client:
        S = trainer.ipm_shards
        if S is None:
            S = int(shards) if shards else (_n_workers(client) if client is not None else 1)
            S = max(1, min(S, len(data)))
            trainer.ipm_shards = S
        elif shards and int(shards) != S:
            log.warning("resuming with the checkpoint's %d shards (not %d)", S, shards)
        S = int(S)
        parts = [[data[i] for i in ix] for ix in shard_indices(len(data), S, seed)]
        seeds = [_shard_seed(seed, k) for k in range(S)]
        log.info("iterative parameter mixing: %d shards of %s sentences%s", S,
                 "/".join(str(len(p)) for p in parts),
                 f" on {_n_workers(client)} workers" if client is not None else " (local)")
        token = uuid.uuid4().hex[:12]
        if client is not None:
            # compiles the training kernels here (into numba's on-disk cache) if they are
            # not cached yet, so that the workers load them instead of each compiling them
            _warm_trainer(settings, data[0])
        shard_f = (client.scatter(parts, broadcast=True, hash=False)
                   if client is not None else parts)
        try:
            while trainer.epoch < epochs:
                t0 = time.perf_counter()
                e = trainer.epoch
                if client is None:
                    results = [_ipm_epoch(settings, trainer.w, parts[k], seeds[k], e)
                               for k in range(S)]
                else:
                    wf = client.scatter(trainer.w, broadcast=True, hash=False)
                    futs = [client.submit(_ipm_epoch, settings, wf, shard_f[k], seeds[k], e,
                                          pure=False, retries=3,
                                          key=f"depparse-ipm-{token}-{e}-{k}")
                            for k in range(S)]
                    results = client.gather(futs)
                    del futs, wf
                mistakes, correct = mix(trainer, results)
                record_epoch(setup, mistakes, correct, time.perf_counter() - t0, checkpoint,
                          label=f" (IPM, {S} shards)", ipm_shards=S)
        finally:
            if client is not None:
                for f in shard_f:
                    f.cancel()
    return finish_model(setup, train_sents, t_start, ipm_shards=S)


@contextmanager
def _cluster(client_or_address):
    if client_or_address is None:
        yield None
        return
    with connect(client_or_address) as client:
        yield client
