"""The dev questions asked of whole git repositories instead of registry packages (by hand).

    python benchmarks/full_repos.py --root ROOT [--clone [--url URL_PATTERN]] -o OUT

The dev corpora (eval/dev/) are what a registry ships: mostly a library's own source. The
held-out benchmark indexes repositories as they are on GitHub — tests, docs, examples,
benchmarks, build scripts, type stubs, vendored copies. For the projects below, whose
packaged version is a tag of their repository (or whose tag differs from the package only in
the corpus's own files: ``overlay``), this writes OUT/manifest.json and OUT/short/manifest.json
with the dev questions (eval/dev/ and eval/dev/short/) whose target paths are mapped into the
checkout ROOT/<dir>, after checking that every target file exists there and, where the
target names lines, is byte-identical to the corpus's (exit 1 otherwise, unless
``--allow-diff``).

``--clone`` first clones each repository (``URL_PATTERN``, default
``https://github.com/{repo}.git``; ``{owner}`` and ``{name}`` are also filled) into
ROOT/<dir> and checks out its tag; ``overlay`` then copies the corpus's files
(``$ASKREPO_CORPORA/dev/<project>/<path>``, from ``benchmarks/fetch_dev_corpora.sh``) over
the checkout. Nothing fetched is committed. Index each ROOT/<dir> (``askrepo index``), then:

    askrepo eval --manifest OUT/manifest.json -c hybrid+scope -k 10 --json
    PYTHONPATH=. python benchmarks/dump_candidates.py --manifest OUT/manifest.json -o X.json

docs/eval.md ("Session 36") has the figures and what intruded.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

EVAL = Path(__file__).resolve().parents[1] / "eval" / "dev"

# project (eval/dev/<project>.json): GitHub repository, tag, checkout directory under ROOT,
# path map (corpus prefix -> repository prefix; first match wins), corpus paths copied over
PROJECTS: list[dict] = [
    {"project": "axios", "repo": "axios/axios", "ref": "v1.7.9"},
    {"project": "rich", "repo": "Textualize/rich", "ref": "v13.9.4"},
    {"project": "httpx", "repo": "encode/httpx", "ref": "0.28.1"},
    {"project": "hyper", "repo": "hyperium/hyper", "ref": "v0.14.19"},
    {"project": "thor", "repo": "rails/thor", "ref": "v1.2.1"},
    {"project": "echo", "repo": "labstack/echo", "ref": "v4.2.1"},
    {"project": "monolog", "repo": "Seldaek/monolog", "ref": "2.9.1"},
    {"project": "spdlog", "repo": "gabime/spdlog", "ref": "v1.10.0"},
    {"project": "urfave-cli", "repo": "urfave/cli", "ref": "v2.3.0", "map": [("v2/", "")]},
    {
        "project": "mustermann",
        "repo": "sinatra/mustermann",
        "ref": "v3.0.0",
        "map": [("lib/", "mustermann/lib/")],
    },
    {"project": "rxjs", "repo": "ReactiveX/rxjs", "ref": "7.8.1"},
    {"project": "faraday", "repo": "lostisland/faraday", "ref": "v1.1.0"},
    {"project": "gorilla-mux", "repo": "gorilla/mux", "ref": "v1.8.0"},
    {
        "project": "tower",
        "repo": "tower-rs/tower",
        "ref": "tower-0.4.13",
        "map": [("src/", "tower/src/"), ("Cargo.toml", "tower/Cargo.toml")],
    },
    {"project": "http-rs", "repo": "hyperium/http", "ref": "v0.2.7"},
    {"project": "cli11", "repo": "CLIUtils/CLI11", "ref": "v2.1.2"},
    {"project": "kramdown", "repo": "gettalong/kramdown", "ref": "REL_2_4_0"},
    {
        "project": "capacitor-android",
        "repo": "ionic-team/capacitor",
        "ref": "6.2.0",
        "dir": "capacitor",
        "map": [("src/main/java/", "android/capacitor/src/main/java/")],
    },
    {
        "project": "capacitor-ios",
        "repo": "ionic-team/capacitor",
        "ref": "6.2.0",
        "dir": "capacitor",
        "map": [("Capacitor/Capacitor/", "ios/Capacitor/Capacitor/")],
    },
    {
        "project": "tokio-util",
        "repo": "tokio-rs/tokio",
        "ref": "tokio-util-0.7.3",
        "map": [("src/", "tokio-util/src/"), ("Cargo.toml", "tokio-util/Cargo.toml")],
    },
    {
        "project": "rustls",
        "repo": "rustls/rustls",
        "ref": "v/0.20.8",
        "map": [("src/", "rustls/src/"), ("Cargo.toml", "rustls/Cargo.toml")],
    },
    {"project": "penlight", "repo": "lunarmodules/Penlight", "ref": "1.13.1"},
    {
        "project": "rn-ble-plx",
        "repo": "dotintent/react-native-ble-plx",
        "ref": "v3.5.1",
        "map": [("java/", "android/src/main/java/")],
    },
    # Brotli 1.2.1 (PyPI) is not tagged: v1.2.0's repository with the package's c/ over it
    {"project": "brotli", "repo": "google/brotli", "ref": "v1.2.0", "overlay": ["c"]},
    # c-ares 1.34.9 (bundled in pycares 5.2.1) is not tagged: v1.34.8 with its sources over it
    {
        "project": "c-ares",
        "repo": "c-ares/c-ares",
        "ref": "v1.34.8",
        "overlay": ["src/lib", "include"],
    },
]


def map_path(path: str, rules: list[tuple[str, str]]) -> str:
    """A corpus path as the repository spells it: the first rule whose prefix matches.

    >>> map_path("v2/app.go", [("v2/", "")])
    'app.go'
    >>> map_path("lib/x.rb", [("lib/", "mustermann/lib/")])
    'mustermann/lib/x.rb'
    """
    for a, b in rules:
        if path.startswith(a):
            return b + path[len(a) :]
    return path


def clone(p: dict, root: Path, url: str) -> None:
    dest = root / p.get("dir", p["project"])
    if dest.exists():
        return
    owner, name = p["repo"].split("/")
    src = url.format(repo=p["repo"], owner=owner, name=name)
    subprocess.run(["git", "clone", "-q", "--no-checkout", src, str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", p["ref"]], check=True)


def overlay(p: dict, root: Path, corpora: Path) -> None:
    for sub in p.get("overlay", []):
        src, dst = corpora / p["project"] / sub, root / p.get("dir", p["project"]) / sub
        if not src.exists():
            sys.exit(f"full_repos: {src} missing — run benchmarks/fetch_dev_corpora.sh first")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)


def convert(p: dict, src: Path, dst: Path, root: Path, corpora: Path) -> tuple[int, list[str]]:
    """Write one project's questions with mapped paths; (targets, missing or differing files)."""
    rules = [tuple(r) for r in p.get("map", [])]
    repo = root / p.get("dir", p["project"])
    questions = json.loads(src.read_text(encoding="utf-8"))
    n, bad = 0, []

    def one(t):
        nonlocal n
        path = t if isinstance(t, str) else t["path"]
        new = map_path(path, rules)
        a, b = corpora / p["project"] / path, repo / new
        n += 1
        lines = not isinstance(t, str) and "start_line" in t
        if not b.is_file() or (lines and not filecmp.cmp(a, b, shallow=False)):
            bad.append(new)
        return new if isinstance(t, str) else {**t, "path": new}

    for q in questions:
        for key in ("relevant", "secondary"):
            q[key] = [one(t) for t in q.get(key, [])]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(json.dumps(questions, indent=1) + "\n", encoding="utf-8")
    return n, sorted(set(bad))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, required=True, help="directory of the checkouts")
    ap.add_argument("-o", "--out", type=Path, required=True, help="where manifests go")
    ap.add_argument("--clone", action="store_true", help="clone and check out missing ones")
    ap.add_argument("--url", default="https://github.com/{repo}.git", help="clone URL pattern")
    ap.add_argument("--only", nargs="*", default=None, help="these projects only")
    ap.add_argument("--allow-diff", action="store_true", help="write even if targets differ")
    args = ap.parse_args()
    corpora = Path(os.path.expandvars(os.environ.get("ASKREPO_CORPORA", "/work/.corpora"))) / "dev"
    root = args.root.resolve()
    chosen = [p for p in PROJECTS if args.only is None or p["project"] in args.only]
    failed = False
    for sub, out in (("", args.out), ("short", args.out / "short")):
        manifest = json.loads((EVAL / sub / "manifest.json").read_text(encoding="utf-8"))
        by_project = {r["corpus_dir"]: r for r in manifest["repos"]}
        repos = []
        for p in chosen:
            if not sub:
                if args.clone:
                    clone(p, root, args.url)
                overlay(p, root, corpora)
            entry = by_project[p["project"]]
            n, bad = convert(
                p, EVAL / sub / entry["queries"], out / entry["queries"], root, corpora
            )
            print(f"{sub or 'dev'}/{p['project']}: {n} targets, {len(bad)} differ {bad[:3]}")
            failed |= bool(bad)
            repos.append({**entry, "repo": str(root / p.get("dir", p["project"]))})
        doc = {"source": "benchmarks/full_repos.py", "repos": repos}
        (out / "manifest.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if failed and not args.allow_diff:
        sys.exit("full_repos: some target files differ from the corpus (see above)")


if __name__ == "__main__":
    main()
