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

# project (eval/dev/<project>.json), GitHub repository, tag, then options: dir= the checkout's
# directory under ROOT (default: the project), prefix= what the repository puts before every
# corpus path, strip= a corpus prefix the repository does not have, overlay= corpus paths
# copied over the checkout (at their mapped paths). Brotli 1.2.1 (PyPI) and c-ares 1.34.9
# (bundled in pycares 5.2.1) are not tagged, nor marshmallow 3.26.1 and mobx 7.1.3 in the
# snapshots used here: the nearest tag, with their sources over it.
TABLE = """
axios              axios/axios                     v1.7.9
rich               Textualize/rich                 v13.9.4
httpx              encode/httpx                    0.28.1
hyper              hyperium/hyper                  v0.14.19
thor               rails/thor                      v1.2.1
echo               labstack/echo                   v4.2.1
monolog            Seldaek/monolog                 2.9.1
spdlog             gabime/spdlog                   v1.10.0
urfave-cli         urfave/cli                      v2.3.0            strip=v2/
mustermann         sinatra/mustermann              v3.0.0            prefix=mustermann/
rxjs               ReactiveX/rxjs                  7.8.1
faraday            lostisland/faraday              v1.1.0
gorilla-mux        gorilla/mux                     v1.8.0
tower              tower-rs/tower                  tower-0.4.13      prefix=tower/
http-rs            hyperium/http                   v0.2.7
cli11              CLIUtils/CLI11                  v2.1.2
kramdown           gettalong/kramdown              REL_2_4_0
capacitor-android  ionic-team/capacitor            6.2.0  dir=capacitor prefix=android/capacitor/
capacitor-ios      ionic-team/capacitor            6.2.0  dir=capacitor prefix=ios/
tokio-util         tokio-rs/tokio                  tokio-util-0.7.3  prefix=tokio-util/
rustls             rustls/rustls                   v/0.20.8          prefix=rustls/
penlight           lunarmodules/Penlight           1.13.1
rn-ble-plx         dotintent/react-native-ble-plx  v3.5.1            prefix=android/src/main/
brotli             google/brotli                   v1.2.0            overlay=c
c-ares             c-ares/c-ares                   v1.34.8           overlay=src/lib,include
marshmallow        marshmallow-code/marshmallow    3.23.0   prefix=src/  overlay=marshmallow
mobx               mobxjs/mobx                     mobx@7.0.3  prefix=packages/mobx/  overlay=src
"""


def parse_row(line: str) -> dict:
    """One row of TABLE as a dict; ``prefix`` and ``strip`` become ``map_path`` rules.

    >>> parse_row("tower  tower-rs/tower  tower-0.4.13  prefix=tower/")["map"]
    [('', 'tower/')]
    >>> parse_row("cli  urfave/cli  v2.3.0  strip=v2/")["map"]
    [('v2/', '')]
    >>> parse_row("brotli  google/brotli  v1.2.0  overlay=c,d")["overlay"]
    ['c', 'd']
    """
    project, repo, ref, *options = line.split()
    row: dict = {"project": project, "repo": repo, "ref": ref, "dir": project}
    for opt in options:
        key, _, value = opt.partition("=")
        if key == "prefix":
            row["map"] = [("", value)]
        elif key == "strip":
            row["map"] = [(value, "")]
        elif key == "overlay":
            row["overlay"] = value.split(",")
        else:
            row[key] = value
    return row


PROJECTS: list[dict] = [parse_row(line) for line in TABLE.strip().splitlines()]


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
    dest = root / p["dir"]
    if dest.exists():
        return
    owner, name = p["repo"].split("/")
    src = url.format(repo=p["repo"], owner=owner, name=name)
    try:
        subprocess.run(["git", "clone", "-q", "--no-checkout", src, str(dest)], check=True)
        subprocess.run(["git", "-C", str(dest), "checkout", "-q", p["ref"]], check=True)
    except subprocess.CalledProcessError:
        sys.exit(f"full_repos: could not clone {src} at {p['ref']} into {dest} — check --url")


def overlay(p: dict, root: Path, corpora: Path) -> None:
    rules = [tuple(r) for r in p.get("map", [])]
    for sub in p.get("overlay", []):
        src, dst = corpora / p["project"] / sub, root / p["dir"] / map_path(sub, rules)
        if not src.exists():
            sys.exit(f"full_repos: {src} missing — run benchmarks/fetch_dev_corpora.sh first")
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)


def convert(p: dict, src: Path, dst: Path, root: Path, corpora: Path) -> tuple[int, list[str]]:
    """Write one project's questions with mapped paths; (targets, missing or differing files)."""
    rules = [tuple(r) for r in p.get("map", [])]
    repo = root / p["dir"]
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
    for p in chosen:
        if not (corpora / p["project"]).is_dir():
            sys.exit(
                f"full_repos: no corpus {corpora / p['project']} — run "
                "benchmarks/fetch_dev_corpora.sh first (or set ASKREPO_CORPORA)"
            )
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
            repos.append({**entry, "repo": str(root / p["dir"])})
        doc = {"source": "benchmarks/full_repos.py", "repos": repos}
        (out / "manifest.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if failed and not args.allow_diff:
        sys.exit("full_repos: some target files differ from the corpus (see above)")


if __name__ == "__main__":
    main()
