"""Build a bug-report case file (eval/bugs/PROJECT.json) from a project's git history.

    python benchmarks/bugs_from_changelog.py --git-dir DIR --project NAME --owner OWNER \
        [--src src/] [--n 40] [--max-files 3] > eval/bugs/NAME.json

The changelog at HEAD (``CHANGES*`` / ``CHANGELOG*``) names the issue each entry fixes
(``:issue:`1234```, ``{issue}`1234``` as the pallets projects write them, or a link
``https://github.com/OWNER/PROJECT/issues/1234``). For each issue, the oldest commit that
added that reference to the changelog is the fix: it changed the changelog and the code
together. A case keeps the fix's ``.py`` files under ``--src`` that exist in its parent (the
code the report was written against), when there are 1 to ``--max-files`` of them; ``--n``
cases are drawn at random (seed 0) and printed oldest first. Deterministic for a given git
history; the issue texts themselves are not part of it (eval/bugs/README.md).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from pathlib import Path

# the changelog's names over a project's history (click's CHANGES.rst became CHANGES.md)
CHANGELOGS = ("CHANGES.rst", "CHANGES.md", "CHANGES", "CHANGELOG.md", "CHANGELOG.rst", "CHANGELOG")


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True
    ).stdout


def from_changelog(g: Path, owner: str, project: str) -> list[tuple[int, str, int]]:
    """(issue, fix commit, commit time) for each issue the changelog at HEAD names."""
    tracked = git(g, "ls-tree", "-r", "--name-only", "HEAD").split()
    changelogs = [f for f in tracked if re.match(r"CHANGES|CHANGELOG", f)]
    if not changelogs:
        sys.exit(f"no CHANGES* / CHANGELOG* file at HEAD of {g}")
    text = git(g, "show", f"HEAD:{changelogs[0]}")
    # the reference as written, and the text to look for in the changelog's history
    ref = re.compile(
        r"(?:\{issue\}|:issue:)`(\d+)`|github\.com/"
        + re.escape(f"{owner}/{project}")
        + r"/issues/(\d+)\b"
    )
    issues: dict[int, str] = {}
    for m in ref.finditer(text):
        n = int(m.group(1) or m.group(2))
        issues.setdefault(n, f"`{n}`" if m.group(1) else f"/issues/{n}")
    fixes = []
    for n, token in issues.items():
        log = git(g, "log", "--format=%H %ct", "-S", token, "--", *CHANGELOGS)
        if log.strip():
            sha, ct = log.strip().splitlines()[-1].split()
            fixes.append((n, sha, int(ct)))
    return fixes


def from_fragments(g: Path, patterns: list[str]) -> list[tuple[int, str, int]]:
    """(issue, fix commit, commit time) from news fragments named after their issue
    (towncrier: ``news/1234.bugfix.rst``): the oldest commit that added a fragment of that
    number is the fix (the fragment is written in the same change as the code)."""
    log = git(g, "log", "--diff-filter=A", "--name-only", "--format=@%H %ct", "--", *patterns)
    fixes: dict[int, tuple[int, str, int]] = {}
    sha, ct = "", 0
    for line in log.splitlines():
        if line.startswith("@"):
            sha, t = line[1:].split()
            ct = int(t)
        elif m := re.match(r"(\d+)\.", line.rsplit("/", 1)[-1]):
            fixes[int(m.group(1))] = (int(m.group(1)), sha, ct)  # newest first: oldest wins
    return sorted(fixes.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True, type=Path)
    ap.add_argument("--project", required=True)
    ap.add_argument("--owner", required=True)
    ap.add_argument("--src", default="src/")
    ap.add_argument(
        "--fragments",
        nargs="+",
        help="git pathspecs of news fragments named after their issue, e.g. "
        "':(glob)news/*.bugfix.rst' (towncrier), instead of the changelog's references",
    )
    ap.add_argument("--exclude", default="", help="a path prefix under --src to leave out")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--max-files", type=int, default=3)
    args = ap.parse_args()
    g = args.git_dir
    fixes = (
        from_fragments(g, args.fragments)
        if args.fragments
        else from_changelog(g, args.owner, args.project)
    )
    found = []
    for n, sha, ct in fixes:
        changed = git(g, "show", "--format=", "--name-only", sha).split()
        src = [
            f
            for f in changed
            if f.startswith(args.src)
            and f.endswith(".py")
            and not (args.exclude and f.startswith(args.exclude))
        ]
        if src:
            found.append({"issue": n, "commit": sha, "time": ct, "files": src})
    random.seed(0)
    random.shuffle(found)
    cases = []
    for c in found:
        if len(c["files"]) > args.max_files:
            continue
        parent = git(g, "rev-parse", c["commit"] + "^").strip()
        at_parent = set(git(g, "ls-tree", "-r", "--name-only", parent).split())
        gold = [f for f in c["files"] if f in at_parent]
        if not gold:
            continue
        cases.append(
            {
                "issue": c["issue"],
                "url": f"https://github.com/{args.owner}/{args.project}/issues/{c['issue']}",
                "commit": c["commit"],
                "parent": parent,
                "time": c["time"],
                "gold": gold,
            }
        )
        if len(cases) == args.n:
            break
    cases.sort(key=lambda c: c["time"])
    print(json.dumps(cases, indent=1))


if __name__ == "__main__":
    main()
