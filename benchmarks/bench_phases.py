"""Two-phase indexing benchmark (run by hand, not a test).

    .venv/bin/python benchmarks/bench_phases.py --corpus /work/.corpora/django-10k \\
        [--corpus /work/.corpora/Django-5.1.4] [--embed-seconds 60] [--sample 512]

For each --corpus (a fresh ASKREPO_HOME each, real MiniLM):

* starts ``askrepo index CORPUS`` as a child process and polls; as soon as phase 1 has
  committed, runs ``askrepo search --json`` in another process: **first search possible**
  = seconds from starting the index to that search returning results;
* lets phase 2 run for --embed-seconds, reads the rate from the committed ``embedded``
  count, the child's peak RSS (VmHWM), then SIGKILLs it and checks the index still answers
  (``status`` shows ``embedded: N / M``, a hybrid search says ``dense_partial``).

Then, in this process, embedding throughput on --sample chunks of the first corpus, the
old way (file-order batches of 256, sorted inside each) against the new one (length-bucketed
batches over the whole run), alternating A/B/A/B so machine load hits both alike:
chunks/s and tokens/s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's askrepo, also for the in-process part
QUERY = "how are database migrations applied"


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "askrepo.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )


def _vmhwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _meta(home: Path) -> dict | None:
    for p in home.glob("indexes/*/*/meta.json"):
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError):
            return None
    return None


def phases(corpus: Path, embed_seconds: float) -> dict:
    home = Path(tempfile.mkdtemp(prefix="askrepo-bench-"))
    env = dict(os.environ, ASKREPO_HOME=str(home), PYTHONPATH=str(ROOT))
    t0 = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "askrepo.cli", "index", str(corpus)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    out: dict = {"corpus": str(corpus)}
    try:
        while _meta(home) is None:
            if child.poll() is not None:
                raise SystemExit(f"index exited early ({child.returncode})")
            time.sleep(0.2)
        out["phase1_s"] = time.monotonic() - t0
        m1 = _meta(home)
        out["chunks"] = m1["chunk_count"]
        res = _cli("search", QUERY, "--repo", str(corpus), "--json", env=env)
        assert res.returncode == 0, res.stderr
        data = json.loads(res.stdout)
        out["first_search_s"] = time.monotonic() - t0
        out["first_search_hits"] = len(data["hits"])
        out["first_search_dense_partial"] = data["dense_partial"]
        e0, te0 = m1["embedded_count"], time.monotonic()
        time.sleep(embed_seconds)
        m2 = _meta(home)
        out["phase2_chunks_per_s"] = (m2["embedded_count"] - e0) / (time.monotonic() - te0)
        out["embedded_at_kill"] = m2["embedded_count"]
        out["peak_rss_mb"] = _vmhwm_mb(child.pid)
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
            child.wait()
    st = json.loads(_cli("status", str(corpus), "--json", env=env).stdout)
    out["status_after_kill"] = f"embedded: {st['embedded']:,} / {st['chunk_count']:,} chunks"
    res = json.loads(_cli("search", QUERY, "--repo", str(corpus), "--json", env=env).stdout)
    out["search_after_kill"] = {"hits": len(res["hits"]), "dense_partial": res["dense_partial"]}
    return out


def throughput(corpus: Path, sample: int, rounds: int = 2) -> dict:
    from tokenizers import Tokenizer

    from askrepo.chunker import chunk_text
    from askrepo.embedder import converted_model_dir, load_embedder, model_spec
    from askrepo.indexer import ENCODE_BATCH, embed_batches, embed_text
    from askrepo.ingest import read_text, walk

    chunks = []
    for f in walk(corpus).files:
        got = read_text(corpus, f.path)
        if got:
            chunks.extend(chunk_text(f.path, got[0], f.language))
    random.Random(0).shuffle(chunks)
    texts = [embed_text(c, True) for c in chunks[:sample]]
    emb = load_embedder("minilm")
    tok = Tokenizer.from_file(str(converted_model_dir(model_spec("minilm")) / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tokens = sum(len(e.ids) for e in tok.encode_batch(texts))

    def old() -> None:  # before: file-order batches of 256, sorted by length inside each
        for i in range(0, len(texts), 256):
            emb.embed_documents(texts[i : i + 256])

    def new() -> None:
        for idx in embed_batches(texts, 256):
            emb.embed_documents([texts[i] for i in idx], batch_size=ENCODE_BATCH)

    emb.embed_documents(texts[:32])  # warm-up
    times: dict[str, list[float]] = {"before": [], "after": []}
    for _ in range(rounds):
        for name, fn in (("before", old), ("after", new)):
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    out = {"sample_chunks": len(texts), "sample_tokens": tokens}
    for name, ts in times.items():
        s = statistics.median(ts)
        out[name] = {"chunks_per_s": len(texts) / s, "tokens_per_s": tokens / s}
    out["threads"] = len(os.sched_getaffinity(0))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", action="append", required=True)
    ap.add_argument("--skip-phases", action="store_true")
    ap.add_argument("--embed-seconds", type=float, default=60)
    ap.add_argument("--sample", type=int, default=512)
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args()
    print(f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus", flush=True)
    for c in [] if args.skip_phases else args.corpus:
        print(json.dumps(phases(Path(c), args.embed_seconds)), flush=True)
    if not args.skip_throughput:
        print(json.dumps(throughput(Path(args.corpus[0]), args.sample)), flush=True)
    print(f"load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
