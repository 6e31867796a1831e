"""`depparse serve` as its users meet it: a real server (tests/fixtures_serve.py) called by a
UDPipe REST client written from UDPipe's API documentation (form-encoded POST, multipart POST,
GET with a query string), answers compared with `depparse parse` of the same input; bad
requests; a full queue; clients that go away; a few dozen concurrent requests."""

from __future__ import annotations

import email.mime.multipart
import email.mime.nonmultipart
import email.policy
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fixtures_models import REPO_ROOT, run_cli

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "corpora" / "sample.conllu"

SHORT = "The cat sat on the mat. It purred."
LONG = ("Dual decomposition finds exact solutions quickly, but some sentences need more "
        "iterations than others. " * 2 + "The parser reads a sentence and proves its tree. "
        "Which sentences did the algorithm fail to certify? None of them, in the end.\n\n"
        "A second paragraph starts here. It has two sentences.")
HAND = ("1\tThe\t_\t_\t_\t_\t_\t_\t_\t_\n2\tcat\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "3\tsat\t_\t_\t_\t_\t_\t_\t_\t_\n4\t.\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
        "1\tIt\t_\t_\t_\t_\t_\t_\t_\t_\n2\tpurred\t_\t_\t_\t_\t_\t_\t_\t_\n\n")


# ---------------------------------------------------------------------------------------
# a UDPipe REST client, after UDPipe's API reference (methods `models` and `process`; the
# parameters travel as GET query arguments or as a POST body, url-encoded or multipart)


def udpipe(url, method, params, how="form", timeout=120):
    """Call a UDPipe REST method; returns ``(status, decoded JSON or the error text)``."""
    if how == "get":
        req = urllib.request.Request(f"{url}/{method}?{urllib.parse.urlencode(params)}")
    elif how == "form":
        req = urllib.request.Request(f"{url}/{method}",
                                     data=urllib.parse.urlencode(params).encode("utf-8"))
    else:  # multipart/form-data, one text/plain part per parameter
        message = email.mime.multipart.MIMEMultipart("form-data", policy=email.policy.HTTP)
        for name, value in params.items():
            part = email.mime.nonmultipart.MIMENonMultipart("text", "plain")
            part.add_header("Content-Disposition", f'form-data; name="{name}"')
            part.add_header("Content-Transfer-Encoding", "8bit")
            part.set_payload(value, charset="utf-8")
            message.attach(part)
        body = message.as_bytes().split(b"\r\n\r\n", maxsplit=1)[1]
        req = urllib.request.Request(f"{url}/{method}", data=body,
                                     headers={"Content-Type": message["Content-Type"]})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


# ---------------------------------------------------------------------------------------
# what the command line writes for the same inputs


def _blocks(text):
    return [b + "\n" for b in text.strip("\n").split("\n\n")] if text.strip() else []


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """`depparse parse` of the test inputs: {name: CoNLL-U text}."""
    d = tmp_path_factory.mktemp("cli")
    (d / "short.txt").write_text(SHORT, encoding="utf-8")
    (d / "long.txt").write_text(LONG, encoding="utf-8")
    (d / "hand.conllu").write_text(HAND, encoding="utf-8")
    rc, out, err = run_cli(["parse", "--input", "text", d / "short.txt", d / "long.txt"])
    assert rc == 0, err
    short, long_ = out.decode("utf-8").split("# newdoc\n")[1:]
    rc, out, err = run_cli(["parse", SAMPLE, d / "hand.conllu"])
    assert rc == 0, err
    blocks = _blocks(out.decode("utf-8"))
    return {"short": "# newdoc\n" + short, "long": "# newdoc\n" + long_,
            "sample": "\n".join(blocks[:-2]) + "\n", "hand": "\n".join(blocks[-2:]) + "\n"}


TEXT = {"tokenizer": "", "tagger": "", "parser": ""}


def test_models_answers_as_udpipe(server):
    status, answer = udpipe(server.url, "models", {}, "get")
    assert status == 200
    assert answer == {"models": {"en_ewt_gs": ["tokenizer", "tagger", "parser"]},
                      "default_model": "en_ewt_gs"}


@pytest.mark.parametrize("how", ["form", "multipart", "get"])
def test_a_udpipe_client_parses_as_the_cli(server, cli, how):
    status, answer = udpipe(server.url, "process", {**TEXT, "data": SHORT}, how)
    assert status == 200, answer
    assert set(answer) == {"model", "acknowledgements", "result"}
    assert answer["model"] == "en_ewt_gs" and answer["acknowledgements"]
    assert answer["result"] == cli["short"]
    status, answer = udpipe(server.url, "process", {"model": "en", "parser": "",
                                                    "data": SAMPLE.read_text("utf-8")}, how)
    assert status == 200 and answer["result"] == cli["sample"]


def test_horizontal_and_vertical_input(server, cli):
    h = udpipe(server.url, "process", {"input": "horizontal", "parser": "",
                                       "data": "The cat sat .\nIt  purred\n"})
    v = udpipe(server.url, "process", {"input": "vertical", "parser": "",
                                       "data": "The\ncat\nsat\n.\n\nIt\npurred\n"})
    assert h[0] == v[0] == 200
    assert h[1]["result"] == v[1]["result"] == cli["hand"]


def test_without_parser_it_only_tokenizes_and_tags(server):
    status, answer = udpipe(server.url, "process", {"tokenizer": "", "data": SHORT})
    assert status == 200
    words = [line.split("\t") for line in answer["result"].splitlines() if line[:1].isdigit()]
    assert [w[1] for w in words] == "The cat sat on the mat . It purred .".split()
    assert all(w[6] == w[7] == "_" and w[3] == "_" for w in words)  # no tags, no tree
    status, answer = udpipe(server.url, "process", {"tokenizer": "", "tagger": "",
                                                    "data": SHORT})
    words = [line.split("\t") for line in answer["result"].splitlines() if line[:1].isdigit()]
    assert [w[3] for w in words][:3] == ["DET", "NOUN", "VERB"] and words[0][6] == "_"


def test_text_whitespace_in_misc_unless_normalized_spaces(server):
    """The answer keeps the text's whitespace (SpacesAfter, SpacesBefore); UDPipe's
    ``tokenizer=normalized_spaces`` asks for SpaceAfter=No alone."""
    import io

    from depparse.conllu import document_text, read_conllu

    text = "  The cat sat.\n\nIt  purred.\r\n"
    answers = {}
    for opt in ("", "normalized_spaces"):
        status, answer = udpipe(server.url, "process", {"tokenizer": opt, "data": text})
        assert status == 200 and "warnings" not in answer, answer
        f = io.BytesIO(answer["result"].encode("utf-8"))
        f.name = "answer.conllu"
        answers[opt] = read_conllu(f)
    assert document_text(answers[""]) == text
    normal = document_text(answers["normalized_spaces"])
    assert normal.split() == text.split() and "Spaces" not in "".join(
        line for s in answers["normalized_spaces"] for line in s.lines)


def _client(server, **params):
    """A call as UDPipe's own client (udpipe2_client.py) makes it: multipart text/plain parts,
    ``input`` and ``output`` always sent, the other options only when given."""
    return udpipe(server.url, "process", {"input": "conllu", "output": "conllu", **params},
                  "multipart")


def _sentences(result):
    import io

    from depparse.conllu import read_conllu

    f = io.BytesIO(result.encode("utf-8"))
    f.name = "answer.conllu"
    return read_conllu(f)


def test_udpipe_client_with_tokenizer_presegmented(server):
    """Issue 51: tokenizer=presegmented was ignored (with a warning the client never prints):
    a line holding two sentences came back as two.  Now every line is a sentence, its words
    cut by the tokenizer, and the text is kept exactly."""
    from depparse.conllu import document_text

    data = "The cat sat. It purred.\nDon't go  there\n\nA new paragraph. Two sentences.\n"
    status, answer = _client(server, data=data, tokenizer="presegmented", parser="",
                             model="english")
    assert status == 200 and "warnings" not in answer, answer
    sents = _sentences(answer["result"])
    assert [s.text for s in sents] == ["The cat sat. It purred.", "Don't go there",
                                       "A new paragraph. Two sentences."]
    assert document_text(sents) == data
    assert all(sorted(s.heads[1:]).count(0) == 1 for s in sents)  # parsed
    status, plain = _client(server, data=data, tokenizer="", parser="", model="english")
    assert len(_sentences(plain["result"])) == 5  # without it the tokenizer splits them


def test_udpipe_client_with_tokenizer_ranges(server):
    """tokenizer=ranges: TokenRange=start:end in MISC, character offsets into the data (a
    multiword token's on its token line), also with presegmented and normalized_spaces."""
    data = "Žluťoučký  kůň didn't jump.\r\n\nIt purred 😺."
    for options in ("ranges", "presegmented;ranges", "ranges;normalized_spaces"):
        status, answer = udpipe(server.url, "process", {"tokenizer": options, "data": data})
        assert status == 200 and "warnings" not in answer, answer
        tokens, mwt_end = [], 0
        for line in answer["result"].splitlines():
            cols = line.split("\t")
            if len(cols) != 10:
                mwt_end = 0  # a sentence's end (or a comment)
                continue
            ranges = [m for m in cols[9].split("|") if m.startswith("TokenRange=")]
            if "-" not in cols[0] and int(cols[0]) <= mwt_end:
                assert not ranges, line  # a word of a multiword token
                continue
            assert len(ranges) == 1 and cols[9].endswith(ranges[0]), line
            a, b = map(int, ranges[0].split("=")[1].split(":"))
            tokens.append((cols[1], data[a:b]))
            if "-" in cols[0]:
                mwt_end = int(cols[0].split("-")[1])
        assert [form for form, _ in tokens] == ["Žluťoučký", "kůň", "didn't", "jump", ".",
                                                "It", "purred", "😺", "."], options
        assert all(form == text for form, text in tokens), tokens


def test_udpipe_client_with_input_horizontal_and_a_udpipe_model_name(server, cli):
    for model in ("english", "english-ewt", "english-ewt-ud-2.17-251125",
                  "en_ewt-ud-2.17-251125"):
        status, answer = _client(server, input="horizontal", data="The cat sat .\nIt  purred\n",
                                 parser="", model=model)
        assert status == 200 and answer["model"] == "en_ewt_gs", (model, answer)
        assert answer["result"] == cli["hand"]
    status, answer = _client(server, data="x", tokenizer="", model="english-gum-ud-2.17-251125")
    assert status == 400 and "does not exist" in answer and answer.count("\n") == 1


def test_options_depparse_cannot_honour_are_400(server):
    for params, needle in (({"tokenizer": "joint_with_parsing"}, "not known"),
                           ({"tagger": "use_lemma"}, "takes no options"),
                           ({"tokenizer": "", "input": "vertical"}, "cannot be tokenized")):
        status, answer = _client(server, data=SHORT, **params)
        assert status == 400 and needle in answer and answer.count("\n") == 1, answer


def test_parse_answers_words_tree_proof_and_drawing(server, cli):
    status, answer = udpipe(server.url, "parse", {"tokenizer": "", "data": LONG})
    assert status == 200, answer
    assert answer["result"] == cli["long"]
    sents = answer["sentences"]
    blocks = _blocks(cli["long"])
    assert len(sents) == len(blocks) and answer["words"] == sum(len(s["words"]) for s in sents)
    for i, (s, block) in enumerate(zip(sents, blocks, strict=True), 1):
        rows = [line.split("\t") for line in block.splitlines() if line[:1].isdigit()
                and "-" not in line.split("\t")[0]]
        assert s["index"] == i and s["words"] == [r[1] for r in rows]
        assert s["heads"] == [int(r[6]) for r in rows] and s["labels"] == [r[7] for r in rows]
        assert s["upos"] == [r[3] for r in rows] and s["lemmas"] == [r[2] for r in rows]
        assert s["optimal"] is True and s["proof"] in ("dual", "branch-and-bound")
        assert s["certificate"] == (s["proof"] == "dual") and s["timed_out"] is False
        assert s["optimal_over"] == "pruned"  # the server parses as `depparse parse` does
        assert s["iterations"] >= 1 and s["seconds"] > 0 and s["nodes"] >= 1
        assert s["badge"]["kind"] == "proved" and "proved optimal" in s["badge"]["text"]
        html = s["html"]
        assert html.count('<g class="arc') == len(s["words"]) and s["badge"]["text"] in html
        assert 'id="a' in html and f's{i}-tree"' in html


def test_time_limit_marks_trees_not_proved(server):
    """Anytime decoding: with a time limit too short for branch and bound, a hard sentence
    gets the best tree found, marked not proved, and says so in its badge."""
    hard = ("Which sentences did the algorithm that the reviewers who had read the paper "
            "twice praised fail to certify , and why did it , after so many iterations , "
            "still not find the tree that the model , given its features , prefers ?")
    status, answer = udpipe(server.url, "parse", {"input": "horizontal", "data": hard,
                                                  "time_limit": "1e-9"})
    assert status == 200, answer
    s = answer["sentences"][0]
    assert len(s["heads"]) == len(hard.split())
    # the shipped model does not certify this sentence within the first chunk of dual
    # decomposition iterations (25, after which the clock is read)
    assert not s["optimal"] and s["timed_out"] and s["proof"] is None
    assert s["badge"]["text"].startswith("not proved within the time limit")
    assert sorted(s["heads"]).count(0) == 1  # still a tree: the best one found


# ---------------------------------------------------------------------------------------
# bad requests: each a 4xx with one line, never a 500 or a hang, and the server goes on


def raw(server, request: bytes, timeout=60):
    """Send raw bytes; returns ``(status, body)`` of the answer."""
    host, port = urllib.parse.urlsplit(server.url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                head, _, body = data.partition(b"\r\n\r\n")
                n = next((int(h.split(b":")[1]) for h in head.split(b"\r\n")
                          if h.lower().startswith(b"content-length:")), None)
                if n is not None and len(body) >= n:
                    break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def post(path, body: bytes, kind="application/x-www-form-urlencoded", extra=b""):
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n").encode() + extra + \
        b"\r\n" + body


@pytest.mark.parametrize("request_, status, needle", [
    (post("/process", b""), 400, "'data' is required"),
    (b"GET /process HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400, "'data' is required"),
    (post("/process", b"data=x&model=cs"), 400, "model 'cs' does not exist"),
    (post("/process", b"data=x&model=..%2Fmodels%2Fen_ewt_gs.npz"), 400, "does not exist"),
    (post("/process", bytes(range(256)) * 8), 400, "not UTF-8"),
    (post("/process", bytes(range(256)) * 8, "multipart/form-data; boundary=q"), 400, "no parts"),
    (post("/process", bytes(range(256)) * 8, "application/octet-stream"), 415, "Content-Type"),
    (post("/process", b"data=x&verbose=1"), 400, "unknown parameter 'verbose'"),
    (post("/process", b"data=%C3%28&tokenizer="), 400, "not UTF-8"),
    (post("/process", b"data=caf\xe9&tokenizer="), 400, "not UTF-8"),  # Latin-1
    (post("/process", b"data=1%09a%09b&parser="), 400, "data:1: expected 10 tab-separated"),
    (post("/process", b"data=x&output=plaintext"), 400, "unknown output format"),
    (post("/parse", b"data=x&time_limit=-1"), 400, "time_limit must be"),
    (post("/process", b"x" * 100, extra=b"Content-Length: 5\r\n"), 400, ""),
    (b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, "no such URL"),
    (b"DELETE /models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 405, "not allowed"),
    (b"GET /static/../../api.py HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404, ""),
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03junk\r\n\r\n", 400, ""),
])
def test_bad_requests_are_4xx_with_one_line(server, request_, status, needle):
    got, body = raw(server, request_)
    assert got == status, body
    text = body.decode("utf-8", "replace")
    assert needle in text and text.count("\n") <= 1
    assert server.alive()


def test_broken_conllu_gets_the_cli_message(server, tmp_path, monkeypatch):
    bad = "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2\tcat\tcat\tNOUN\n\n"
    status, message = udpipe(server.url, "process", {"parser": "", "data": bad})
    assert status == 400
    monkeypatch.chdir(tmp_path)
    Path("data").write_text(bad, encoding="utf-8")
    rc, _, err = run_cli(["parse", "data"])
    # the same line, less the CLI's advice on --skip-bad (a flag the server has not)
    hint = "; --skip-bad skips malformed sentences (listing them) and parses the others"
    assert rc == 2 and err == f"depparse: error: {message.rstrip()}{hint}\n", err


def test_a_body_over_the_limit_is_413_at_once(server):
    """A 10 MB body: refused from its Content-Length before it is read; without one (chunked),
    as soon as more than the limit (4 MiB) has come."""
    head = (b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-"
            b"urlencoded\r\nContent-Length: 10000000\r\nConnection: close\r\n\r\ndata=")
    status, body = raw(server, head)
    assert status == 413 and b"10,000,000 bytes" in body
    chunk = b"x" * 65536
    chunked = (b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-"
               b"urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
               + b"5\r\ndata=\r\n" + (b"10000\r\n" + chunk + b"\r\n") * 66)
    status, body = raw(server, chunked)
    assert status == 413 and b"over 4,194,304 bytes" in body
    assert server.alive()


def test_a_full_queue_answers_503_and_the_rest_are_right(server, cli):
    """12 requests at once against a queue of 6: the ones over it are answered 503 at once,
    every other one is right."""
    barrier = threading.Barrier(12)

    def one(_):
        barrier.wait()
        return udpipe(server.url, "process", {**TEXT, "data": LONG})

    with ThreadPoolExecutor(12) as ex:
        answers = list(ex.map(one, range(12)))
    statuses = sorted(s for s, _ in answers)
    assert 503 in statuses and 200 in statuses, statuses
    for status, answer in answers:
        if status == 200:
            assert answer["result"] == cli["long"]
        else:
            assert status == 503 and "busy" in answer
    assert json.loads(server.get("/status")[1])["requests"] == 0


def test_clients_that_go_away_leave_the_server_serving(server, cli):
    host, port = urllib.parse.urlsplit(server.url).netloc.split(":")
    # half a body, then gone
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"POST /process HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-"
                     b"form-urlencoded\r\nContent-Length: 1000\r\n\r\ndata=The+cat")
    # a whole long request, gone before its answer
    body = urllib.parse.urlencode({**TEXT, "data": LONG * 4}).encode()
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(post("/process", body))
        time.sleep(0.3)
    status, answer = udpipe(server.url, "process", {**TEXT, "data": SHORT})
    assert status == 200 and answer["result"] == cli["short"]
    for _ in range(300):  # the abandoned requests end
        if json.loads(server.get("/status")[1])["requests"] == 0:
            break
        time.sleep(0.1)
    assert json.loads(server.get("/status")[1])["requests"] == 0


def test_a_few_dozen_concurrent_requests_all_right(server, cli):
    """4 clients, 36 requests of mixed sizes and kinds (plain text, CoNLL-U, malformed):
    every answer is `depparse parse`'s for the same input, or its error."""
    kinds = [({**TEXT, "data": SHORT}, 200, cli["short"]),
             ({**TEXT, "data": LONG}, 200, cli["long"]),
             ({"parser": "", "data": SAMPLE.read_text("utf-8")}, 200, cli["sample"]),
             ({"parser": "", "input": "vertical", "data": "The\ncat\nsat\n.\n\nIt\npurred\n"},
              200, cli["hand"]),
             ({"parser": "", "data": "1\tThe\n"}, 400, "data:1: expected 10 tab-separated"),
             ({"parser": "", "data": "", "model": "nope"}, 400, "does not exist")]
    jobs = [(kinds[i % len(kinds)], ("form", "multipart", "get")[i % 3]) for i in range(36)]

    def one(job):
        (params, status, expected), how = job
        got, answer = udpipe(server.url, "process", params, how)
        if status == 200:
            return got == 200 and answer["result"] == expected
        return got == status and expected in answer

    with ThreadPoolExecutor(4) as ex:
        ok = list(ex.map(one, jobs))
    assert all(ok), [j for j, good in zip(jobs, ok, strict=True) if not good]


def test_the_page_says_what_an_unproved_tree_is():
    """The page's introduction (issue 51: it said "or the word that it is not", which reads as
    "the tree is not optimal"): a tree without a proof is marked not proved, as its badge says
    (depparse/viewer/svg.py, proof_badge)."""
    import html
    import re
    from importlib import resources

    from depparse.viewer import proof_badge

    page = resources.files("depparse.serve").joinpath("static/index.html").read_text("utf-8")
    intro = " ".join(html.unescape(re.search(r"<header>.*?<p>(.*?)</p>", page, re.S)
                                   .group(1)).split())
    assert "the word that it is not" not in intro
    assert "highest-scoring tree" in intro and "“not proved” on the best tree found" in intro
    assert proof_badge({"proof": None})[1].startswith("not proved: the best tree found")


def test_the_page_and_its_files_are_served(server):
    status, page = server.get("/")
    assert status == 200 and b'<script src="static/viewer.js"' in page
    for name in ("viewer.js", "page.css", "trees.css"):
        status, body = server.get(f"/static/{name}")
        assert status == 200 and body
    assert b"http" not in server.get("/static/viewer.js")[1]  # nothing from elsewhere
    status, body = server.get("/static/index.html")
    assert status == 404


@pytest.mark.slow
def test_a_killed_worker_fails_its_request_and_the_server_goes_on(server, cli):
    """A worker killed while parsing (as by the kernel's out-of-memory killer): that request
    is answered 500, the workers are started afresh, later requests are right."""
    import os
    import signal

    from depparse.serve.workers import processes

    def workers():  # the fork server's children (it is the server's child)
        tree = processes()
        fork_servers = [p for p, (ppid, cmd) in tree.items()
                        if ppid == server.proc.pid and b"forkserver" in cmd]
        assert len(fork_servers) == 1, tree
        return [p for p, (ppid, _) in tree.items() if ppid == fork_servers[0]]

    before = workers()
    assert len(before) == 2
    result = {}
    t = threading.Thread(target=lambda: result.update(
        a=udpipe(server.url, "process", {**TEXT, "data": LONG * 30})))
    t.start()
    time.sleep(1.0)
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    t.join(300)
    assert result["a"][0] == 500 and "worker process died" in result["a"][1]
    status, answer = udpipe(server.url, "process", {**TEXT, "data": SHORT}, timeout=600)
    assert status == 200 and answer["result"] == cli["short"]
    assert json.loads(server.get("/status")[1])["restarts"] >= 1
    assert not set(workers()) & set(before)


_FORKED_SCRIPT = """
import asyncio, os, signal, sys, time
from depparse.serve.workers import WorkerDied, Workers, _shared, processes


def slow_shared():
    time.sleep(0.5)  # held a moment, so that each worker takes one task
    return _shared()


def each(w):
    async def run():
        return await asyncio.gather(*(w._call(slow_shared) for _ in range(w.jobs)))
    return asyncio.run(run())


def children(pid):
    return [(p, cmd) for p, (ppid, cmd) in processes().items() if ppid == pid]


if __name__ == "__main__":
    first = {"sib": sys.argv[1]}
    for models in (first, {**first, "other": sys.argv[2]}):
        w = Workers(models, 2, 4, 400)
        asyncio.run(w.start())
        print("shared", each(w))
        server = [p for p, cmd in children(os.getpid()) if b"forkserver" in cmd]
        os.kill(children(server[0])[0][0], signal.SIGKILL)
        t0 = time.monotonic()
        while w.restarts == 0 and time.monotonic() - t0 < 60:
            try:  # a task may still reach the live worker before the pool is broken
                asyncio.run(w._call(slow_shared))
            except WorkerDied:
                pass
        print("restarts", w.restarts, "shared", each(w))
        w.close()
"""


def test_workers_are_forked_with_the_models_loaded(syn, tmp_path):
    """The workers parse with the parsers the fork server loaded (shared copy-on-write),
    also after a worker died; a later pool of the same process (its fork server already
    running) shares the models they have in common, and its workers load the others."""
    import multiprocessing as mp
    import shutil
    import subprocess
    import sys

    if "forkserver" not in mp.get_all_start_methods():
        pytest.skip("no fork server on this platform: each worker loads the models")
    other = tmp_path / "other.npz"
    shutil.copy(syn.model, other)
    script = tmp_path / "forked.py"
    script.write_text(_FORKED_SCRIPT)
    p = subprocess.run([sys.executable, script, syn.model, other], capture_output=True,
                       text=True, timeout=600, cwd=REPO_ROOT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "shared [['sib'], ['sib']]", "restarts 1 shared [['sib'], ['sib']]",
        "shared [['sib'], ['sib']]", "restarts 1 shared [['sib'], ['sib']]"], p.stderr


def test_serve_refuses_bad_settings_with_one_line(tmp_path):
    pytest.importorskip("uvicorn", reason="depparse serve needs the serve extra")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for args, needle in ((["-m", "no_such_model"], "no model of that name"),
                             (["--port", "99999"], "--port must be <= 65535"),
                             (["--workers", "0"], "--workers must be >= 1"),
                             (["--time-limit", "0"], "--time-limit must be > 0"),
                             (["--port", str(port)], f"cannot listen on 127.0.0.1:{port}")):
            rc, out, err = run_cli(["serve", *args])
            assert rc == 2 and err.startswith("depparse: error: ") and needle in err, err
            assert err.count("\n") == 1 and not out
