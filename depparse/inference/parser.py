"""The parser's API: :class:`Parser`, sentences in, parsed sentences out, in order.

One call parses a batch (:meth:`Parser.parse`, with the proofs :meth:`Parser.parse_results`)
and one iterator parses a stream of any length (:meth:`Parser.iter_parse_results`: worker
processes, the encoder a batch ahead on a second thread, the tag columns chosen per sentence
by :mod:`.columns`); the rest are thin wrappers over them (files, strings, plain text) and the
settings.  The pipeline itself, a sentence at a time, is :class:`~.engine.Engine`
(``Parser.engine``), whose steps the training, the benchmarks and the tests call.
"""

from __future__ import annotations

import io
import os

from ..conllu import read_conllu, write_conllu
from ..errors import UsageError
from ..model import Model
from .columns import ColumnPolicy, trained_columns
from .engine import Engine, JointInput, ParseResult, tree_decoder
from .parallel import iter_parallel

__all__ = ["JointInput", "ParseResult", "Parser", "tree_decoder"]

#: The encoder's passes (with a learned network: chunks of
#: :data:`~.engine.LEARNED_CHUNK` sentences and the network's outputs, or e5's layers alone
#: for a network that reads them: ``Engine.network_on_helper``) computed ahead of the
#: decoding on a second thread (``threads=2``).
ENCODER_AHEAD = 2


def _engine_attr(name, doc):
    return property(lambda self: getattr(self.engine, name), doc=doc)


class Parser:
    """Parse sentences with a :class:`~depparse.model.Model` (``path``: its file, for
    messages).  The settings change through :meth:`set_decoding` and its shorthands
    :meth:`set_pruning`, :meth:`set_proof` and :meth:`set_joint`; the learned network's
    expert weights through ``engine.set_experts``."""

    def __init__(self, model: Model, path=None):
        self.engine = Engine(model, path)
        # which tag columns the tagger fills in, per sentence (depparse.inference.columns)
        self.columns = ColumnPolicy(trained_columns(model.vocab), self.engine.tagger is not None)

    model = _engine_attr("model", "The :class:`~depparse.model.Model`.")
    path = _engine_attr("path", "The model's file (a string), or None.")
    config = _engine_attr("config", "The model's :class:`~depparse.config.ModelConfig`.")
    decoding = _engine_attr("decoding", "The decoding settings "
                            "(:class:`~depparse.config.DecodeConfig`): :meth:`set_decoding`.")
    tagger = _engine_attr("tagger", "The model's tagger (:mod:`.tagging`), or None.")
    tokenizer = _engine_attr("tokenizer", "The model's tokenizer (:mod:`.tokenizer`), or None.")
    learned = _engine_attr("learned", "The model's learned network "
                           "(:mod:`depparse.network.biaffine`), or None.")
    joint = _engine_attr("joint", "Joint tagging's settings (:meth:`set_joint`), or None.")

    # -- settings (Engine's: the one place they change) ------------------------------------
    def set_decoding(self, config=None, /, **fields):
        """:meth:`Engine.set_decoding <.engine.Engine.set_decoding>`: decode with other
        fields of :class:`~depparse.config.DecodeConfig` than the model's."""
        self.engine.set_decoding(config, **fields)

    def set_pruning(self, threshold=None, max_heads=None, network=None):
        """:meth:`Engine.set_pruning <.engine.Engine.set_pruning>`: prune harder or more
        loosely than the model was trained with."""
        self.engine.set_pruning(threshold, max_heads, network)

    def set_proof(self, over="pruned", max_words=None):
        """:meth:`Engine.set_proof <.engine.Engine.set_proof>`: prove every tree optimal over
        the pruned arcs or over all of them."""
        self.engine.set_proof(over, max_words)

    def set_joint(self, weight=None, k=None, margin=None, on=True):
        """:meth:`Engine.set_joint <.engine.Engine.set_joint>`: decode the UPOS together
        with the trees (joint tagging and parsing)."""
        self.engine.set_joint(weight, k, margin, on)

    # -- parsing ---------------------------------------------------------------------------
    def parse(self, sentences, *, max_iter=None, single_root=None, time_limit=None, jobs=1,
              retag=False, threads=None):
        """Parse sentences (:class:`~depparse.conllu.Sentence`), in order: the parsed copies.

        Parameters
        ----------
        sentences : iterable of Sentence
        max_iter : int, optional
            Iteration cap K (default: the model's).
        single_root : bool, optional
            Default True (UD).
        time_limit : float, optional
            Seconds per sentence for its decoding and proof (anytime decoding: then the best
            tree so far, marked not proved); default the model's setting,
            :data:`~depparse.config.PROOF_SECONDS`; 0: no limit.
        jobs : int
            Worker processes (:mod:`.parallel`); the output is identical to ``jobs=1``.
        threads : int, optional
            Threads of this process when ``jobs`` is 1: 2 runs the encoders and the learned
            network (for a network over e5's layers, the encoders alone) a batch ahead of the
            decoding on a second thread (raw English text at 1.2-1.6 times the words/s of one
            thread on two cores; the output is the same),
            1 keeps to one thread.  Default: 2 where the machine has two CPUs or more.
            Worker processes use one thread each.
        retag : bool
            Predict all four tag columns with the model's tagger; by default only where the
            input lacks them (:mod:`depparse.inference.columns`).  A model without a tagger
            given such input warns (:class:`~depparse.errors.InputWarning`).

        Returns
        -------
        list of Sentence
            See :meth:`parse_results` for each sentence's proof as well, and
            :meth:`iter_parse_results` for a stream of any length.
        """
        return [p for p, _ in self.iter_parse_results(
            sentences, max_iter=max_iter, single_root=single_root, time_limit=time_limit,
            jobs=jobs, retag=retag, threads=threads, trace=False)]

    def parse_results(self, sentences, *, max_iter=None, single_root=None, time_limit=None,
                      jobs=1, retag=False, trace=True, threads=None):
        """:meth:`parse` with each sentence's :class:`ParseResult` (its proof, certificate,
        iterations, time, the columns its tags were predicted in): a list of
        ``(Sentence, ParseResult)`` pairs, in order.

        ``trace`` keeps each sentence's dual/primal values per iteration (for
        ``depparse report``); the other parameters are those of :meth:`parse`.
        """
        return list(self.iter_parse_results(
            sentences, max_iter=max_iter, single_root=single_root, time_limit=time_limit,
            jobs=jobs, retag=retag, trace=trace, threads=threads))

    def iter_parse_results(self, sentences, *, max_iter=None, single_root=None,
                           time_limit=None, jobs=1, retag=False, trace=False,
                           file_columns=None, chunk_size=None, threads=None):
        """Parse a stream of sentences: a generator of ``(Sentence, ParseResult)`` pairs in
        input order, holding only a bounded window of sentences whatever the length of the
        stream (what ``depparse parse`` runs on; :meth:`parse` and :meth:`parse_results` are
        lists of it).

        Parameters
        ----------
        sentences : iterable of Sentence
            Read lazily (a generator over a file of any size is fine).
        jobs : int
            Worker processes: consecutive chunks of the stream are parsed in parallel and
            yielded in order (:func:`~depparse.inference.parallel.iter_parallel`); the output
            is identical to ``jobs=1``.
        file_columns : dict, optional
            ``{source: columns}``: the tag columns a file lacks (:mod:`depparse.inference.columns`),
            for a stream that starts in the middle of that file (a run continued after a
            stop); otherwise decided from the file's first sentences.
        chunk_size : int, optional
            Sentences per task of a worker process (default: growing from 1 to 32).

        The other parameters are those of :meth:`parse_results`; the tag columns are chosen
        per sentence (:mod:`depparse.inference.columns`) and each result says which were predicted
        (``ParseResult.tagged``).
        """
        kw = dict(max_iter=max_iter, single_root=single_root, time_limit=time_limit,
                  trace=trace)
        items = self.columns.assign(sentences, retag, file_columns)
        if threads is not None and threads < 1:
            raise UsageError(f"threads {threads}: must be >= 1")
        if jobs > 1:
            yield from iter_parallel(self, items, jobs, kw, chunk_size=chunk_size)
        else:
            if threads is None:
                threads = 2 if (os.cpu_count() or 1) > 1 else 1
            yield from self.engine.iter_parsed(items, ahead=ENCODER_AHEAD if threads > 1 else 0,
                                        **kw)
    def tag(self, sentences, columns):
        """Copies of ``sentences`` with ``columns`` (of
        :data:`~depparse.inference.columns.TAG_COLUMNS`) predicted by the model's tagger (the
        sentences themselves when there is nothing to predict): no parsing."""
        return self.engine.tag(sentences, columns)

    # -- input and output ------------------------------------------------------------------
    def read_text(self, path_or_file, source=None, normalized_spaces=False,
                  presegmented=False, ranges=False):
        """Sentences of a plain-text file (or stream, or, with ``source``, a string): the
        model's tokenizer segments and tokenizes it (:mod:`.tokenizer`).  MISC keeps the
        text's whitespace (``SpaceAfter=No``, ``SpacesAfter``, ``SpacesBefore``); with
        ``normalized_spaces``, ``SpaceAfter=No`` alone.  ``presegmented``: every line is a
        sentence; ``ranges``: ``TokenRange=start:end`` in MISC (UDPipe's tokenizer options,
        :meth:`~.tokenizer.Tokenizer.to_conllu`).

        Raises
        ------
        UsageError
            When the model has no tokenizer.
        ConlluError
            For text that cannot be read (invalid UTF-8, NUL characters), with file and line.
        """
        if self.tokenizer is None:
            raise UsageError(f"{self.path or 'this model'}: the model has no tokenizer, so it "
                             "cannot read plain text; give CoNLL-U, or use a model trained "
                             "by `depparse train` on a treebank with `# text` lines")
        options = {k: True for k, v in (("presegmented", presegmented), ("ranges", ranges))
                   if v}
        if source is not None:
            return self.tokenizer.tokenize(path_or_file, source=source,
                                           normalized_spaces=normalized_spaces, **options)
        return self.tokenizer.tokenize_file(path_or_file, normalized_spaces=normalized_spaces,
                                            **options)

    def parse_file(self, path, out=None, input="conllu", **kwargs):
        """Parse a CoNLL-U file (``input="text"``: a plain-text file); write the result to
        ``out`` (atomically) when given."""
        sents = self.read_text(path) if input == "text" else read_conllu(path)
        parsed = self.parse(sents, **kwargs)
        if out is not None:
            write_conllu(parsed, out)
        return parsed

    def parse_text(self, text, **kwargs):
        """Parse plain text (paragraphs separated by blank lines); returns CoNLL-U text.

        The model's tokenizer splits sentences and words; the output carries ``# newpar``,
        ``# sent_id``, ``# text``, ``SpaceAfter=No`` and the text's other whitespace in
        ``SpacesAfter``/``SpacesBefore`` (see :meth:`read_text`; :func:`depparse.document_text`
        rebuilds the text).
        """
        return _conllu(self.parse(self.read_text(text, source="<text>"), **kwargs))

    def parse_conllu(self, text, **kwargs):
        """Parse CoNLL-U text; returns CoNLL-U text (only HEAD and DEPREL changed)."""
        return _conllu(self.parse(read_conllu(io.BytesIO(text.encode("utf-8"))), **kwargs))


def _conllu(sentences):
    buf = io.BytesIO()
    write_conllu(sentences, buf)
    return buf.getvalue().decode("utf-8")
