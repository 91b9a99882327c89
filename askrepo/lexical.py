"""askrepo's own full-text index: BM25F over a chunk's text and its name.

LanceDB's full-text search scores one column with fixed BM25 parameters. Code search gains from
weighing a chunk's *name* (its symbol, split into words) apart from its body: a query word that
names the function is stronger evidence than the same word somewhere in its 80 lines. BM25F
(Robertson et al., "Simple BM25 extension to multiple weighted fields") adds each field's
length-normalised term frequency, weighted, *before* the saturation:

    tf~(t, d) = tf_body / (1 - B + B * len_body / avg_body)
              + NAME_WEIGHT * tf_name / (1 - NAME_B + NAME_B * len_name / avg_name)
    score(q, d) = sum over distinct query terms t of idf(t) * tf~ * (K1 + 1) / (K1 + tf~)
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))      (df over the body, which holds the name)

Measured on the dev benchmark (docs/eval.md, "Session 20"): the name field is worth +0.009
nDCG@10 over the same engine without it, and a query costs well under a millisecond where
LanceDB's took 4-10 ms.

The index is a set of ``.npy`` files (term-major postings, a sorted vocabulary, per-chunk ids,
classes and field lengths) written by the index writer next to the LanceDB tables and read
memory-mapped, so a one-shot CLI search pays almost nothing to open it. ``build`` reuses the
postings of chunks an earlier index already holds (a chunk id names its content), so a run that
changes a few files tokenizes only their chunks. Pure numpy; nothing here knows LanceDB.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .identifiers import STOP_WORDS, split_identifier, stem

K1 = 1.2
B = 0.75
NAME_WEIGHT = 10.0  # swept 0-20 on the dev benchmark: 8-12 best (docs/eval.md, Session 20)
NAME_B = 0.5
MAX_TERM_BYTES = 64  # a longer token (a hash, a base64 blob) is not indexed
FORMAT = 1

_TOKEN = re.compile(r"[^\W_]+")
_FILES = ("vocab", "offsets", "docs", "tf_body", "tf_name", "len_body", "len_name", "classes")


@lru_cache(maxsize=1 << 16)
def _term(token: str) -> str | None:
    if len(token) > 40 or token in STOP_WORDS:
        return None
    t = stem(token)
    return t if len(t.encode("utf-8")) <= MAX_TERM_BYTES else None


def analyze(text: str) -> list[str]:
    """Index terms of a text: alphanumeric runs, lower-cased, stop words out, stemmed.

    >>> analyze("Parse the options line: ndots, timeout_ms")
    ['pars', 'option', 'lin', 'ndot', 'timeout', 'ms']
    """
    out = []
    for tok in _TOKEN.findall(text.lower()):
        t = _term(tok)
        if t is not None:
            out.append(t)
    return out


def idf(df: int, n_docs: int) -> float:
    """BM25's idf of a term ``df`` of ``n_docs`` chunks hold (the module docstring's formula)."""
    return float(np.log(1 + (n_docs - df + 0.5) / (df + 0.5)))


def feedback_terms(
    texts: Sequence[str],
    query: str,
    doc_freq: Callable[[str], int],
    n_docs: int,
    limit: int,
    min_len: int = 3,
) -> list[str]:
    """Pseudo-relevance feedback: the words of ``texts`` (the text of the top chunks of a first
    search) that best describe them, for a second full-text search that finds the code those
    chunks are about in the code's own words (``ranking`` stage ``feedback``).

    A word's weight is the sum, over the texts it occurs in, of its idf in the index
    (``doc_freq``: chunks holding an index term; ``n_docs`` chunks in all, the idf of
    ``LexicalIndex.search``): a word that several top chunks share and that little else holds
    comes first. Left out: the query's own terms (the first search had them), words shorter
    than ``min_len``, and a term no other chunk holds (df < 2: it can find nothing new).
    Returns at most ``limit`` words as written in the first text that has them (lower case),
    best first, ties in order of appearance; each analyses to its index term again.

    >>> df = {"hashtag": 2, "chop": 2, "trail": 10, "rtrim": 40}.get
    >>> texts = ["chop_trailing_hashtags(ch)", "cmark_chunk_rtrim(ch); chop(hashtags)"]
    >>> feedback_terms(texts, "strip the closing hashes", lambda t: df(t, 0), 1000, 3)
    ['chop', 'hashtags', 'trailing']
    """
    skip = set(analyze(query))
    weight: dict[str, float] = {}
    word: dict[str, str] = {}
    for text in texts:
        seen: set[str] = set()
        for tok in _TOKEN.findall(text.lower()):
            t = _term(tok)
            if t is None or t in seen or t in skip or len(tok) < min_len:
                continue
            seen.add(t)
            df = doc_freq(t)
            if df < 2:
                continue
            weight[t] = weight.get(t, 0.0) + idf(df, n_docs)
            word.setdefault(t, tok)
    best = sorted(weight, key=lambda t: -weight[t])[:limit]  # stable: ties keep first seen
    return [word[t] for t in best]


def name_text(symbol: str | None) -> str:
    """The name field of a chunk: its symbol's words and the symbol itself
    (``Dispatcher.poll_read_head`` → ``dispatcher poll read head Dispatcher.poll_read_head``)."""
    if not symbol:
        return ""
    return " ".join([*split_identifier(symbol.replace(".", " ")), symbol])


@dataclass
class Doc:
    """One chunk as the index reads it."""

    id: str
    file_class: str
    body: str  # the code-aware full-text column (indexer.fts_text)
    symbol: str | None


class LexicalIndex:
    """Term-major postings over a fixed list of chunks (see the module docstring)."""

    def __init__(self, ids: Sequence[str], arrays: dict[str, Any], class_names: Sequence[str]):
        self.ids = list(ids)
        self.class_names = list(class_names)
        self.vocab = arrays["vocab"]
        self.offsets = arrays["offsets"]
        self.docs = arrays["docs"]
        self.tf_body = arrays["tf_body"]
        self.tf_name = arrays["tf_name"]
        self.len_body = arrays["len_body"]
        self.len_name = arrays["len_name"]
        self.classes = arrays["classes"]
        self._norms_of: dict[tuple[float, float], tuple[Any, Any]] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def _norms(self, b: float, name_b: float) -> tuple[Any, Any]:
        """Per chunk, each field's length normalisation (1 - b + b * len / avg len)."""
        found = self._norms_of.get((b, name_b))
        if found is None:
            lb = np.asarray(self.len_body, dtype=np.float64)
            ln = np.asarray(self.len_name, dtype=np.float64)
            avg_b = max(float(lb.mean()) if len(lb) else 0.0, 1e-9)
            avg_n = max(float(ln.mean()) if len(ln) else 0.0, 1e-9)
            found = (1 - b + b * lb / avg_b, 1 - name_b + name_b * ln / avg_n)
            self._norms_of[(b, name_b)] = found
        return found

    def doc_freq(self, term: str) -> int:
        """How many chunks hold the index term ``term`` (0 if none)."""
        t = self.term_index(term)
        return 0 if t is None else int(self.offsets[t + 1]) - int(self.offsets[t])

    def term_index(self, term: str) -> int | None:
        key = term.encode("utf-8")
        i = int(np.searchsorted(self.vocab, key))
        if i < len(self.vocab) and self.vocab[i] == key:
            return i
        return None

    def search(
        self,
        query: str,
        k: int,
        classes: Iterable[str] | None = None,
        *,
        name_weight: float = NAME_WEIGHT,
        k1: float = K1,
        b: float = B,
        name_b: float = NAME_B,
    ) -> list[tuple[str, float]]:
        """The ``k`` best chunks for ``query`` as (id, score), best first; ties keep index
        order. ``classes``: only chunks of these file classes."""
        n = len(self.ids)
        if k <= 0 or n == 0:
            return []
        norm_body, norm_name = self._norms(b, name_b)
        scores = np.zeros(n, dtype=np.float64)
        for term in dict.fromkeys(analyze(query)):
            t = self.term_index(term)
            if t is None:
                continue
            lo, hi = int(self.offsets[t]), int(self.offsets[t + 1])
            docs = np.asarray(self.docs[lo:hi], dtype=np.int64)
            df = hi - lo
            tf = np.asarray(self.tf_body[lo:hi], dtype=np.float64) / norm_body[docs]
            if name_weight:
                tf = tf + name_weight * np.asarray(self.tf_name[lo:hi]) / norm_name[docs]
            scores[docs] += idf(df, n) * tf * (k1 + 1) / (k1 + tf)
        if classes is not None:
            allowed = set(classes)
            wanted = [i for i, c in enumerate(self.class_names) if c in allowed]
            scores[~np.isin(np.asarray(self.classes), wanted)] = 0.0
        hits = np.flatnonzero(scores > 0)
        if len(hits) > k:
            hits = hits[np.argpartition(-scores[hits], k - 1)[:k]]
        order = hits[np.lexsort((hits, -scores[hits]))]
        return [(self.ids[i], float(scores[i])) for i in order]

    # -- files ------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the index into the (new, empty) directory ``path``."""
        path.mkdir(parents=True, exist_ok=False)
        for name in _FILES:
            np.save(path / f"{name}.npy", np.asarray(getattr(self, name)), allow_pickle=False)
        info = {"format": FORMAT, "ids": self.ids, "classes": self.class_names}
        (path / "index.json").write_text(json.dumps(info), "utf-8")

    @classmethod
    def load(cls, path: Path) -> LexicalIndex:
        """Open an index written by ``save`` (memory-mapped). ValueError if it is of another
        format; OSError if a file is missing."""
        info = json.loads((path / "index.json").read_text("utf-8"))
        if info.get("format") != FORMAT:
            raise ValueError(f"lexical index format {info.get('format')!r}")
        arrays = {
            name: np.load(path / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            for name in _FILES
        }
        if len(arrays["offsets"]) != len(arrays["vocab"]) + 1 or len(arrays["len_body"]) != len(
            info["ids"]
        ):
            raise ValueError("lexical index files do not agree")
        return cls(info["ids"], arrays, info["classes"])


def build(
    ids: Sequence[str],
    file_classes: Sequence[str],
    read: Any,
    previous: LexicalIndex | None = None,
) -> LexicalIndex:
    """The index of the chunks ``ids`` (in this order) with their file classes.

    A chunk ``previous`` holds keeps its postings (same id, same content); the others are read
    with ``read(missing_ids) -> Iterable[Doc]`` and tokenized.
    """
    n = len(ids)
    class_names = sorted(set(file_classes))
    class_of = {c: i for i, c in enumerate(class_names)}
    classes = np.array([class_of[c] for c in file_classes], dtype=np.uint8)
    len_body = np.zeros(n, dtype=np.float32)
    len_name = np.zeros(n, dtype=np.float32)
    vocab: dict[str, int] = {}
    parts: list[tuple[Any, Any, Any, Any]] = []  # (term ids, docs, tf_body, tf_name)

    position = {cid: i for i, cid in enumerate(ids)}
    old_pos = {cid: i for i, cid in enumerate(previous.ids)} if previous is not None else {}
    reused = [(old_pos[cid], i) for i, cid in enumerate(ids) if cid in old_pos]
    if reused and previous is not None:
        old_docs = np.asarray(previous.docs)
        new_of_old = np.full(len(previous.ids), -1, dtype=np.int64)
        olds = np.array([o for o, _ in reused], dtype=np.int64)
        news = np.array([i for _, i in reused], dtype=np.int64)
        new_of_old[olds] = news
        keep = new_of_old[old_docs] >= 0
        offsets = np.asarray(previous.offsets)
        term_of_posting = np.repeat(np.arange(len(previous.vocab)), np.diff(offsets))[keep]
        used = np.unique(term_of_posting)
        remap = np.full(len(previous.vocab), -1, dtype=np.int64)
        for t in used:
            remap[t] = vocab.setdefault(previous.vocab[t].decode("utf-8"), len(vocab))
        parts.append(
            (
                remap[term_of_posting],
                new_of_old[old_docs[keep]],
                np.asarray(previous.tf_body)[keep],
                np.asarray(previous.tf_name)[keep],
            )
        )
        len_body[news] = np.asarray(previous.len_body)[olds]
        len_name[news] = np.asarray(previous.len_name)[olds]

    missing = [cid for cid in ids if cid not in old_pos]
    if missing:
        parts.append(_tokenize(read(missing), position, vocab, len_body, len_name))

    words = sorted(vocab)
    order_of = np.empty(len(vocab), dtype=np.int64)
    for rank, w in enumerate(words):
        order_of[vocab[w]] = rank
    if parts:
        terms = order_of[np.concatenate([p[0] for p in parts]).astype(np.int64)]
        docs = np.concatenate([p[1] for p in parts]).astype(np.int64)
        tfb = np.concatenate([p[2] for p in parts]).astype(np.float32)
        tfn = np.concatenate([p[3] for p in parts]).astype(np.float32)
    else:
        terms = docs = np.zeros(0, dtype=np.int64)
        tfb = tfn = np.zeros(0, dtype=np.float32)
    order = np.lexsort((docs, terms))
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(np.bincount(terms, minlength=len(words)), out=offsets[1:])
    width = max((len(w.encode("utf-8")) for w in words), default=1)
    arrays = {
        "vocab": np.array([w.encode("utf-8") for w in words], dtype=f"S{width}"),
        "offsets": offsets,
        "docs": docs[order].astype(np.int32),
        "tf_body": tfb[order],
        "tf_name": tfn[order],
        "len_body": len_body,
        "len_name": len_name,
        "classes": classes,
    }
    return LexicalIndex(ids, arrays, class_names)


def _tokenize(
    docs: Iterable[Doc],
    position: dict[str, int],
    vocab: dict[str, int],
    len_body: Any,
    len_name: Any,
) -> tuple[Any, Any, Any, Any]:
    """Postings (term ids in ``vocab``, chunk positions, body and name frequencies) of ``docs``;
    fills their field lengths. Tokens are counted per chunk in C (``Counter``) and mapped to
    terms once per distinct token; (term, chunk) pairs that several tokens map to ("parse",
    "parses") are summed with numpy."""
    token_id: dict[str, int] = {}
    tok_l: list[int] = []
    doc_l: list[int] = []
    tf_l: list[int] = []
    field_l: list[int] = []  # 0 body, 1 name
    id_of = token_id.__getitem__
    for doc in docs:
        i = position.get(doc.id)
        if i is None:
            continue
        for field, text in ((0, doc.body), (1, name_text(doc.symbol))):
            counts = Counter(_TOKEN.findall(text.lower()))
            for t in [t for t in counts if t not in token_id]:  # new tokens: the next ids
                token_id[t] = len(token_id)
            tok_l.extend(map(id_of, counts))  # a C loop, no Python frame per token
            tf_l.extend(counts.values())
            doc_l.extend([i] * len(counts))
            field_l.extend([field] * len(counts))
    term_of_token = np.full(len(token_id), -1, dtype=np.int64)
    for tok, k in token_id.items():
        term = _term(tok)
        if term is not None:
            term_of_token[k] = vocab.setdefault(term, len(vocab))
    terms = term_of_token[np.array(tok_l, dtype=np.int64)]
    docs_a = np.array(doc_l, dtype=np.int64)
    tf = np.array(tf_l, dtype=np.float32)
    is_name = np.array(field_l, dtype=bool)
    keep = terms >= 0
    terms, docs_a, tf, is_name = terms[keep], docs_a[keep], tf[keep], is_name[keep]
    np.add.at(len_body, docs_a[~is_name], tf[~is_name])
    np.add.at(len_name, docs_a[is_name], tf[is_name])
    if len(terms) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float32)
    order = np.lexsort((docs_a, terms))
    terms, docs_a, tf, is_name = terms[order], docs_a[order], tf[order], is_name[order]
    starts = np.flatnonzero(
        np.concatenate(([True], (terms[1:] != terms[:-1]) | (docs_a[1:] != docs_a[:-1])))
    )
    tfb = np.add.reduceat(np.where(is_name, 0, tf).astype(np.float32), starts)
    tfn = np.add.reduceat(np.where(is_name, tf, 0).astype(np.float32), starts)
    return terms[starts], docs_a[starts], tfb, tfn
