"""Secret redaction measured against detect-secrets (run by hand, not a test).

    .venv/bin/python benchmarks/bench_secrets.py [--before REF]

Fixture: tests/data/secrets_bench.jsonl — real-looking secrets (one per case: keyword
assignments quoted and unquoted in code and config files, cloud and service keys, private
keys, URL passwords, high-entropy values) and ordinary code and config that is not secret
(environment lookups, hashes in lock files, UUIDs, placeholders, ...). Plus the ordinary code
of Click 8.4.1 (src/) as a false-alarm corpus.

* askrepo: a secret is *caught* when its value is gone from ``redact(text, path)``; a
  non-secret case is a *false alarm* when ``redact`` changes it at all.
* detect-secrets 1.5.0 (``pip install detect-secrets==1.5.0``, dev only): each case is written
  to a file with its path and scanned with ``scan_file`` (its default filters on) for each
  detector group; a secret case is caught when the group reports anything in it, a non-secret
  case is a false alarm when it does.

With ``--before REF`` askrepo's numbers are also computed for the ``askrepo`` package of git ref
REF (extracted to a temporary directory), for a before/after comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "data" / "secrets_bench.jsonl"

GROUPS = {
    "keyword": ["KeywordDetector"],
    "high-entropy": ["Base64HighEntropyString", "HexHighEntropyString"],
    "cloud keys": [
        "AWSKeyDetector",
        "AzureStorageKeyDetector",
        "IbmCloudIamDetector",
        "IbmCosHmacDetector",
        "SoftlayerDetector",
    ],
    "private keys": ["PrivateKeyDetector"],
}

CHILD = r"""
import inspect, json, sys
from pathlib import Path
from askrepo.secrets import redact
cases = [json.loads(l) for l in Path(sys.argv[1]).read_text().splitlines() if l.strip()]
takes_path = "path" in inspect.signature(redact).parameters
out = []
for c in cases:
    text = redact(c["text"], path=c["path"])[0] if takes_path else redact(c["text"])[0]
    out.append(text)
corpus = []
for p in sorted(Path(sys.argv[2]).rglob("*.py")):
    rel = p.relative_to(sys.argv[2]).as_posix()
    t = p.read_text("utf-8", "replace")
    r = redact(t, path=rel)[0] if takes_path else redact(t)[0]
    corpus.append(sum(a != b for a, b in zip(t.split("\n"), r.split("\n"))))
print(json.dumps({"texts": out, "corpus_lines": sum(corpus)}))
"""


def _cases() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text("utf-8").splitlines() if line.strip()]


def _askrepo(pkg_parent: Path, corpus: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(pkg_parent))
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(FIXTURE), str(corpus)],
        env=env,
        cwd=pkg_parent,  # python -c puts the cwd first on sys.path
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def _score_askrepo(cases: list[dict], texts: list[str]) -> dict:
    caught, missed, false = [], [], []
    for c, t in zip(cases, texts, strict=True):
        if c["secret"] is None:
            if t != c["text"]:
                false.append(c["id"])
        elif c["secret"] in t:
            missed.append(c["id"])
        else:
            caught.append(c["id"])
    return {"caught": caught, "missed": missed, "false": false}


def _detect_secrets(cases: list[dict], plugins: list[str], corpus: Path) -> dict:
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import transient_settings

    cfg = {"plugins_used": [{"name": p} for p in plugins]}
    caught, missed, false = [], [], []
    corpus_lines = 0
    with tempfile.TemporaryDirectory() as tmp, transient_settings(cfg):
        for c in cases:
            path = Path(tmp) / c["id"] / c["path"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(c["text"], "utf-8")
            found = list(scan_file(str(path)))
            if c["secret"] is None:
                if found:
                    false.append(c["id"])
            elif found:
                caught.append(c["id"])
            else:
                missed.append(c["id"])
        for p in sorted(corpus.rglob("*.py")):
            corpus_lines += len({s.line_number for s in scan_file(str(p))})
    return {"caught": caught, "missed": missed, "false": false, "corpus_lines": corpus_lines}


def _extract(ref: str, dest: Path) -> Path:
    tar = subprocess.run(
        ["git", "archive", "--format=tar", ref, "askrepo"], cwd=ROOT, capture_output=True
    )
    if tar.returncode != 0:
        sys.exit(f"git archive {ref} failed: {tar.stderr.decode().strip()}")
    (dest / "t.tar").write_bytes(tar.stdout)
    with tarfile.open(dest / "t.tar") as t:
        t.extractall(dest, filter="data")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="git ref of the askrepo package to compare with")
    ap.add_argument("--details", action="store_true", help="list the missed and false cases")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from click_corpus import click_src

    corpus = click_src(skip=False) / "src"
    cases = _cases()
    n_sec = sum(c["secret"] is not None for c in cases)
    n_ok = len(cases) - n_sec
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        trees = [("askrepo (this tree)", ROOT)]
        if args.before:
            trees.insert(
                0, (f"askrepo before ({args.before[:10]})", _extract(args.before, Path(tmp)))
            )
        for name, tree in trees:
            res = _askrepo(tree, corpus)
            score = _score_askrepo(cases, res["texts"])
            rows.append((name, score, res["corpus_lines"]))
    for group, plugins in [*GROUPS.items(), ("all four groups", sum(GROUPS.values(), []))]:
        score = _detect_secrets(cases, plugins, corpus)
        rows.append((f"detect-secrets: {group}", score, score["corpus_lines"]))
    print(f"fixture: {n_sec} secrets, {n_ok} non-secret cases; corpus: Click 8.4.1 src/*.py\n")
    print("| detector | caught | missed | false alarms (cases) | Click lines flagged |")
    print("|---|---:|---:|---:|---:|")
    for name, s, corpus_lines in rows:
        print(
            f"| {name} | {len(s['caught'])}/{n_sec} | {len(s['missed'])} | "
            f"{len(s['false'])}/{n_ok} | {corpus_lines} |"
        )
    if args.details:
        for name, s, _ in rows:
            print(f"\n{name}\n  missed: {', '.join(s['missed'])}\n  false: {', '.join(s['false'])}")


if __name__ == "__main__":
    main()
