"""The server's parameters (depparse/serve/protocol.py), without a server: UDPipe's REST
parameters into a job, the bodies it reads, the input formats it converts."""

from __future__ import annotations

import pytest

import depparse
from depparse.conllu import iter_horizontal, iter_vertical
from depparse.serve.protocol import (
    PARAMETERS,
    RequestError,
    form_pairs,
    make_job,
    query_pairs,
)

MODELS = {"en_ewt_gs": "en_ewt_gs", "en": "en_ewt_gs", "english": "en_ewt_gs",
          "english-ewt": "en_ewt_gs", "en_ewt": "en_ewt_gs"}


def job(pairs, **kw):
    return make_job(pairs, MODELS, "en_ewt_gs", 10.0, **kw)


def status_of(fn, *args, **kw):
    with pytest.raises(RequestError) as e:
        fn(*args, **kw)
    assert "\n" not in e.value.message
    return e.value.status, e.value.message


def test_udpipe_parameters_map_to_the_cli():
    j = job([("data", "x"), ("tokenizer", ""), ("tagger", ""), ("parser", "")])
    assert (j.model, j.input, j.tag, j.parse, j.time_limit) == ("en_ewt_gs", "text", True, True,
                                                               10.0)
    j = job([("data", "x"), ("model", "en"), ("parser", "")])  # an alias; CoNLL-U by default
    assert (j.model, j.input, j.tag, j.parse) == ("en_ewt_gs", "conllu", False, True)
    assert not job([("data", "x")]).parse  # /process: no parser parameter, no parsing
    assert job([("data", "x")], parse_default=True).parse  # /parse parses by default
    assert not job([("data", "x"), ("parser", "none")], parse_default=True).parse
    assert not job([("data", "x"), ("tagger", "none")]).tag
    for kind in ("horizontal", "vertical", "conllu"):
        assert job([("data", "x"), ("input", kind)]).input == kind
    assert job([("data", "x"), ("time_limit", "0.5")]).time_limit == 0.5
    assert job([("data", ""), ("model", "")]).model == "en_ewt_gs"  # empty: the default


def test_udpipe_tokenizer_options_are_honoured():
    """Issue 51: presegmented and ranges were ignored with a warning UDPipe's client never
    prints; they are the job's now, and nothing is ignored."""
    j = job([("data", "x"), ("tokenizer", "presegmented;ranges"), ("parser", "1")])
    assert (j.input, j.parse, j.presegmented, j.ranges, j.normalized_spaces, j.warnings) == (
        "text", True, True, True, False, ())
    j = job([("data", "x"), ("tokenizer", "normalized_spaces; Ranges")])
    assert j.normalized_spaces and j.ranges and not j.presegmented and j.warnings == ()
    j = job([("data", "x"), ("tokenizer", "")])
    assert not (j.normalized_spaces or j.presegmented or j.ranges)
    # UDPipe's client sends input=conllu with the tokenizer; horizontal is a sentence per
    # line, as presegmented
    assert job([("data", "x"), ("tokenizer", ""), ("input", "conllu")]).input == "text"
    j = job([("data", "x"), ("tokenizer", "presegmented"), ("input", "horizontal")])
    assert j.input == "text" and j.presegmented


@pytest.mark.parametrize("pairs, needle", [
    ([("tokenizer", "joint_with_parsing")], "tokenizer option 'joint_with_parsing' not known: "
     "depparse's tokenizer takes only normalized_spaces, presegmented, ranges"),
    ([("tokenizer", "ranges;guesser=1;x")], "tokenizer options 'guesser=1;x' not known"),
    ([("tagger", "use_lemma")], "tagger option 'use_lemma' not known: depparse's tagger takes "
     "no options"),
    ([("parser", "beam=5")], "parser option 'beam=5' not known"),
    ([("tokenizer", ""), ("input", "vertical")], "input=vertical cannot be tokenized"),
    ([("tokenizer", ""), ("input", "horizontal")], "tokenizer=presegmented"),
])
def test_options_depparse_cannot_honour_are_400(pairs, needle):
    status, message = status_of(job, [("data", "x"), *pairs])
    assert status == 400 and needle in message, message


def test_udpipe_model_names_resolve():
    """UDPipe's names of its models: language, language-treebank, then UD's release and
    date (any: not checked), also with the treebank's code; unknown treebanks are not."""
    for name in ("english", "english-ewt", "english-ewt-ud-2.17-251125", "English-EWT-UD-2.17",
                 "english-ewt-ud", "en_ewt-ud-2.17-251125", "en"):
        assert job([("data", "x"), ("model", name)]).model == "en_ewt_gs", name
    for name in ("english-gum", "english-gum-ud-2.17-251125", "german", "english-ud-x"):
        status, message = status_of(job, [("data", "x"), ("model", name)])
        assert status == 400 and "does not exist" in message


def test_udpipe_model_names_resolve_in_the_catalog():
    """The one place -m, depparse.load, the server and spaCy look names up
    (depparse.catalog.find): UDPipe's spellings of the shipped models."""
    from depparse import catalog

    for names, model in ((("english", "english-ewt", "english-ewt-ud-2.17-251125",
                           "en_ewt-ud-2.17-251125"), "en_ewt_gs"),
                         (("portuguese", "portuguese-bosque-ud-2.17-251125"), "pt_bosque_gs"),
                         (("turkish", "turkish-imst", "turkish-imst-ud-2.17-251125"),
                          "tr_imst_gs")):
        for name in names:
            assert catalog.find(name).name == model, name
    assert {"english", "english-ewt"} <= catalog.find("en").names()
    assert catalog.base_name("english-ewt-ud-2.17-251125") == "english-ewt"
    assert catalog.base_name("en_ewt_gs") == "en_ewt_gs"
    with pytest.raises(depparse.ModelError, match="no model of that name"):
        catalog.find("english-gum-ud-2.17-251125")


@pytest.mark.parametrize("pairs, needle", [
    ([], "'data' is required"),
    ([("data", "x"), ("foo", "1")], "unknown parameter 'foo'"),
    ([("data", "x"), ("data", "y")], "given twice"),
    ([("data", "x"), ("model", "../../etc/passwd")], "does not exist"),
    ([("data", "x"), ("model", "/work/wt-serve/models/en_ewt_gs.npz")], "does not exist"),
    ([("data", "x"), ("input", "generic_tokenizer")], "unknown input format"),
    ([("data", "x"), ("output", "matxin")], "unknown output format"),
    ([("data", "x"), ("time_limit", "soon")], "number of seconds"),
    ([("data", "x"), ("time_limit", "0")], "at most 10"),
    ([("data", "x"), ("time_limit", "11")], "at most 10"),
    ([("data", "x"), ("time_limit", "nan")], "at most 10"),
])
def test_bad_parameters_are_400_with_one_line(pairs, needle):
    status, message = status_of(job, pairs)
    assert status == 400 and needle in message
    if "unknown parameter" in needle:
        assert all(p in message for p in PARAMETERS)


def test_bodies():
    assert query_pairs(b"data=The+cat%20sat&parser=") == [("data", "The cat sat"), ("parser", "")]
    assert form_pairs("data=Příliš".encode(), "application/x-www-form-urlencoded; charset=UTF-8") \
        == [("data", "Příliš")]
    assert form_pairs(b"", "text/plain") == []
    body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"data\"\r\n"
            b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
            + "Žluťoučký kůň.\n".encode() + b"\r\n--XyZ\r\nContent-Disposition: form-data; "
            b"name=\"tokenizer\"\r\n\r\n\r\n--XyZ--\r\n")
    assert form_pairs(body, "multipart/form-data; boundary=XyZ") == [
        ("data", "Žluťoučký kůň.\n"), ("tokenizer", "")]
    # a text/plain part's CRLFs are its line ends; a file's bytes are kept as they are
    crlf = (b"--XyZ\r\nContent-Disposition: form-data; name=\"data\"\r\n"
            b"Content-Type: text/plain; charset=utf-8\r\n\r\na\r\nb\r\n\r\n--XyZ\r\n"
            b"Content-Disposition: form-data; name=\"input\"; filename=\"x.conllu\"\r\n"
            b"Content-Type: application/octet-stream\r\n\r\nc\r\nd\r\n--XyZ--\r\n")
    assert form_pairs(crlf, "multipart/form-data; boundary=XyZ") == [
        ("data", "a\nb\n"), ("input", "c\r\nd")]


@pytest.mark.parametrize("body, kind, status, needle", [
    (b"data=\xff\xfe", "application/x-www-form-urlencoded", 400, "not UTF-8"),
    (b"data=%ff%fe", "application/x-www-form-urlencoded", 400, "not UTF-8"),
    (b"\x00\x01\x02junk&&==", "application/x-www-form-urlencoded", 400, "name=value"),
    (b"\x00\x01\x02junk", "multipart/form-data; boundary=XyZ", 400, "no parts"),
    (b"--XyZ\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\n\xff\r\n--XyZ--\r\n",
     "multipart/form-data; boundary=XyZ", 400, "not UTF-8"),
    (b"data=x", "application/json", 415, "unsupported Content-Type"),
    (b"data=x", "", 415, "unsupported Content-Type"),
])
def test_bad_bodies(body, kind, status, needle):
    got, message = status_of(form_pairs, body, kind)
    assert got == status and needle in message


def test_horizontal_and_vertical_input_become_sentences():
    """UDPipe's formats (depparse/conllu/formats.py), as the server and `depparse parse
    --input horizontal|vertical` read them: each sentence's line is the input's."""
    import io

    def f(text):
        b = io.BytesIO(text.encode("utf-8"))
        b.name = "data"
        return b

    h = list(iter_horizontal(f("\ufeffThe cat  sat .\r\n\n  It purred\nNew\u00a0York\n")))
    assert [list(s.forms[1:]) for s in h] == [["The", "cat", "sat", "."], ["It", "purred"],
                                               ["New York"]]
    assert [s.line_no for s in h] == [1, 3, 4]
    v = list(iter_vertical(f("The\tDET\ncat\n\n\nIt\npurred")))
    assert [list(s.forms[1:]) for s in v] == [["The", "cat"], ["It", "purred"]]
    assert [s.line_no for s in v] == [1, 5]
    assert list(iter_horizontal(f("  \n"))) == [] and list(iter_vertical(f("\n\n"))) == []
    bad = io.BytesIO(b"a b\nc \xff d\n")
    bad.name = "data"
    with pytest.raises(depparse.ConlluError, match="^data:2: invalid UTF-8"):
        list(iter_horizontal(bad))


def test_slots_start_short_tasks_first_and_keep_a_worker_for_them():
    """The scheduler of the worker pool (depparse/serve/workers.py, Slots): with 2 workers,
    long tasks take at most one; a short task that comes after waiting long ones starts first;
    a task cancelled while waiting gives its place on."""
    import asyncio

    from depparse.serve.workers import Slots

    async def scenario():
        slots = Slots(2)
        log = []

        async def task(name, long, hold):
            await slots.acquire(long)
            log.append(("start", name))
            await hold.wait()
            slots.release(long)

        holds = {k: asyncio.Event() for k in ("L1", "L2", "L3", "S1", "S2")}
        tasks = {}
        for name in ("L1", "L2", "L3"):  # three long tasks: one runs, two wait
            tasks[name] = asyncio.ensure_future(task(name, True, holds[name]))
            await asyncio.sleep(0)
        await asyncio.sleep(0.01)
        assert log == [("start", "L1")]  # the second worker is kept for short tasks
        tasks["S1"] = asyncio.ensure_future(task("S1", False, holds["S1"]))
        await asyncio.sleep(0.01)
        assert log[-1] == ("start", "S1")  # at once, on the free worker
        tasks["S2"] = asyncio.ensure_future(task("S2", False, holds["S2"]))
        await asyncio.sleep(0.01)
        tasks["L2"].cancel()  # gone while waiting
        holds["L1"].set()  # a worker frees: S2 (short, later) goes before L3 (long, earlier)
        await asyncio.sleep(0.01)
        assert log[-1] == ("start", "S2")
        holds["S1"].set()
        await asyncio.sleep(0.01)
        assert log[-1] == ("start", "L3") and ("start", "L2") not in log
        for h in holds.values():
            h.set()
        await asyncio.gather(*(t for n, t in tasks.items() if n != "L2"))
        assert slots.free == 2 and slots.long_free == 1 and not slots._waiting

    asyncio.run(scenario())
