"""Running askrepo's code at an older commit beside the working tree (for A/B benchmarks).

``extract(ref, dest)`` writes the ``askrepo`` package at ``ref`` under ``dest``;
``run_worker(worker, args, path, env)`` runs a ``python -c`` worker with ``path`` first on
``sys.path`` and returns the JSON object its last output line holds, after checking that it
imported the code under ``path`` (the worker reports ``askrepo.__file__`` as ``"code"``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def extract(ref: str, dest: str) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "askrepo"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "x", "-C", dest], input=archive, check=True)


def run_worker(worker: str, args: list[str], path: str, env: dict[str, str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", worker, *args],
        check=True,
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=path),
        cwd=path,  # python -c puts the cwd first on sys.path
    ).stdout
    r = json.loads(out.strip().splitlines()[-1])
    # each side must run its own code (before 2026-12-01 both ran the working tree when
    # started from the checkout: the cwd came first on sys.path)
    if not Path(r["code"]).resolve().is_relative_to(Path(path).resolve()):
        sys.exit(f"imported {r['code']}, not the code under {path}")
    return r
