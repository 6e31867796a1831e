"""Download the UD treebanks listed in manifest.tsv (for users with internet access).

Files come from the raw-file service of the treebanks' public GitHub repositories, pinned to
the commits in the manifest, and are written to ``$DEPPARSE_CORPORA/<code>/`` (default
``../shared/corpora`` beside the repository), the layout the project expects.  Existing
files are kept.  Note: pt_bosque's train file is not a single file in the pinned
repository (the shared copy was rebuilt from the treebank's per-document sources), so only
its dev and test files are downloaded.

Usage: ``python corpora/download.py [--dest DIR] [CODE ...]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{file}"


def manifest():
    rows = []
    for line in (HERE / "manifest.tsv").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        code, repo, commit, files = line.split("\t")
        rows.append((code, repo, commit, files.split()))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("codes", nargs="*", help="treebank codes (default: all)")
    default = os.environ.get("DEPPARSE_CORPORA", str(HERE.parent.parent / "shared" / "corpora"))
    ap.add_argument("--dest", default=default)
    args = ap.parse_args(argv)
    dest = Path(args.dest)
    status = 0
    for code, repo, commit, files in manifest():
        if args.codes and code not in args.codes:
            continue
        d = dest / code
        d.mkdir(parents=True, exist_ok=True)
        for f in files:
            target = d / f
            if target.exists():
                print(f"{target}: present")
                continue
            url = RAW.format(repo=repo, commit=commit, file=f)
            try:
                with urllib.request.urlopen(url, timeout=60) as r:
                    data = r.read()
            except OSError as e:
                print(f"{url}: {e}", file=sys.stderr)
                status = 1
                continue
            fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{f}.")
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
            print(f"{target}: {len(data)} bytes")
        (d / "SOURCE").write_text(f"{repo} at commit {commit}\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
