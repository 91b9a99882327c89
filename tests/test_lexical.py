"""askrepo.lexical: BM25F with worked numbers, reuse of postings, files; and the store using it
on a real LanceDB index (and falling back to LanceDB's full-text search without it)."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from askrepo import lexical
from askrepo.indexer import index_repo
from askrepo.lexical import Doc, LexicalIndex, analyze, build, name_text
from askrepo.refresh import status
from askrepo.retriever import Retriever, SearchOptions
from askrepo.store import META_FILE, open_index
from tests.fakes import FakeEmbedder

DOCS = [
    Doc("d0", "code", "alpha beta", None),
    Doc("d1", "code", "alpha alpha gamma delta", None),
    Doc("d2", "test", "gamma", "alpha"),
]


def _build(docs, previous=None):
    return build(
        [d.id for d in docs],
        [d.file_class for d in docs],
        lambda ids: [d for d in docs if d.id in set(ids)],
        previous,
    )


def test_analyze_and_name_field():
    terms = analyze("Parse the options_line: ndots, HTTP2")
    assert terms == ["pars", "option", "lin", "ndot", "http2"]
    assert analyze("x" * 41 + " ok") == ["ok"]  # a token over 40 characters is not a term
    assert name_text("Dispatcher.poll_read_head") == (
        "dispatcher poll read head Dispatcher.poll_read_head"
    )
    assert name_text(None) == ""


def test_postings_count_terms_as_analyze_does():
    # "parse", "parses" and "Parsing" are one term; "the" is a stop word; the name counts apart
    doc = Doc("x", "code", "parse parses Parsing the_x option", "parse_option")
    ix = _build([doc])
    got = {}
    for t, word in enumerate(ix.vocab):
        lo, hi = ix.offsets[t], ix.offsets[t + 1]
        got[word.decode()] = (float(ix.tf_body[lo]), float(ix.tf_name[lo])) if hi > lo else None
    body, name = Counter(analyze(doc.body)), Counter(analyze(name_text(doc.symbol)))
    assert got == {t: (float(body[t]), float(name[t])) for t in body.keys() | name.keys()}
    assert got["pars"] == (3.0, 2.0) and float(ix.len_body[0]) == sum(body.values()) == 5


def test_bm25_worked_numbers_without_the_name_field():
    ix = _build(DOCS)
    # N = 3; "alpha" is in all three (d2 by its name), so idf = ln(1 + 0.5 / 3.5) = 0.133531.
    # Body lengths 2, 4, 1 (mean 7/3). d0: tf 1 / (0.25 + 0.75 * 2 / (7/3)) = 1.12;
    # 0.133531 * 1.12 * 2.2 / (1.2 + 1.12) = 0.141820. d1: 2 / 1.535714 = 1.302326;
    # 0.133531 * 1.302326 * 2.2 / 2.502326 = 0.152890. d2's body has no "alpha": left out.
    got = ix.search("alpha", 10, name_weight=0)
    assert [i for i, _ in got] == ["d1", "d0"]
    assert got[0][1] == pytest.approx(0.152890, abs=1e-6)
    assert got[1][1] == pytest.approx(0.141820, abs=1e-6)
    assert math.log(1 + 0.5 / 3.5) == pytest.approx(0.133531, abs=1e-6)


def test_the_name_field_puts_the_chunk_named_by_the_query_first():
    ix = _build(DOCS)
    # d2's name field is "alpha alpha" (its words, then the symbol): name lengths 0, 0, 2
    # (mean 2/3), NAME_B 0.5 → norm 0.5 + 0.5 * 3 = 2.0; tf~ = 10 * 2 / 2.0 = 10;
    # 0.133531 * 10 * 2.2 / 11.2 = 0.262294.
    assert name_text("alpha") == "alpha alpha"
    got = ix.search("alpha", 10, name_weight=10)
    assert got[0][0] == "d2" and got[0][1] == pytest.approx(0.262294, abs=1e-6)
    assert [i for i, _ in got[1:]] == ["d1", "d0"]  # the body scores are unchanged
    # a query term repeated counts once; unknown words add nothing
    assert ix.search("alpha alpha zeta", 10) == ix.search("alpha", 10)


def test_classes_filter_ties_and_limits():
    ix = _build(DOCS)
    assert [i for i, _ in ix.search("alpha", 10, classes=["code"])] == ["d1", "d0"]
    assert ix.search("alpha", 10, classes=["docs"]) == []
    assert [i for i, _ in ix.search("alpha", 1)] == ["d2"]
    assert ix.search("", 10) == [] and ix.search("alpha", 0) == []
    tie = _build([Doc("a", "code", "same words", None), Doc("b", "code", "same words", None)])
    assert [i for i, _ in tie.search("words", 10)] == ["a", "b"]  # index order on ties


def test_feedback_terms_worked_numbers():
    # N = 1000 chunks. idf(df) = ln(1 + (1000 - df + 0.5) / (df + 0.5)): df 2 → 5.992464,
    # df 10 → 4.557380, df 40 → 3.207453. "chop" and "hashtags" are in both texts:
    # 2 × 5.992464 = 11.984928 each; "trailing" in one (4.557380), "rtrim" in one (3.207453).
    # "cmark" and "chunk" are in no other chunk (df 0 → left out), "ch" is too short, and
    # "closing" is a query term (analyze: "clos").
    df = {"chop": 2, "hashtag": 2, "trail": 10, "rtrim": 40, "clos": 2}
    texts = ["chop_trailing_hashtags(ch) closing", "cmark_chunk_rtrim(ch); chop(hashtags)"]
    got = lexical.feedback_terms(
        texts, "strip the closing hashes", lambda t: df.get(t, 0), 1000, 10
    )
    assert got == ["chop", "hashtags", "trailing", "rtrim"]  # ties: first seen first
    assert math.log(1 + 998.5 / 2.5) == pytest.approx(5.992464, abs=1e-6)
    assert math.log(1 + 990.5 / 10.5) == pytest.approx(4.557380, abs=1e-6)
    assert math.log(1 + 960.5 / 40.5) == pytest.approx(3.207453, abs=1e-6)
    assert lexical.feedback_terms(texts, "", lambda t: df.get(t, 0), 1000, 2) == [
        "chop",
        "hashtags",
    ]
    one = {"chop": 1, "hashtag": 1}  # a word only the first hits hold finds nothing new
    assert lexical.feedback_terms(texts, "", lambda t: one.get(t, 0), 1000, 10) == []
    assert lexical.feedback_terms([], "x", lambda t: 5, 1000, 10) == []


def test_doc_freq_counts_chunks_not_occurrences():
    ix = _build(DOCS)
    assert ix.doc_freq("alpha") == 3  # d1 holds it twice, d2 by its name: three chunks
    assert ix.doc_freq("gamma") == 2 and ix.doc_freq("zeta") == 0


def test_reused_postings_equal_a_fresh_build():
    first = _build(DOCS)
    later = [DOCS[2], Doc("d3", "code", "delta epsilon alpha", "Epsilon"), DOCS[0]]
    read: list[str] = []

    def reader(ids):
        read.extend(ids)
        return [d for d in later if d.id in set(ids)]

    reused = build([d.id for d in later], [d.file_class for d in later], reader, first)
    fresh = _build(later)
    assert read == ["d3"]  # only the new chunk was read and tokenized
    for name in ("vocab", "offsets", "docs", "tf_body", "tf_name", "len_body", "len_name"):
        assert np.array_equal(getattr(reused, name), getattr(fresh, name)), name
    for q in ("alpha", "delta epsilon", "gamma beta"):
        assert reused.search(q, 10) == fresh.search(q, 10)


def test_save_and_load(tmp_path):
    ix = _build(DOCS)
    ix.save(tmp_path / "lex")
    back = LexicalIndex.load(tmp_path / "lex")
    assert back.search("alpha gamma", 10) == ix.search("alpha gamma", 10)
    info = json.loads((tmp_path / "lex" / "index.json").read_text())
    info["format"] = 99
    (tmp_path / "lex" / "index.json").write_text(json.dumps(info))
    with pytest.raises(ValueError):
        LexicalIndex.load(tmp_path / "lex")
    with pytest.raises(OSError):
        LexicalIndex.load(tmp_path / "missing")
    empty = _build([])
    assert len(empty) == 0 and empty.search("alpha", 5) == []


# -- in the index ----------------------------------------------------------------------------
TABLES = '''def render_table(rows):
    """Draw rows as a grid."""
    return "\\n".join(" | ".join(r) for r in rows)


def layout_engine(items):
    # a table is rendered by the table renderer: render each table row, then the table border
    for table in items:
        render = table.render()
        yield render
'''


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "tables.py").write_text(TABLES)
    (root / "other.py").write_text("def unrelated():\n    return 42\n")
    return root


def _lexical_dirs(store):
    return sorted(p.name for p in store.path.glob("lexical_*"))


def test_index_writes_the_lexical_index_and_search_reads_it(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    store = open_index(repo)
    assert store.meta().lexical and (store.path / store.meta().lexical / "index.json").exists()
    r = Retriever.open(repo, embedder=emb)
    named = r.search("render table", SearchOptions(k=3, mode="fts"))
    plain = r.search("render table", SearchOptions(k=3, mode="fts", disabled=("namefield",)))
    # the body that repeats the words wins plain BM25; the function named by them wins BM25F
    assert plain.hits[0].symbol == "layout_engine"
    assert named.hits[0].symbol == "render_table"
    # a one-shot store (no in-memory mirror) returns the same as a long-lived one
    mem = open_index(repo)
    mem._searches = 2
    assert [c for c, _, _ in mem.fts("render table", 5)] == [
        c for c, _, _ in open_index(repo).fts("render table", 5)
    ]


def test_a_british_spelling_finds_code_written_in_american_on_a_real_index(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "palette.py").write_text(
        "def downgrade(color, system):\n"
        '    """Map a truecolor to the nearest color of a smaller palette."""\n'
        "    return nearest(color, system.palette)\n"
    )
    (root / "other.py").write_text("def unrelated():\n    return 42\n")
    emb = FakeEmbedder()
    index_repo(root, embedder=emb)
    r = Retriever.open(root, embedder=emb)
    hits = r.search("colour", SearchOptions(k=3, mode="fts")).hits
    assert [h.symbol for h in hits] == ["downgrade"]  # only the American form is in the code


def test_an_edit_tokenizes_only_the_changed_file_and_old_directories_go(repo, monkeypatch):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    first = open_index(repo).meta().lexical
    index_repo(repo, embedder=emb)  # nothing changed: the same directory
    assert open_index(repo).meta().lexical == first

    seen: list[str] = []
    real = lexical.build

    def spy(ids, classes, read, previous=None):
        def reader(missing):
            seen.extend(missing)
            return read(missing)

        return real(ids, classes, reader, previous)

    monkeypatch.setattr(lexical, "build", spy)
    (repo / "other.py").write_text(
        "def unrelated():\n    return 43\n\n\ndef table_count():\n    return 1\n"
    )
    index_repo(repo, embedder=emb)
    store = open_index(repo)
    paths = {ch.path for _, ch, _ in store.where("true", 100)}
    assert paths == {"tables.py", "other.py"}
    new_ids = {cid for cid, _, _ in store.where("path = 'other.py'", 100)}
    assert set(seen) == new_ids  # tables.py's chunks kept their postings
    assert [
        h.symbol
        for h in Retriever.open(repo, embedder=emb)
        .search("table count", SearchOptions(k=1, mode="fts"))
        .hits
    ] == ["table_count"]
    before = open_index(repo).meta().lexical
    stray = open_index(repo).path / "lexical_0_1_1"  # a run killed before its commit
    stray.mkdir()
    (repo / "other.py").write_text("def unrelated():\n    return 44\n")
    index_repo(repo, embedder=emb)
    now = open_index(repo).meta().lexical
    # the current one and the one the previous meta.json named; the stray one is gone
    assert _lexical_dirs(open_index(repo)) == sorted({now, before})


def _lancedb_fts_index(store) -> int:
    """What index runs before askrepo.lexical built: LanceDB's own full-text index (a new
    table version, returned)."""
    import lancedb
    from old_index import lancedb_fts_index

    return lancedb_fts_index(lancedb.connect(store.path / "lance").open_table(store.meta().table))


def test_an_index_built_before_the_lexical_files_uses_lancedb_until_the_next_run(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    store = open_index(repo)
    # an index run builds no LanceDB full-text index any more: askrepo.lexical answers
    assert not [i for i in store.table.list_indices() if i.index_type == "FTS"]
    version = _lancedb_fts_index(store)
    meta_path = store.path / META_FILE
    raw = json.loads(meta_path.read_text())
    raw["lexical"] = ""  # as an index built before askrepo.lexical
    raw["table_version"] = version
    meta_path.write_text(json.dumps(raw))
    old = open_index(repo)
    hits = old.fts("render table", 5)
    assert hits and {c.symbol for _, c, _ in hits} >= {"render_table", "layout_engine"}
    assert old.full_text == "lancedb" and status(old).full_text == "lancedb"
    assert old.feedback_query(["render_table(rows)"], "render", 10) == ""  # askrepo's index only
    assert "lancedb" == status(old).to_dict()["full_text"]
    index_repo(repo, embedder=emb)  # nothing changed, but the run writes the missing index
    assert open_index(repo).meta().lexical
    assert status(open_index(repo)).full_text == "askrepo"


def test_lost_lexical_files_are_rebuilt_from_the_table(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    store = open_index(repo)
    before = store.fts("render table", 5)
    import shutil

    lost = store.meta().lexical
    shutil.rmtree(store.path / lost)
    again = open_index(repo)
    # rebuilt in memory from the table's full-text column: the same hits, the same scores
    assert again.fts("render table", 5) == before and again.full_text == "askrepo"
    # the next run writes the files again (read back from the table: this run added nothing)
    index_repo(repo, embedder=emb)
    now = open_index(repo).meta().lexical
    assert now != lost and (open_index(repo).path / now / "index.json").exists()
    assert open_index(repo).fts("render table", 5) == before


def test_a_first_index_tokenizes_what_it_added_without_reading_it_back(repo, monkeypatch):
    import askrepo.store_writer as store_writer

    def no_read(table, ids):
        raise AssertionError(f"read {len(ids)} documents back from the table")

    monkeypatch.setattr(store_writer, "table_docs", no_read)
    index_repo(repo, embedder=FakeEmbedder())
    (repo / "other.py").write_text("def table_count():\n    return 1\n")
    index_repo(repo, embedder=FakeEmbedder())  # an edit: the previous postings + the new file
    hits = open_index(repo).fts("table count", 3)
    assert hits[0][1].symbol == "table_count"


def test_a_reader_whose_directory_was_retired_reads_meta_again(repo):
    emb = FakeEmbedder()
    index_repo(repo, embedder=emb)
    reader = open_index(repo)  # holds this meta.json, has not loaded the full-text files yet
    held = reader.meta().lexical
    (repo / "other.py").write_text("def unrelated():\n    return 7\n")
    index_repo(repo, embedder=emb)
    import shutil

    shutil.rmtree(reader.path / held)  # what a later run's tidy does to an old directory
    assert reader.full_text == "askrepo"  # it moved to the new state's files
    assert reader.meta().lexical != held
