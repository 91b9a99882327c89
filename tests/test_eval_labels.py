"""The gold locations of askrepo's own eval set (eval/queries.json) must name code that exists.

Every expected ``path`` must be a file of this repository and every expected ``symbol`` must be
a definition the real chunker finds in it (a chunk whose symbol equals it or ends with
``.symbol``, the hit rule of ``askrepo eval``). When code is moved or renamed, this test fails
and names the stale labels, instead of the eval scores silently dropping.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from askrepo.chunker import chunk_text
from askrepo.evaluate import load_queries
from askrepo.ingest import detect_language
from askrepo.lines import split_lines

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "eval" / "queries.json"


@cache
def _file_symbols(root: Path, path: str) -> tuple[int, frozenset[str]] | None:
    """(line count, chunk symbols) of ``root/path`` as the indexer chunks it; None if missing."""
    full = root / path
    if not full.is_file():
        return None
    text = full.read_text(encoding="utf-8-sig", errors="replace")
    language = detect_language(path, text[:4096].encode("utf-8", "replace"))
    chunks = chunk_text(path, text, language)
    return len(split_lines(text)), frozenset(c.symbol for c in chunks if c.symbol)


def _defines(symbols: frozenset[str], target: str) -> bool:
    return any(s == target or s.endswith("." + target) for s in symbols)


def stale_labels(queries: list[dict], root: Path) -> list[str]:
    """One line per problem in a question list (askrepo format), empty when all labels hold."""
    problems: list[str] = []
    ids = [q.get("id") for q in queries]
    problems += [f"{i}: duplicate id" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for q in queries:
        qid = q.get("id")
        expected = q.get("expected") or []
        if q.get("absent"):
            if expected:
                problems.append(f"{qid}: absent question with expected locations")
            continue
        if not expected:
            problems.append(f"{qid}: no expected location (mark it absent, or add one)")
        for e in expected:
            path = e["path"]
            found = _file_symbols(root, path)
            if found is None:
                problems.append(f"{qid}: {path} does not exist")
                continue
            n_lines, symbols = found
            if e.get("symbol") and not _defines(symbols, e["symbol"]):
                problems.append(f"{qid}: {path} defines no {e['symbol']!r}")
            start = e.get("start_line")
            if start is not None:
                end = e.get("end_line", start)
                if not 1 <= start <= end <= n_lines:
                    problems.append(f"{qid}: {path} has no lines {start}-{end} ({n_lines} lines)")
    return problems


def test_every_gold_location_of_the_askrepo_eval_set_exists():
    queries = json.loads(QUERIES.read_text(encoding="utf-8"))
    assert len(queries) >= 50
    # askrepo eval reads it the same way (format, absent flags)
    parsed = load_queries(QUERIES)
    assert [q.id for q in parsed] == [q["id"] for q in queries]
    assert [q.absent for q in parsed] == [bool(q.get("absent")) for q in queries]
    problems = stale_labels(queries, ROOT)
    assert not problems, "stale labels in eval/queries.json:\n" + "\n".join(problems)


def test_stale_labels_are_reported(tmp_path):
    """The check itself fails on each kind of stale label (a test that cannot fail is a defect)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text(
        "from other import detect_scope\n\n\n"
        "def research():\n    return 1\n\n\n"
        "class Retriever:\n    def search(self):\n        return detect_scope()\n"
    )
    (tmp_path / "guide.md").write_text("# Guide\n\n## Setup\n\nRun it.\n")
    good = [
        {"id": "a", "expected": [{"path": "pkg/mod.py", "symbol": "search"}]},
        {"id": "b", "expected": [{"path": "pkg/mod.py", "symbol": "Retriever.search"}]},
        {"id": "c", "expected": [{"path": "guide.md", "symbol": "Setup"}]},
        {"id": "d", "expected": [{"path": "pkg/mod.py", "start_line": 4, "end_line": 5}]},
        {"id": "e", "expected": [], "absent": True},
    ]
    assert stale_labels(good, tmp_path) == []

    bad = [
        # imported and called, but defined elsewhere (the old `retriever.py::detect_scope`)
        {"id": "moved", "expected": [{"path": "pkg/mod.py", "symbol": "detect_scope"}]},
        {"id": "suffix", "expected": [{"path": "pkg/mod.py", "symbol": "arch"}]},
        {"id": "split", "expected": [{"path": "pkg/store.py", "symbol": "IndexWriter"}]},
        {"id": "heading", "expected": [{"path": "guide.md", "symbol": "Install"}]},
        {"id": "lines", "expected": [{"path": "pkg/mod.py", "start_line": 9, "end_line": 40}]},
        {"id": "empty", "expected": []},
        {"id": "absent", "expected": [{"path": "pkg/mod.py"}], "absent": True},
        {"id": "moved", "expected": [{"path": "pkg/mod.py"}]},
    ]
    assert stale_labels(bad, tmp_path) == [
        "moved: duplicate id",
        "moved: pkg/mod.py defines no 'detect_scope'",
        "suffix: pkg/mod.py defines no 'arch'",
        "split: pkg/store.py does not exist",
        "heading: guide.md defines no 'Install'",
        "lines: pkg/mod.py has no lines 9-40 (10 lines)",
        "empty: no expected location (mark it absent, or add one)",
        "absent: absent question with expected locations",
    ]
