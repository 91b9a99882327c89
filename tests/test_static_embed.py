"""minilm-static: hand-worked pure functions, and the real distillation from the MiniLM graph.

The real tests use the converted all-MiniLM-L6-v2 (from its PyPI wheel, like test_embedder)
and distil the full table once into ASKREPO_MODELS (about 45 s of CPU); later runs reuse it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from askrepo import embedder as emb
from askrepo import static_embed as se
from askrepo.errors import UsageError

# ------------------------------------------------------------------ pure functions, by hand


def test_pca_two_points_on_a_diagonal():
    # mean (1, 1); centred rows (1, 1) and (-1, -1); the component is (1, 1)/sqrt(2)
    projected, ratio = se.pca(np.array([[2.0, 2.0], [0.0, 0.0]]), 1)
    assert projected[:, 0] == pytest.approx([math.sqrt(2), -math.sqrt(2)])
    assert ratio == pytest.approx([1.0])


def test_pca_keeps_the_axis_of_largest_variance_with_a_fixed_sign():
    # variance along x: (1+1)/4, along y: (0.25+0.25)/4 -> first component x, ratio 2/2.5
    x = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.5], [0.0, -0.5]])
    projected, ratio = se.pca(x, 1)
    assert projected[:, 0] == pytest.approx([1.0, -1.0, 0.0, 0.0])
    assert ratio == pytest.approx([0.8])
    # the same data mirrored gives the same projection up to the mirroring, not a sign flip
    again, _ = se.pca(-x, 1)
    assert again[:, 0] == pytest.approx([-1.0, 1.0, 0.0, 0.0])
    two, ratios = se.pca(x, 2)
    assert ratios == pytest.approx([0.8, 0.2])
    assert np.abs(two[:, 1]) == pytest.approx([0.0, 0.0, 0.5, 0.5])


def test_pca_rejects_more_dims_than_the_data_has():
    with pytest.raises(ValueError):
        se.pca(np.ones((3, 2)), 3)


def test_sif_weights_worked_example():
    # ranks 1..3: 1/2, 1/3, 1/4, sum 13/12 -> p = 6/13, 4/13, 3/13; a = 0.1
    # w = 0.1 / (0.1 + p) = 1.3/7.3, 1.3/5.3, 1.3/4.3
    w = se.sif_weights(3, 0.1)
    assert w == pytest.approx([1.3 / 7.3, 1.3 / 5.3, 1.3 / 4.3])
    assert list(w) == sorted(w)  # frequent (low-rank) tokens are damped most
    with pytest.raises(ValueError):
        se.sif_weights(3, 0.0)


def test_kept_tokens_drops_special_and_unused():
    vocab = {"[PAD]": 0, "[unused0]": 1, "[UNK]": 2, "a": 3, "##b": 4, "[CLS]": 5, "[x]": 6}
    assert se.kept_tokens(vocab).tolist() == [3, 4, 6]


def test_static_matrix_places_weighted_rows_at_their_ids():
    vectors = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.5], [0.0, -0.5]])
    ids = np.array([3, 5, 6, 9])
    m = se.static_matrix(vectors, ids, vocab_size=10, dims=1, coefficient=0.1)
    w = se.sif_weights(4, 0.1)
    assert m.shape == (10, 1) and m.dtype == np.float32
    assert m[ids, 0] == pytest.approx([w[0], -w[1], 0.0, 0.0], abs=1e-7)
    assert not m[[0, 1, 2, 4, 7, 8]].any()


def test_pool_sums_rows_and_normalises():
    m = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 0.0]], dtype=np.float32)
    out = se.pool(m, [[1], [1, 2], [], [0], [2, 2, 2]])
    s = 1 / math.sqrt(2)
    assert out.ravel() == pytest.approx([0.6, 0.8, s, s, 0, 0, 0, 0, 1, 0])
    assert out.dtype == np.float32


# ------------------------------------------------------------------ the real MiniLM


@pytest.fixture(scope="module")
def teacher_dir():
    return emb.converted_model_dir(emb.MODELS["minilm-fp32"])


@pytest.fixture(scope="module")
def static():
    return emb.load_embedder("minilm-static")


def test_spec_is_its_own_index():
    spec = emb.MODELS["minilm-static"]
    assert spec.distill_from == "minilm-fp32" and spec.dim == 256
    others = {s.model_id for n, s in emb.MODELS.items() if n != "minilm-static"}
    assert spec.model_id not in others


@pytest.mark.slow
def test_teacher_pass_is_minilm_on_cls_token_sep(teacher_dir):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(teacher_dir / "tokenizer.json"))
    ids = np.array([tok.token_to_id("file"), tok.token_to_id("##ing")])
    out = se.token_outputs(teacher_dir, ids)
    assert out.shape == (2, 384)
    ref = emb.OnnxQueryEmbedder(emb.MODELS["minilm-fp32"], teacher_dir).embed_query("file")
    got = out[0] / np.linalg.norm(out[0])
    assert float(got @ ref) > 0.99999


@pytest.mark.slow
def test_distillation_is_deterministic(teacher_dir):
    a = se.distill(teacher_dir, 32, limit=300)
    b = se.distill(teacher_dir, 32, limit=300)
    assert a.shape == (30522, 32) and a.dtype == np.float32
    assert np.isfinite(a).all()
    assert np.array_equal(a, b)
    assert np.count_nonzero(np.abs(a).sum(axis=1)) == 300


@pytest.mark.slow
def test_distilled_table(static):
    m = static.matrix
    assert m.shape == (30522, 256) and m.dtype == np.float32
    assert np.isfinite(m).all()
    vocab = static._tok.get_vocab()
    for special in ("[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]", "[unused5]"):
        assert not m[vocab[special]].any(), special
    assert np.count_nonzero(np.abs(m).sum(axis=1)) > 29000


@pytest.mark.slow
def test_embeddings_are_normalised_and_stable(static):
    texts = [
        "how do I read a config file",
        "def load_config(path):\n    with open(path) as f:\n        return json.load(f)",
        "total = total + 1\n" * 400,  # 2,400 tokens: cut at max_tokens
        "",
    ]
    v = static.embed_documents(texts, batch_size=2)
    assert v.shape == (4, 256) and v.dtype == np.float32
    assert np.linalg.norm(v[:3], axis=1) == pytest.approx([1, 1, 1], abs=1e-5)
    assert not v[3].any()  # an empty text has no tokens: a zero vector
    alone = np.stack([static.embed_query(t) for t in texts])
    assert np.array_equal(v, alone)  # no batch effects
    again = emb.load_embedder("minilm-static").embed_documents(texts)
    assert np.array_equal(v, again)


@pytest.mark.slow
def test_related_text_is_closer_than_unrelated(static):
    from tests.test_embedder import TRIPLES

    for query, related, unrelated in TRIPLES:
        q, r, u = static.embed_documents([query, related, unrelated])
        assert float(q @ r) > float(q @ u), query


@pytest.mark.slow
def test_index_and_search_round_trip(tmp_path, monkeypatch):
    from askrepo.indexer import index_repo
    from askrepo.retriever import Retriever, SearchOptions
    from tests.fixture_repo import QUESTIONS, make_fixture_repo

    root = make_fixture_repo(tmp_path / "repo")
    summary = index_repo(root, model="minilm-static")
    assert summary.model_id == emb.MODELS["minilm-static"].model_id
    assert summary.chunks_embedded == summary.chunks_total > 20

    monkeypatch.setenv("ASKREPO_MODEL", "minilm-static")
    retr = Retriever.open(root)
    assert retr.store.model_id == summary.model_id
    dense_found = 0
    for question, path, symbol in QUESTIONS:
        hits = retr.search(question, SearchOptions(k=5, mode="dense")).hits
        assert hits and all(len(h.text) for h in hits)
        dense_found += any(h.path == path and h.symbol == symbol for h in hits)
    assert dense_found >= len(QUESTIONS) // 2, dense_found
    hits = retr.search("authenticate_user", SearchOptions(k=5)).hits
    assert (hits[0].path, hits[0].symbol) == ("shop/auth.py", "authenticate_user")


def test_damaged_table_is_one_line_error_naming_the_folder(tmp_path, monkeypatch):
    from askrepo.errors import ModelUnavailableError

    monkeypatch.setenv("ASKREPO_MODELS", str(tmp_path))
    spec = emb.MODELS["minilm-static"]
    folder = tmp_path / "static" / spec.model_id
    folder.mkdir(parents=True)
    (folder / se.META_FILE).write_text("{}")
    (folder / se.MATRIX_FILE).write_bytes(b"not a numpy file")
    with pytest.raises(ModelUnavailableError) as err:
        emb.load_embedder("minilm-static")
    msg = str(err.value)
    assert str(folder) in msg and "delete that folder" in msg and "\n" not in msg


def test_static_batch_size_below_one_is_a_usage_error(static):
    with pytest.raises(UsageError, match="batch_size must be at least 1"):
        static.embed_documents(["x"], batch_size=0)
