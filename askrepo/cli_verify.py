"""``askrepo verify``: does a ``path:start-end[@commit]`` citation still hold in the work tree?

Registered by askrepo.cli as ``app.command("verify")(friendly(verify))``. Prints one JSON object
per citation (one per line); exit 0 when every citation is ``valid``, 1 otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def verify(
    citations: Annotated[
        list[str],
        typer.Argument(
            help="One or more citations: path:start-end, optionally @commit "
            "(e.g. src/app.py:10-24@3f2c1ab).",
            show_default=False,
        ),
    ],
    hash_: Annotated[
        str | None,
        typer.Option(
            "--hash",
            help="The citation's hash of the cited lines (from `ask --json`); with one citation.",
        ),
    ] = None,
    repo: Annotated[
        Path | None,
        typer.Option("--repo", help="Repository root (default: git top-level of the current dir)."),
    ] = None,
) -> None:
    """Check citations against the working tree: valid, moved (new lines given), changed or gone.

    The cited lines are read from the citation's @commit with git; without a commit, the
    lines are judged by their --hash alone, else read from the indexed commit (or HEAD when
    the repo has no index).
    """
    from .cli import default_repo
    from .errors import UsageError
    from .verify import VALID, verify_citation

    if hash_ is not None and len(citations) != 1:
        raise UsageError("--hash goes with one citation — verify the others in separate calls")
    root = default_repo(repo)
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory — pass --repo PATH of a repository")
    default = indexed_commit(root)
    results = [
        verify_citation(root, _from_cwd(root, c), expected_hash=hash_, default_commit=default)
        for c in citations
    ]
    for r in results:
        print(json.dumps(r.to_dict(), ensure_ascii=False))
    if any(r.status != VALID for r in results):
        raise typer.Exit(1)


def _from_cwd(root: Path, citation: str) -> str:
    """The citation with its path made repo-relative when it was given relative to the current
    directory (``compress.go:51-60`` from ``middleware/``), as ``askrepo why`` reads paths."""
    import re

    from .cli_history import _repo_relative

    m = re.fullmatch(r"(.+?)(:\d+(?:-\d+)?(?:@\S+)?)", citation.strip())
    if not m:
        return citation  # verify_citation says what is wrong with it
    return _repo_relative(root, m.group(1)) + m.group(2)


def indexed_commit(root: Path) -> str | None:
    """The commit the repo's index was built at, or None (no index, or not a git repo)."""
    from .errors import AskrepoError
    from .store import open_index

    try:
        return open_index(root).meta().commit
    except AskrepoError:
        return None
