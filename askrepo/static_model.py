"""A static embedding model distilled locally from the shipped MiniLM (numpy + onnxruntime).

Distillation (once, a minute or two, cached under ``ASKREPO_MODELS/static/``), as model2vec
does it: every vocabulary token goes through MiniLM alone (``[CLS] token [SEP]``, mean-pooled
like a sentence), the 30,522 × 384 result is reduced to 256 dimensions by PCA, and each row is
weighted by ``log(1 + token id)`` (WordPiece ids roughly follow frequency: a Zipf weight that
lowers very common tokens). Embedding a text is then a tokenizer call and the mean of its
tokens' rows: no transformer at index or query time, so it is orders of magnitude faster and
reads the whole chunk (no 256-token limit), at a cost in quality measured in docs/models.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

DISTILL_VERSION = 1
PCA_DIMS = 256
_BATCH = 512


def distill(teacher_dir: Path, out: Path, progress: Callable[[str], None] | None = None) -> Path:
    """Build ``out/embeddings.npy`` (+ tokenizer.json) from a converted MiniLM directory."""
    import shutil

    import onnxruntime as ort
    from tokenizers import Tokenizer

    from . import onnx_bert
    from .embedder import _threads

    if (out / "embeddings.npy").is_file():
        return out
    if progress is not None:
        progress("distilling a static model from MiniLM (once; minutes on a busy machine)")
    tok = Tokenizer.from_file(str(teacher_dir / "tokenizer.json"))
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    vocab = tok.get_vocab_size()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = _threads()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(
        str(teacher_dir / onnx_bert.MODEL_FILE), opts, providers=["CPUExecutionProvider"]
    )
    names = {i.name for i in sess.get_inputs()}
    parts = []
    for start in range(0, vocab, _BATCH):
        ids = np.arange(start, min(start + _BATCH, vocab), dtype=np.int64)
        seq = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        feed = {"input_ids": seq, "attention_mask": np.ones_like(seq)}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(seq)
        hidden = sess.run(None, feed)[0]  # (batch, 3, dim)
        parts.append(hidden.mean(axis=1).astype(np.float32))
    rows = np.concatenate(parts)
    emb = pca(rows, PCA_DIMS)
    emb *= np.log1p(np.arange(vocab, dtype=np.float32))[:, None]
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "embeddings.tmp.npy"
    np.save(tmp, emb.astype(np.float32))
    shutil.copy(teacher_dir / "tokenizer.json", out / "tokenizer.json")
    tmp.replace(out / "embeddings.npy")
    return out


def pca(x: Any, dims: int) -> Any:
    """Rows of ``x`` projected on their first ``dims`` principal components."""
    centered = x - x.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centered, full_matrices=False)
    return centered @ vt[:dims].T


def embed(matrix: Any, token_ids: Sequence[Sequence[int]]) -> Any:
    """Mean of each text's token rows, L2-normalised (a zero vector for no tokens)."""
    out = np.zeros((len(token_ids), matrix.shape[1]), dtype=np.float32)
    for i, ids in enumerate(token_ids):
        if len(ids):
            v = matrix[np.asarray(ids)].mean(axis=0)
            n = float(np.linalg.norm(v))
            out[i] = v / n if n else v
    return out


class StaticEmbedder:
    """The ``Embedder`` protocol over a distilled token-embedding matrix."""

    def __init__(self, model_id: str, model_dir: Path):
        from tokenizers import Tokenizer

        self.model_id = model_id
        self.matrix = np.load(model_dir / "embeddings.npy")
        self.dim = int(self.matrix.shape[1])
        self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tok.no_truncation()
        self._tok.no_padding()

    def _ids(self, texts: Sequence[str]) -> list[list[int]]:
        encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [e.ids for e in encs]

    def embed_documents(
        self,
        texts: Sequence[str],
        batch_size: int = 256,
        progress: Callable[[int], None] | None = None,
    ) -> Any:
        out = embed(self.matrix, self._ids(texts)) if texts else np.empty((0, self.dim))
        if progress is not None:
            progress(len(texts))
        return out.astype(np.float32)

    def embed_query(self, text: str) -> Any:
        return self.embed_documents([text])[0]


def load(spec: Any, progress: Callable[[str], None] | None = None) -> StaticEmbedder:
    """The distilled model for ``spec`` (distilling it first if needed)."""
    from . import modelfetch
    from .embedder import MODELS, converted_model_dir

    teacher = converted_model_dir(MODELS["minilm"], progress=progress)
    out = modelfetch.cache_dir("static") / f"{spec.model_id}-d{DISTILL_VERSION}"
    return StaticEmbedder(spec.model_id, distill(teacher, out, progress))
