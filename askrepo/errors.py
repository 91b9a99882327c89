"""Exceptions raised by the library (the CLI turns them into one-line messages), and the checks
of user-given numbers that raise them, shared by the CLI, web and MCP shells."""

import re


class AskrepoError(Exception):
    """Base class: the message is a complete, user-facing sentence that says how to fix it."""

    exit_code = 1


class UsageError(AskrepoError):
    """Bad input from the user (path, option, query)."""

    exit_code = 2


class NoIndexError(AskrepoError):
    exit_code = 2


class IndexIncompatibleError(AskrepoError):
    """The index was built by another schema/chunker version or is damaged. ``reason`` is the
    message without its fix ("— run `askrepo index --rebuild`"): what a run that rebuilds
    anyway reports."""

    exit_code = 2

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason or message


class IndexLockedError(AskrepoError):
    exit_code = 3


class ModelUnavailableError(AskrepoError):
    """A model (embedding or LLM) cannot be loaded here, e.g. it needs a download from a hub."""

    exit_code = 4


class BackendError(AskrepoError):
    """An LLM backend failed (server down, model not pulled)."""

    exit_code = 4


def shell_arg(value: object) -> str:
    """A path as it must be typed in a suggested command (`run \\`askrepo index PATH\\``): a
    repository under `~/my code` is `'/home/me/my code'`; a plain path stays as it is."""
    import shlex

    return shlex.quote(str(value))


def whole_number(raw: object) -> int | None:
    """``raw`` as a whole number: an int (not a bool), or ASCII digits with an optional sign
    and blanks around them (a query parameter, a field of a JSON file); None for anything
    else, which the caller reports in its own words."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and len(raw) < 4000 and re.fullmatch(r"\s*[+-]?[0-9]+\s*", raw):
        return int(raw)
    return None


def at_least(name: str, value: int, lo: int, hi: int | None = None) -> int:
    """``value`` if at least ``lo`` (else UsageError naming ``name``), cut to ``hi`` (``None``:
    kept, so a later message names the number that was asked for)."""
    if value < lo:
        raise UsageError(f"{name} must be at least {lo} (got {value})")
    return value if hi is None else min(value, hi)
