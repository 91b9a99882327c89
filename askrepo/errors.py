"""Exceptions raised by the library. The CLI turns them into one-line messages."""


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
