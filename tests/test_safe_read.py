"""Issue 10 item 8: MCP reads and grep never block on a FIFO swapped in after indexing, refuse
non-regular files and cap the bytes they read. Real FIFOs, a real index, the real Service."""

from __future__ import annotations

import os
import threading

import pytest

from askrepo.errors import UsageError
from askrepo.grep import grep_index
from askrepo.indexer import index_repo
from askrepo.mcp_server import Service
from askrepo.safe_read import UnsafeFileError, read_regular
from askrepo.store import open_index
from tests.fakes import FakeEmbedder


def _finishes(fn, fifo) -> object:
    """Run fn in a thread; if it blocks (old behaviour: open() on a FIFO waits for a writer),
    release it by opening the FIFO for writing, and fail."""
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail(f"{getattr(fn, '__name__', fn)} blocked on a FIFO")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value")


@pytest.fixture
def swapped(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def handler():\n    return 1\n")
    (root / "b.py").write_text("handler = 2\n")
    index_repo(root, embedder=FakeEmbedder())
    (root / "a.py").unlink()
    os.mkfifo(root / "a.py")  # swapped in after indexing
    return root


def test_mcp_reads_refuse_a_fifo_without_blocking(swapped):
    svc = Service([swapped])
    fifo = swapped / "a.py"
    with pytest.raises(UsageError, match="not a regular file.*FIFO"):
        _finishes(lambda: svc.read_file("a.py"), fifo)
    with pytest.raises(UsageError, match="not a regular file.*FIFO"):
        _finishes(lambda: svc.get_file_context("a.py", 1), fifo)
    assert svc.read_file("b.py")["content"].endswith("handler = 2")


def test_grep_skips_a_fifo_without_blocking(swapped):
    store = open_index(swapped)
    res = _finishes(lambda: grep_index(store, "handler", literal=True), swapped / "a.py")
    assert [(m.path, m.line) for m in res.matches] == [("b.py", 1)]
    assert res.files_searched == 1 and not res.timed_out


def test_reads_are_capped(tmp_path, monkeypatch):
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    index_repo(root, embedder=FakeEmbedder())
    (root / "a.py").write_text("x = 1\n" + "y = 2\n" * 50_000)  # grew to 300 KB
    monkeypatch.setenv("ASKREPO_MAX_FILE_BYTES", "100000")
    with pytest.raises(UsageError, match="over the 100,000-byte limit"):
        Service([root]).read_file("a.py")
    assert grep_index(open_index(root), "y = 2", literal=True).matches == []


def test_read_regular_hand_worked(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"abc")
    assert read_regular(f, 3) == b"abc"
    with pytest.raises(UnsafeFileError, match="over the 2-byte limit"):
        read_regular(f, 2)
    with pytest.raises(UnsafeFileError, match="a directory"):
        read_regular(tmp_path, 10)
    os.symlink(f, tmp_path / "link")
    with pytest.raises(UnsafeFileError, match="symlink"):
        read_regular(tmp_path / "link", 10)
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 10)
