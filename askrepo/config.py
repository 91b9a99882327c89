"""Paths and settings, all overridable by ASKREPO_* environment variables.

Every variable is documented in the README's Configuration section.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_EMBED_MODEL = "minilm"
DEFAULT_MAX_FILE_BYTES = 1024 * 1024


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() not in ("0", "false", "no", "off")


def home() -> Path:
    """Where indexes live (ASKREPO_HOME, default ~/.askrepo)."""
    return Path(os.environ.get("ASKREPO_HOME") or Path.home() / ".askrepo").expanduser()


def models_dir() -> Path:
    """Model cache (ASKREPO_MODELS, default ~/.cache/askrepo/models).

    Kept apart from ASKREPO_HOME so that tests and throwaway homes reuse converted models.
    """
    default = (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "askrepo" / "models"
    )
    return Path(os.environ.get("ASKREPO_MODELS") or default).expanduser()


def embed_model() -> str:
    return os.environ.get("ASKREPO_MODEL") or DEFAULT_EMBED_MODEL


def enrich() -> bool:
    """Embed a header (path, symbol, signature) before the code (ASKREPO_ENRICH, default on)."""
    return _flag("ASKREPO_ENRICH", True)


def enrich_setting() -> bool | None:
    """ASKREPO_ENRICH as set by the user, or None when it is not set."""
    raw = os.environ.get("ASKREPO_ENRICH")
    return None if raw is None or raw.strip() == "" else enrich()


def max_file_bytes() -> int:
    raw = os.environ.get("ASKREPO_MAX_FILE_BYTES")
    return int(raw) if raw else DEFAULT_MAX_FILE_BYTES


def exclude_tests() -> bool:
    return _flag("ASKREPO_EXCLUDE_TESTS", True)


def exclude_docs() -> bool:
    return _flag("ASKREPO_EXCLUDE_DOCS", True)


def top_k() -> int:
    return int(os.environ.get("ASKREPO_TOPK") or 8)
