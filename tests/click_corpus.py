"""The evaluation corpus: pallets/click 8.4.1's sdist, fetched with pip and cached.

``click_src()`` returns the extracted ``click-8.4.1`` directory (``src/click/*.py``, ``tests/``,
``docs/`` …), the tree the cases in /work/shared/eval/click are written against. It is cached
under ``<checkout>/.cache/click-8.4.1`` (git-ignored); the first call downloads ~300 KB from PyPI.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "8.4.1"
SDIST = f"click-{VERSION}.tar.gz"
SDIST_SHA256 = "918b5633eddf6b41c32d4f454bf0de810065c74e3f7dbf8ee5452f8be88d3e96"
CACHE = Path(__file__).resolve().parent.parent / ".cache"
# The shared, read-only eval data lies beside the checkout (../shared/eval), in CI too.
EVAL_DIR = (
    Path(os.environ.get("ASKREPO_EVAL_DIR") or CACHE.parent.parent / "shared" / "eval") / "click"
)


class CorpusUnavailable(RuntimeError):
    """pip could not fetch the sdist (no registry access) or it did not match the pinned hash."""


def in_ci() -> bool:
    """Whether this is a CI run (``CI=true``): a missing prerequisite fails, never skips."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing_prerequisite(reason: str) -> None:
    """Stop the calling test: fail under CI (a skipped check would hide a broken setup), skip
    locally with the reason."""
    import pytest

    if in_ci():
        pytest.fail(f"CI=true and a prerequisite is missing: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def _fail(reason: str, skip: bool) -> None:
    if skip:
        missing_prerequisite(f"Click {VERSION} corpus unavailable: {reason}")
    raise CorpusUnavailable(reason)


def click_src(*, skip: bool = True) -> Path:
    """The extracted ``click-8.4.1`` directory; downloads it once with pip.

    With ``skip`` (the default, for tests) a download failure skips the calling test with the
    reason (fails it when ``CI=true``); otherwise CorpusUnavailable is raised.
    """
    dest = CACHE / f"click-{VERSION}"
    if (dest / "src" / "click" / "core.py").is_file():
        return dest
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE, prefix=".click-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        cmd += [f"click=={VERSION}", "-d", tmp, "--quiet", "--disable-pip-version-check"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            _fail(f"could not run pip ({exc})", skip)
        sdist = Path(tmp) / SDIST
        if proc.returncode != 0 or not sdist.is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            _fail(f"`pip download click=={VERSION}` failed: {tail[0]}", skip)
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            _fail(f"{SDIST} has sha256 {digest}, expected {SDIST_SHA256}", skip)
        with tarfile.open(sdist) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # Python < 3.10.12 has no extraction filters
                tar.extractall(tmp)  # noqa: S202
        if dest.exists():  # a concurrent run won the race
            return dest
        try:
            os.replace(Path(tmp) / f"click-{VERSION}", dest)
        except OSError:
            if not dest.exists():
                raise
    return dest


def literal_cases(*, skip: bool = True) -> list[dict]:
    """The 18 grep-style cases (``click/literal_cases.jsonl``)."""
    path = EVAL_DIR / "literal_cases.jsonl"
    if not path.is_file():
        _fail(f"{path} not found (set ASKREPO_EVAL_DIR)", skip)
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def case_hit(case: dict, matches: list[dict]) -> bool:
    """Whether ``matches`` (dicts with path and line, ranked) pass the case at rank 1.

    A ``match`` case passes when the first match is in the gold line range; a ``no_match`` case
    when nothing is returned.
    """
    exp = case["expected"]
    if exp["outcome"] == "no_match":
        return not matches
    if not matches:
        return False
    top = matches[0]
    return top["path"] == exp["path"] and exp["line_min"] <= top["line"] <= exp["line_max"]
