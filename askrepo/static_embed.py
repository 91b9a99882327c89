"""Static token embeddings distilled from all-MiniLM-L6-v2: a fast `--model minilm-static`.

The method is model2vec's (MinishLab), re-implemented with numpy + onnxruntime + tokenizers
(no torch, no download; the teacher is the ONNX graph askrepo already converts):

1. every vocabulary token ``t`` (except ``[PAD]``/``[UNK]``/``[CLS]``/``[SEP]``/``[MASK]`` and
   ``[unusedN]``) goes through the real MiniLM once as ``[CLS] t [SEP]``; its vector is the mean
   of the three output states (MiniLM's own mean pooling);
2. PCA (numpy SVD of the centred matrix) to ``dim`` components;
3. each row is scaled by a SIF weight ``a / (a + p)``, ``p`` a Zipf probability from the
   token's rank in the vocabulary (BERT's WordPiece ids roughly follow frequency), so frequent
   tokens count less in a mean.

The result, one row per token id (zero rows for skipped tokens), is built once into
``$ASKREPO_MODELS/static/<model_id>/`` (atomically, like the ONNX conversion). Embedding a
text is then a table lookup: MiniLM tokenizer (no special tokens) -> sum of the rows ->
L2 normalisation (the mean's scale does not survive the normalisation, so the sum is used).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from askrepo import modelfetch
from askrepo.errors import ModelUnavailableError, at_least

if TYPE_CHECKING:  # pragma: no cover
    from askrepo.embedder import ModelSpec

# Bump when the recipe or the files written change (it is part of the model_id too).
DISTILL_VERSION = 1
MATRIX_FILE = "embeddings.npy"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "static.json"
SIF_COEFFICIENT = 1e-4  # model2vec's default
SKIP_TOKENS = re.compile(r"\[(?:PAD|UNK|CLS|SEP|MASK|unused\d+)\]")
_BLOCK = 1024  # texts tokenized per call in embed_documents


# ---------------------------------------------------------------- pure functions


def pca(x: np.ndarray, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """Project the rows of ``x`` on its first ``dims`` principal components.

    Returns ``(projected (n, dims) float64, explained variance ratio (dims,))``. The rows are
    centred on their mean; the components come from the SVD of the centred matrix. Each
    component's sign is fixed so that its largest-magnitude loading is positive, which makes
    the result independent of the SVD routine's arbitrary sign choice.
    """
    x = np.asarray(x, dtype=np.float64)
    n, d = x.shape
    if not 1 <= dims <= min(n, d):
        raise ValueError(f"dims must be between 1 and {min(n, d)}, got {dims}")
    centred = x - x.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[:dims]
    signs = np.sign(comps[np.arange(dims), np.abs(comps).argmax(axis=1)])
    comps = comps * signs[:, None]
    var = s**2
    ratio = var[:dims] / var.sum() if var.sum() > 0 else np.zeros(dims)
    return centred @ comps.T, ratio


def sif_weights(n: int, coefficient: float = SIF_COEFFICIENT) -> np.ndarray:
    """SIF weight ``a / (a + p_r)`` of the tokens of rank r = 1..n (model2vec's Zipf estimate).

    ``p_r`` is Zipf's law with the rank offset by one: ``p_r = (1/(r+1)) / sum_j 1/(j+1)``.
    The weight grows with the rank: the most frequent tokens are damped the most.
    """
    if not 0 < coefficient < 1:
        raise ValueError(f"the SIF coefficient must be in (0, 1), got {coefficient}")
    inv_rank = 1.0 / np.arange(2, n + 2, dtype=np.float64)
    p = inv_rank / inv_rank.sum()
    return coefficient / (coefficient + p)


def kept_tokens(vocab: dict[str, int]) -> np.ndarray:
    """Ids of the tokens that get a vector (not special, not ``[unusedN]``), ascending."""
    return np.array(
        sorted(i for tok, i in vocab.items() if not SKIP_TOKENS.fullmatch(tok)), dtype=np.int64
    )


def static_matrix(
    token_vectors: np.ndarray,
    ids: np.ndarray,
    vocab_size: int,
    dims: int,
    coefficient: float = SIF_COEFFICIENT,
) -> np.ndarray:
    """The lookup table: PCA of ``token_vectors`` (rows = tokens ``ids``, in rank order), SIF
    weighted by that order, placed at their ids in a (vocab_size, dims) float32 matrix whose
    other rows are zero."""
    projected, _ = pca(token_vectors, dims)
    projected *= sif_weights(len(ids), coefficient)[:, None]
    out = np.zeros((vocab_size, dims), dtype=np.float32)
    out[ids] = projected.astype(np.float32)
    return out


def pool(matrix: np.ndarray, ids: Sequence[Sequence[int]]) -> np.ndarray:
    """L2-normalised sum of the rows of ``matrix`` for each id list; a zero row if it is empty
    (or all its tokens have zero rows)."""
    out = np.zeros((len(ids), matrix.shape[1]), dtype=np.float32)
    for i, row in enumerate(ids):
        if len(row):
            out[i] = matrix[np.asarray(row, dtype=np.intp)].sum(axis=0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=out, where=norms > 0)


# ---------------------------------------------------------------- distillation


def token_outputs(
    model_dir: Path,
    ids: np.ndarray,
    *,
    batch_size: int = 512,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """MiniLM's mean-pooled output for each ``[CLS] id [SEP]`` -> (len(ids), hidden) float32."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from askrepo import onnx_bert
    from askrepo.embedder import _threads

    tok = Tokenizer.from_file(str(Path(model_dir) / TOKENIZER_FILE))
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise ValueError(f"{model_dir} has no [CLS]/[SEP] tokens")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = _threads()
    opts.log_severity_level = 3
    session = ort.InferenceSession(
        str(Path(model_dir) / onnx_bert.MODEL_FILE), opts, providers=["CPUExecutionProvider"]
    )
    outs = []
    for start in range(0, len(ids), batch_size):
        batch = np.asarray(ids[start : start + batch_size], dtype=np.int64)
        seq = np.stack([np.full_like(batch, cls_id), batch, np.full_like(batch, sep_id)], axis=1)
        feed = {
            "input_ids": seq,
            "attention_mask": np.ones_like(seq),
            "token_type_ids": np.zeros_like(seq),
        }
        hidden = session.run(None, feed)[0]  # (batch, 3, hidden)
        outs.append(hidden.mean(axis=1, dtype=np.float64).astype(np.float32))
        if progress is not None:
            progress(start + len(batch))
    return np.concatenate(outs) if outs else np.empty((0, 0), dtype=np.float32)


def distill(
    model_dir: Path,
    dims: int,
    *,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """The (vocab_size, dims) table distilled from the converted MiniLM in ``model_dir``.

    ``limit`` keeps only the first ``limit`` tokens (tests: a quick, still real, distillation).
    """
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(model_dir) / TOKENIZER_FILE))
    vocab = tok.get_vocab(with_added_tokens=True)
    ids = kept_tokens(vocab)[:limit]
    vectors = token_outputs(model_dir, ids, progress=progress)
    return static_matrix(vectors, ids, max(vocab.values()) + 1, dims)


def teacher_spec(spec: ModelSpec) -> ModelSpec:
    from askrepo.embedder import model_spec

    if spec.distill_from is None:
        raise ValueError(f"{spec.model_id} is not a static model")
    return model_spec(spec.distill_from)


def static_model_dir(spec: ModelSpec, progress: Callable[[str], None] | None = None) -> Path:
    """The directory of ``spec``'s distilled table, distilling it (once, ~1-2 min) if needed."""
    from askrepo.embedder import converted_model_dir

    out = modelfetch.cache_dir("static") / spec.model_id
    if (out / META_FILE).is_file():
        return out
    teacher = teacher_spec(spec)
    onnx_dir = converted_model_dir(teacher, progress=progress)
    if progress is not None:
        progress(
            f"Distilling {spec.model_id} from {teacher.model_id} (one time, about a minute) "
            f"in {out}"
        )
    try:
        with modelfetch.building(out) as tmp:
            matrix = distill(onnx_dir, spec.dim)
            np.save(tmp / MATRIX_FILE, matrix)
            shutil.copyfile(onnx_dir / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
            (tmp / META_FILE).write_text(
                json.dumps(
                    {
                        "distill_version": DISTILL_VERSION,
                        "teacher": teacher.model_id,
                        "teacher_dir": str(onnx_dir),
                        "dims": spec.dim,
                        "sif_coefficient": SIF_COEFFICIENT,
                        "max_tokens": spec.max_tokens,
                        "shape": list(matrix.shape),
                    },
                    indent=2,
                )
            )
    except (OSError, ValueError, KeyError) as exc:
        raise ModelUnavailableError(
            f"Could not distill {spec.model_id} from {onnx_dir} ({exc}); delete {onnx_dir} "
            "and run again to rebuild it."
        ) from exc
    return out


# ---------------------------------------------------------------- the embedder


class StaticEmbedder:
    """Embedder over a distilled table: tokenize, sum the token rows, normalise."""

    def __init__(self, spec: ModelSpec, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        self.spec = spec
        self.model_id = spec.model_id
        self.dim = spec.dim
        self.matrix = np.load(Path(model_dir) / MATRIX_FILE)
        if self.matrix.shape[1] != spec.dim:
            raise ValueError(f"table has {self.matrix.shape[1]} columns, expected {spec.dim}")
        self._tok = Tokenizer.from_file(str(Path(model_dir) / TOKENIZER_FILE))
        self._tok.no_padding()
        self._tok.no_truncation()

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """MiniLM token ids of each text, no special tokens, at most ``max_tokens`` each."""
        limit = self.spec.max_tokens
        encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [e.ids[:limit] for e in encs]

    def embed_documents(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Embed ``texts`` -> (n, dim) float32, rows in input order (no batching effects)."""
        at_least("batch_size", batch_size, 1)
        n = len(texts)
        out = np.empty((n, self.dim), dtype=np.float32)
        block = max(batch_size, _BLOCK)
        for start in range(0, n, block):
            part = texts[start : start + block]
            out[start : start + len(part)] = pool(self.matrix, self.token_ids(part))
            if progress is not None:
                progress(start + len(part))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def load_static(spec: ModelSpec, *, progress: Callable[[str], None] | None = None) -> Any:
    """Load (distilling first if needed) the static model of ``spec``."""
    model_dir = static_model_dir(spec, progress=progress)
    try:
        return StaticEmbedder(spec, model_dir)
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(
            f"Could not load the distilled model in {model_dir} ({exc}); delete that folder "
            "and run again to rebuild it."
        ) from exc
