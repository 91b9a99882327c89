"""The static model distilled from MiniLM: pure pieces by hand, then the real distilled model."""

from __future__ import annotations

import numpy as np
import pytest

from askrepo.static_model import embed, pca


def test_pca_keeps_the_direction_of_most_variance():
    x = np.array([[1.0, 0.0], [-1.0, 0.0], [2.0, 0.1], [-2.0, -0.1]], dtype=np.float32)
    y = pca(x, 1)
    assert y.shape == (4, 1)
    assert np.allclose(np.abs(y[:, 0]), np.abs(x[:, 0] - x[:, 0].mean()), atol=0.01)


def test_embed_is_the_normalised_mean_of_token_rows():
    m = np.array([[1, 0], [0, 1], [3, 4]], dtype=np.float32)
    out = embed(m, [[0, 1], [2], []])
    assert np.allclose(out[0], [2**-0.5, 2**-0.5])
    assert np.allclose(out[1], [0.6, 0.8])
    assert np.allclose(out[2], [0, 0])


@pytest.mark.slow
def test_distilled_model_ranks_related_text_first():
    """Real: distilled from the shipped MiniLM (once, cached in ASKREPO_MODELS)."""
    from askrepo.embedder import load_embedder, load_query_embedder

    emb = load_embedder("minilm-static")
    assert emb.model_id == "minilm-static-256" and emb.dim == 256
    docs = [
        "def parse_args(argv):\n    return parser.parse_known_args(argv)",
        "def render_color(rgb):\n    return '#%02x%02x%02x' % rgb",
        "The weather today is sunny with a light breeze.",
    ]
    d = emb.embed_documents(docs)
    assert d.shape == (3, 256) and np.allclose(np.linalg.norm(d, axis=1), 1, atol=1e-5)
    q = load_query_embedder("minilm-static").embed_query("parse command line arguments")
    scores = d @ q
    assert int(np.argmax(scores)) == 0 and scores[0] > scores[2]
