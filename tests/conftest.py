"""Shared fixtures. Tests never touch the real user home."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Converted models are expensive to build; share them across test runs in a repo-local cache
# (git-ignored) instead of the user's ~/.cache, unless the caller chose a cache explicitly.
os.environ.setdefault("ASKREPO_MODELS", str(ROOT / ".cache" / "models"))
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _askrepo_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("askrepo-home")
    monkeypatch.setenv("ASKREPO_HOME", str(home))
    return home
