"""Quality of `askrepo search --history` on a project's own changelog (by hand, not a test).

    .venv/bin/python benchmarks/bench_history_quality.py --repo WORKTREE --owner pallets \\
        --project click [--modes hybrid,rrf,dense,fts] [--k 10] [--model minilm] [--out rows.json]

A changelog describes each change in words written apart from the commit message, for users
("`confirm()` strips ANSI codes from the prompt when the output does not support them"). Each
entry of the changelog at HEAD (``CHANGES*`` / ``CHANGELOG*``; one bullet, with its
continuation lines) that names an issue or pull request becomes one question: **query** = the
entry's text with the references removed and roles unwrapped (``{class}`Path``` → ``Path``),
at most 600 characters; **gold** = the commits of that change:

- the oldest commit that added the reference to the changelog (the projects this was built
  for add the entry with the code, as `bugs_from_changelog.py` relies on), unless it changed
  nothing but the changelog or added more than five references (a changelog rewrite), and
- for each pull request it names: the commits of a squash merge whose subject ends in
  ``(#N)``, or the commits a ``Merge pull request #N`` brought in.

Only gold commits the history index holds count (merges and skipped commits are not in it);
entries with none, or of fewer than four words, are left out. ``--repo`` must be a work tree
(``git clone`` of a fetched git directory); its history is indexed (``index_history``,
incremental) with the real embedding model into ``ASKREPO_HOME``. Modes: ``hybrid`` (the
default search: min-max score fusion), ``rrf`` (hybrid, reciprocal rank fusion), ``dense``,
``fts``. Every question is searched in
each mode; a question counts at the rank of the first gold commit: Acc@1, Acc@5, Acc@10 and
MRR@10, and hybrid against each other mode paired on Acc@5 (exact McNemar). Deterministic for
a given history.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bugs_from_changelog import CHANGELOGS, git  # noqa: E402 (this script's directory)

from askrepo.evaluate import mcnemar_exact, paired_counts  # noqa: E402
from askrepo.history import HistoryIndex, index_history  # noqa: E402

BULLET = re.compile(r"^(\s*)[-*+]\s+(\S.*)$")
# a reference as written: kind ("issue" / "pr"), number, and the text to look for in history
REF_ROLE = re.compile(r"(?:\{(issue|pr)\}|:(issue|pr):)`(\d+)`")
MERGE = re.compile(r"^Merge pull request #(\d+)\b")
SQUASH = re.compile(r"\(#(\d+)\)\s*$")


def entries(text: str) -> list[str]:
    """The changelog's bullets, each joined with its continuation lines (more indented, not a
    bullet). A nested bullet is an entry of its own."""
    out: list[list[str]] = []
    indent = -1
    for line in text.splitlines():
        m = BULLET.match(line)
        if m:
            out.append([m.group(2).strip()])
            indent = len(m.group(1))
        elif out and line.strip() and len(line) - len(line.lstrip()) > indent >= 0:
            out[-1].append(line.strip())
        else:
            indent = -1
    return [" ".join(e) for e in out]


def references(entry: str, owner: str, project: str) -> list[tuple[str, int, str]]:
    """(kind, number, history token) of each issue / pull request the entry names."""
    refs = [
        (m.group(1) or m.group(2), int(m.group(3)), f"`{m.group(3)}`")
        for m in REF_ROLE.finditer(entry)
    ]
    link = re.compile(r"github\.com/" + re.escape(f"{owner}/{project}") + r"/(issues|pull)/(\d+)")
    for m in link.finditer(entry):
        refs.append(("pr" if m.group(1) == "pull" else "issue", int(m.group(2)), m.group(0)))
    return refs


def clean(entry: str, owner: str, project: str) -> str:
    """The entry as a question: references removed, roles and links unwrapped."""
    s = REF_ROLE.sub("", entry)
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)  # [text](url)
    s = re.sub(r"`([^`<]*?)\s*<[^>]*>`_*", r"\1", s)  # rst `text <url>`_
    s = re.sub(r"https?://\S+", "", s)
    s = re.sub(r"\{\w+\}`([^`]*)`", r"`\1`", s)  # {class}`Path`
    s = re.sub(r":\w+:`~?([^`]*)`", r"`\1`", s)  # :func:`~click.echo`
    s = re.sub(r"``([^`]*)``", r"`\1`", s)
    s = re.sub(r"\s+", " ", s).strip(" ,;")
    return s[:600]


def pull_request_commits(g: Path) -> dict[int, set[str]]:
    """Non-merge commits of each pull request: squash merges by their ``(#N)`` subject, merge
    commits by the commits they brought in."""
    prs: dict[int, set[str]] = {}
    for line in git(g, "log", "--format=%H%x00%P%x00%s").splitlines():
        sha, parents, subject = line.split("\0", 2)
        ps = parents.split()
        if len(ps) == 2 and (m := MERGE.match(subject)):
            inside = git(g, "rev-list", "--no-merges", f"{ps[0]}..{ps[1]}").split()
            prs.setdefault(int(m.group(1)), set()).update(inside)
        elif len(ps) == 1 and (m := SQUASH.search(subject)):
            prs.setdefault(int(m.group(1)), set()).add(sha)
    return prs


def is_change(g: Path, sha: str) -> bool:
    """Whether the commit that added a changelog reference is the change itself: it touches a
    file besides the changelog, and adds at most five references (not a changelog rewrite such
    as "reformat changelog", nor a commit that only adds the entry or its PR number)."""
    files = git(g, "show", "--format=", "--name-only", sha).split()
    if all(f.rsplit("/", 1)[-1] in CHANGELOGS for f in files):
        return False
    diff = git(g, "show", "--format=", "-U0", sha, "--", *CHANGELOGS)
    added = [ln for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return (
        sum(len(REF_ROLE.findall(ln)) + ln.count("/issues/") + ln.count("/pull/") for ln in added)
        <= 5
    )


def build_cases(g: Path, owner: str, project: str) -> list[dict]:
    tracked = git(g, "ls-tree", "-r", "--name-only", "HEAD").split()
    names = [f for f in tracked if "/" not in f and re.match(r"CHANGES|CHANGELOG", f)]
    if not names:
        sys.exit(f"no CHANGES* / CHANGELOG* file at HEAD of {g}")
    text = git(g, "show", f"HEAD:{names[0]}")
    prs = pull_request_commits(g)
    added: dict[str, str | None] = {}
    cases = []
    for entry in entries(text):
        refs = references(entry, owner, project)
        query = clean(entry, owner, project)
        if not refs or len(query.split()) < 4:
            continue
        gold: set[str] = set()
        for kind, n, token in refs:
            if token not in added:
                log = git(g, "log", "--format=%H", "-S", token, "--", *CHANGELOGS).split()
                added[token] = log[-1] if log and is_change(g, log[-1]) else None
            if added[token]:
                gold.add(added[token])
            if kind == "pr":
                gold |= prs.get(n, set())
        if gold:
            cases.append({"query": query, "refs": [f"{k}#{n}" for k, n, _ in refs], "gold": gold})
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True, type=Path)
    ap.add_argument("--owner", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--modes", default="hybrid,rrf,dense,fts")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--model", default=None)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    repo = args.repo.resolve()
    summary = index_history(repo, model=args.model)
    print(f"history: {summary.to_dict().get('commits_indexed')} commits indexed", file=sys.stderr)
    idx = HistoryIndex.open(repo, model=args.model)
    indexed = {r["sha"] for r in idx.rows()}
    cases = []
    for c in build_cases(repo / ".git", args.owner, args.project):
        c["gold"] = sorted(c["gold"] & indexed)
        if c["gold"]:
            cases.append(c)
    print(f"{len(cases)} questions from the changelog of {repo.name}", file=sys.stderr)
    modes = args.modes.split(",")
    ranks: dict[str, list[int | None]] = {m: [] for m in modes}
    for c in cases:
        c["rank"] = {}
        for mode in modes:
            if mode == "rrf":  # hybrid, reciprocal rank fusion (the default until session 26)
                hits = idx.search(c["query"], k=args.k, mode="hybrid", fusion="rrf").hits
            else:
                hits = idx.search(c["query"], k=args.k, mode=mode).hits
            rank = next((h.rank for h in hits if h.sha in c["gold"]), None)
            ranks[mode].append(rank)
            c["rank"][mode] = rank
    n = len(cases)
    print(f"\n| mode ({repo.name}, {n} questions) | Acc@1 | Acc@5 | Acc@{args.k} | MRR@{args.k} |")
    print("|---|---:|---:|---:|---:|")
    for mode in modes:
        rs = ranks[mode]
        acc = [sum(r is not None and r <= t for r in rs) / n for t in (1, 5, args.k)]
        mrr = sum(1 / r for r in rs if r) / n
        print(f"| {mode} | {acc[0]:.3f} | {acc[1]:.3f} | {acc[2]:.3f} | {mrr:.3f} |")
    if "hybrid" in modes:
        base = [r is not None and r <= 5 for r in ranks["hybrid"]]
        for mode in modes:
            if mode == "hybrid":
                continue
            other = [r is not None and r <= 5 for r in ranks[mode]]
            b, c, _, _ = paired_counts(base, other)
            print(
                f"Acc@5 hybrid vs {mode}: {b} only hybrid, {c} only {mode}, "
                f"p = {mcnemar_exact(b, c):.3f}"
            )
    if args.out:
        args.out.write_text(json.dumps(cases, indent=1, default=sorted))


if __name__ == "__main__":
    main()
