"""Piece vectors: a chunk longer than the model's window is also embedded in later pieces, and
dense search scores it by the best of its vectors (``indexer.piece_texts``, ``store_writer``,
``store.dense`` / ``in_files``, ``Mirror.scores``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

from askrepo.datatypes import Chunk
from askrepo.evaluate import parse_config
from askrepo.indexer import index_repo, piece_texts
from askrepo.mirror import Mirror
from askrepo.retriever import Retriever, SearchOptions
from askrepo.store import META_FILE, _read_meta, _write_meta, open_index
from tests.fakes import FakeEmbedder
from tests.fixture_repo import run_cli


def _chunk(text: str, symbol: str | None = "f") -> Chunk:
    return Chunk(
        path="pkg/mod.py",
        start_line=1,
        end_line=text.count("\n"),
        text=text,
        language="python",
        kind="function",
        symbol=symbol,
        signature="def f():",
        calls=[],
        file_class="code",
        file_sha="x",
    )


LINES = [f"L{n:08d}\n" for n in range(30)]  # 30 lines of exactly 10 characters


def test_piece_texts_worked_example():
    c = _chunk("".join(LINES))
    # the own vector reads 0.8 * 100 = 80 characters = lines 0-7; the first piece starts 3
    # lines earlier (line 5) and takes whole lines up to 100 characters: lines 5-14; then
    # lines 15-24; lines 25-29 (50 characters < 80) are not worth a vector.
    assert piece_texts(c, False, 100, 3) == ["".join(LINES[5:15]), "".join(LINES[15:25])]
    assert piece_texts(c, False, 100, 1) == ["".join(LINES[5:15])]
    head = "# pkg/mod.py\n# function f\n"
    want = [head + "".join(LINES[5:15]), head + "".join(LINES[15:25])]
    assert piece_texts(c, True, 100, 3) == want


def test_piece_texts_none_for_short_chunks_windows_or_when_off():
    c = _chunk("".join(LINES))
    assert piece_texts(c, True, 300, 3) == []  # 300 characters fit the window
    assert piece_texts(c, True, 0, 3) == [] and piece_texts(c, True, 100, 0) == []
    for kind in ("window", "section", "text"):  # only definitions get pieces
        assert piece_texts(replace(c, kind=kind), True, 100, 3) == []


def test_mirror_scores_take_the_best_of_own_and_piece_vectors():
    e = np.eye(3, dtype=np.float32)
    m = Mirror(["a", "b"], [_chunk("x\n"), _chunk("y\n")], e[:2], ["code", "code"])
    m.set_pieces([0, 0], [e[2], 2 * e[1]])  # chunk a has pieces along z and (scaled) y
    q = np.array([0.0, 0.6, 0.8], dtype=np.float32)
    # a: max(own 0.0, pieces 0.8 and 0.6) = 0.8; b: own 0.6, no pieces
    assert m.scores(q) == pytest.approx([0.8, 0.6])
    assert m.scores(q, pieces=False) == pytest.approx([0.0, 0.6])
    assert m.scores(q, rows=[1, 0]) == pytest.approx([0.6, 0.8])
    assert [cid for cid, _, _ in m.dense(q, 2, None)] == ["a", "b"]
    assert [cid for cid, _, _ in m.dense(q, 2, None, pieces=False)] == ["b", "a"]


HEAD = "def settle(order):\n" + "".join(f"    step_{i} = order.total * {i}\n" for i in range(40))
TAIL = "".join("    zebra_quokka_walrus(order)\n" for _ in range(12))
LONG = HEAD + TAIL  # the tail's words are beyond the first piece_chars characters


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "long.py").write_text(LONG)
    (root / "pkg" / "short.py").write_text("def ping():\n    return 'pong'\n")
    return root


def _vector_rows(store):
    vec = store.vectors
    return vec.search().select(["id", "piece"]).limit(vec.count_rows()).to_list()


def test_index_stores_pieces_and_counts_chunks_not_rows(repo):
    emb = FakeEmbedder(dim=64, piece_chars=600)
    assert not index_repo(repo, embedder=emb).pieces_missing
    store = open_index(repo)
    meta = store.meta()
    assert meta.embedded_count == meta.chunk_count == 2
    rows = _vector_rows(store)
    pieces = sorted(r["piece"] for r in rows)
    assert pieces[:2] == [0, 0] and pieces[2:] == list(range(1, len(pieces) - 1))
    assert len(pieces) > 2
    # the pieces are what piece_texts says, embedded with the chunk's own text
    long_chunk = next(c for _, c, _ in store.where("path = 'pkg/long.py'"))
    assert all(t in emb.texts for t in piece_texts(long_chunk, True, 600, 3))


def test_dense_finds_a_long_chunk_by_its_tail_from_lancedb_and_mirror(repo):
    emb = FakeEmbedder(dim=64, piece_chars=600)
    index_repo(repo, embedder=emb)
    q = emb.embed_query("zebra quokka walrus")
    sql, mem = open_index(repo), open_index(repo)
    mem._searches = 2  # the in-memory mirror answers
    for pieces in (True, False):
        a, b = sql.dense(q, 2, None, pieces), mem.dense(q, 2, None, pieces)
        assert [c for c, _, _ in a] == [c for c, _, _ in b]
        assert [s for _, _, s in a] == pytest.approx([s for _, _, s in b], abs=1e-5)
        f = sql.in_files(q, ["pkg/long.py"], None, pieces)
        g = mem.in_files(q, ["pkg/long.py"], None, pieces)
        assert [s for _, _, s in f] == pytest.approx([s for _, _, s in g], abs=1e-5)
    with_p = {c.path: s for _, c, s in sql.dense(q, 2, None)}
    without = {c.path: s for _, c, s in sql.dense(q, 2, None, pieces=False)}
    assert with_p["pkg/long.py"] > without["pkg/long.py"] + 0.3
    assert with_p["pkg/short.py"] == pytest.approx(without["pkg/short.py"])
    assert mem._matrix is not None and len(mem._matrix.piece_owner) > 0


def test_retriever_option_and_eval_flag_switch_pieces_off(repo):
    emb = FakeEmbedder(dim=64, piece_chars=600)
    index_repo(repo, embedder=emb)
    r = Retriever.open(repo, embedder=emb)
    q = "zebra quokka walrus ping"  # three words of the long chunk's tail, one of ping()
    on = r.search(q, SearchOptions(k=2, mode="dense"))
    off = r.search(q, SearchOptions(k=2, mode="dense", pieces=False))
    assert [h.path for h in on.hits] == ["pkg/long.py", "pkg/short.py"]
    assert [h.path for h in off.hits] == ["pkg/short.py", "pkg/long.py"]
    assert parse_config("dense+nopieces").options(10).pieces is False
    assert parse_config("dense").options(10).pieces is True


def _drop_piece_column(store) -> None:
    """Rewrite the index's vectors table without the piece column, as indexes were written
    before pieces existed (piece rows dropped), and commit it in meta.json."""
    vec = store.vectors
    arr = vec.search().select(["id", "path", "file_class", "piece", "vector"])
    arr = arr.limit(vec.count_rows()).to_arrow()
    keep = pa.compute.equal(arr.column("piece"), 0)
    old = arr.filter(keep).drop_columns(["piece"])
    import lancedb

    db = lancedb.connect(str(store.path / "lance"))
    tbl = db.create_table("vectors_old", data=old)
    meta, files = _read_meta(store.path)
    meta.vectors_table, meta.vectors_version = "vectors_old", tbl.version
    _write_meta(store.path, meta, files)


def test_an_index_without_pieces_is_read_and_updated_without_them(repo):
    emb = FakeEmbedder(dim=64, piece_chars=600)
    index_repo(repo, embedder=emb)
    _drop_piece_column(open_index(repo))
    assert (open_index(repo).path / META_FILE).exists()
    q = emb.embed_query("zebra quokka walrus")
    sql, mem = open_index(repo), open_index(repo)
    mem._searches = 2
    assert [c for c, _, _ in sql.dense(q, 2)] == [c for c, _, _ in mem.dense(q, 2)]
    assert len(sql.in_files(q, ["pkg/long.py"])) == 1
    # an incremental run adds a long file's vector, and no piece rows (no column for them)
    (repo / "pkg" / "more.py").write_text(LONG.replace("settle", "settle_again"))
    summary = index_repo(repo, embedder=emb)
    assert summary.pieces_missing  # `askrepo index` says --rebuild would add them
    store = open_index(repo)
    assert "piece" not in store.vectors.schema.names
    assert store.meta().embedded_count == store.meta().chunk_count == 3
    assert store.vectors.count_rows() == 3
    found = {c.path for _, c, _ in store.dense(q, 3)}
    assert found == {"pkg/long.py", "pkg/more.py", "pkg/short.py"}


REAL_LONG = (
    "def close_month(ledger):\n"
    + "".join(
        f"    total_{i} = sum(row.amount for row in ledger.rows if row.bucket == {i})\n"
        for i in range(14)
    )
    + "    report = build_report(ledger)\n"
    + "    message = EmailMessage()\n"
    + "    message['Subject'] = 'Your monthly invoice'\n"
    + "    message['To'] = ledger.customer.email\n"
    + "    message.set_content(report.as_text())\n"
    + "    with smtplib.SMTP(ledger.smtp_host) as smtp:\n"
    + "        smtp.send_message(message)\n"
    + "    return report\n"
)


def test_real_model_index_has_pieces_that_find_a_long_functions_tail(tmp_path):
    """The default model (real MiniLM): a function whose email-sending code lies past its
    first 256 tokens scores higher for a question about that code with its pieces."""
    root = tmp_path / "repo"
    (root / "billing").mkdir(parents=True)
    (root / "billing" / "month.py").write_text(REAL_LONG)
    (root / "billing" / "tax.py").write_text("def vat(amount):\n    return amount * 0.2\n")
    index_repo(root)
    store = open_index(root)
    rows = _vector_rows(store)
    assert store.meta().embedded_count == store.meta().chunk_count
    assert len(REAL_LONG) > 900 and any(r["piece"] > 0 for r in rows)
    r = Retriever.open(root)
    vec = r.embedder.embed_query("send the invoice email to the customer over SMTP")
    with_p = {c.path: s for _, c, s in store.dense(vec, 2)}
    without = {c.path: s for _, c, s in store.dense(vec, 2, pieces=False)}
    assert with_p["billing/month.py"] > without["billing/month.py"] + 0.05
    assert next(iter(with_p)) == "billing/month.py" and next(iter(without)) == "billing/tax.py"


def test_askrepo_pieces_sets_how_many_a_long_chunk_gets(repo, monkeypatch):
    emb = FakeEmbedder(dim=64, piece_chars=600)
    monkeypatch.setenv("ASKREPO_PIECES", "0")
    index_repo(repo, embedder=emb)
    assert [r["piece"] for r in _vector_rows(open_index(repo))] == [0, 0]
    monkeypatch.setenv("ASKREPO_PIECES", "1")
    index_repo(repo, embedder=emb, rebuild=True)
    assert sorted(r["piece"] for r in _vector_rows(open_index(repo))) == [0, 0, 1]


@pytest.mark.parametrize("value", ["4", "-1", "many"])
def test_bad_askrepo_pieces_is_a_one_line_error_before_anything_is_written(repo, tmp_path, value):
    home = tmp_path / "home"
    res = run_cli("index", str(repo), home=home, env={"ASKREPO_PIECES": value})
    lines = (res.stderr + res.stdout).strip().splitlines()
    assert res.returncode != 0 and len(lines) == 1, res.stderr
    assert f"ASKREPO_PIECES={value!r}" in lines[0] and "from 0 to 3" in lines[0]
    assert not (home / "indexes").exists() or not any((home / "indexes").iterdir())
