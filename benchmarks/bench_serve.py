"""Load benchmark of ``askrepo serve`` (run by hand, not a test).

    .venv/bin/python benchmarks/bench_serve.py [--clients 20] [--seconds 60]
        [--write docs/benchmarks.md]

1. Two repositories are indexed with the real MiniLM model into a benchmark ASKREPO_HOME under
   .cache/ (kept between runs, so a re-run only re-checks): the Click 8.4.1 sdist and a copy of
   askrepo's own package.
2. ``askrepo serve --repo CLICK --repo ASKREPO`` runs as its own process on a free loopback
   port (so the clients do not share its interpreter).
3. Baseline: one client, one request at a time, the same mix, for a few seconds.
4. Load: N concurrent clients (asyncio + httpx, one connection each) for S seconds, each picking
   at random: a search (hybrid, k=8, a question from the list, over one repo or both) or a file
   read (/api/file on a random indexed file, 120 lines from a random start). Every response
   that is not HTTP 200 with the expected JSON counts as an error.
Reports per kind: requests, errors, p50 / p95 / max latency, throughput; with --write the
"## Serve" section of the markdown file is replaced.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
QUESTIONS = [
    "how are command line options parsed",
    "where is the help text formatted",
    "how does a command invoke its callback",
    "where are environment variables read for options",
    "how is a progress bar rendered",
    "how are prompts confirmed",
    "where is the exit code set",
    "how does shell completion work",
    "how are file paths validated",
    "how are secrets redacted before indexing",
    "where is the index committed atomically",
    "how are search results fused with reciprocal rank fusion",
    "how does the MCP server read a file safely",
    "where are tokens checked",
    "Context.invoke",
    "resolve_repo_path",
    "how are citations resolved to line ranges",
    "how is the embedding model loaded",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def corpora() -> tuple[Path, Path]:
    sys.path.insert(0, str(ROOT / "tests"))
    from click_corpus import click_src

    click = click_src(skip=False)
    mine = CACHE / "bench-serve-askrepo"
    if mine.exists():
        shutil.rmtree(mine)
    shutil.copytree(
        ROOT / "askrepo", mine / "askrepo", ignore=shutil.ignore_patterns("__pycache__")
    )
    return click, mine


def index(repos: list[Path], env: dict[str, str]) -> None:
    for repo in repos:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "askrepo.cli", "index", str(repo), "--json"],
            env=env,
            check=True,
            capture_output=True,
        )
        print(f"indexed {repo.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))]


class Mix:
    def __init__(
        self, repos: list[dict], files: dict[str, list[str]], seed: int, search_share: float = 0.5
    ):
        self.search_share = search_share
        self.repos = repos
        self.files = files
        self.rng = random.Random(seed)

    def next(self) -> tuple[str, str, dict]:
        if self.rng.random() < self.search_share:
            repo = self.rng.choice(["all"] + [r["name"] for r in self.repos])
            q = self.rng.choice(QUESTIONS)
            return "search", "/api/search", {"q": q, "repo": repo, "k": 8}
        r = self.rng.choice(self.repos)
        path = self.rng.choice(self.files[r["name"]])
        start = self.rng.randint(1, 200)
        return (
            "file",
            "/api/file",
            {"repo": r["name"], "path": path, "start": 1, "end": start + 120},
        )


async def client(url: str, mix: Mix, until: float, out: list, errors: list) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        while time.perf_counter() < until:
            kind, path, params = mix.next()
            t0 = time.perf_counter()
            try:
                r = await c.get(path, params=params)
                ok = r.status_code == 200 and (
                    "hits" in r.json() if kind == "search" else "lines" in r.json()
                )
            except Exception as exc:  # counted, not raised
                ok, r = False, exc
            dt = (time.perf_counter() - t0) * 1000
            if ok:
                out.append((kind, dt))
            else:
                errors.append((kind, getattr(r, "status_code", None), str(r)[:200]))


async def run_phase(url: str, repos, files, clients: int, seconds: float, share: float = 0.5):
    out: list[tuple[str, float]] = []
    errors: list = []
    until = time.perf_counter() + seconds
    t0 = time.perf_counter()
    await asyncio.gather(
        *(client(url, Mix(repos, files, i, share), until, out, errors) for i in range(clients))
    )
    return out, errors, time.perf_counter() - t0


def summarize(out, errors, wall) -> list[dict]:
    rows = []
    for kind in ("search", "file", "all"):
        lat = [d for k, d in out if kind in ("all", k)]
        errs = [e for e in errors if kind in ("all", e[0])]
        rows.append(
            {
                "kind": kind,
                "n": len(lat),
                "errors": len(errs),
                "p50": statistics.median(lat) if lat else float("nan"),
                "p95": pct(lat, 95),
                "max": max(lat) if lat else float("nan"),
                "rps": len(lat) / wall,
            }
        )
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| requests | count | errors | p50 ms | p95 ms | max ms | per second |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['n']} | {r['errors']} | {r['p50']:.1f} | "
            f"{r['p95']:.1f} | {r['max']:.1f} | {r['rps']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--baseline-seconds", type=float, default=10)
    ap.add_argument("--search-share", type=float, default=0.5, help="share of searches")
    ap.add_argument("--write", type=Path)
    args = ap.parse_args()

    env = {
        **os.environ,
        "ASKREPO_HOME": str(CACHE / "bench-serve-home"),
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    os.environ["ASKREPO_HOME"] = env["ASKREPO_HOME"]
    click, mine = corpora()
    index([click, mine], env)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "askrepo.cli",
        "serve",
        "--repo",
        str(click),
        "--repo",
        str(mine),
        "--port",
        str(port),
        "--max-concurrent",
        str(max(8, args.clients)),
    ]
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        import httpx

        for _ in range(300):
            try:
                repos = httpx.get(f"{url}/api/repos", timeout=5).json()["repos"]
                break
            except Exception:
                time.sleep(0.2)
        else:
            raise SystemExit("the server did not start: " + server.stderr.read().decode()[-500:])
        from askrepo.store import open_index

        files = {r["name"]: sorted(open_index(Path(r["path"])).files()) for r in repos}
        # warm up: load each repo's model and in-memory index once
        for r in repos:
            httpx.get(f"{url}/api/search", params={"q": "warm up", "repo": r["name"]}, timeout=120)
            httpx.get(f"{url}/api/search", params={"q": "warm up", "repo": r["name"]}, timeout=120)
        share = args.search_share
        base = summarize(
            *asyncio.run(run_phase(url, repos, files, 1, args.baseline_seconds, share))
        )
        load = summarize(
            *asyncio.run(run_phase(url, repos, files, args.clients, args.seconds, share))
        )
    finally:
        server.terminate()
        server.wait(10)

    chunks = {r["name"]: r["chunks"] for r in repos}
    b_all, l_all = base[-1], load[-1]
    cmdline = (
        f"`.venv/bin/python benchmarks/bench_serve.py --clients {args.clients} "
        f"--seconds {args.seconds:g} --write docs/benchmarks.md`"
    )
    when = f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}"
    served = ", ".join(f"{n} ({c} chunks)" for n, c in chunks.items())
    text = f"""## Serve

{cmdline}

One `askrepo serve` process on loopback ({platform.machine()}, {os.cpu_count()} cores shared with
other jobs — the machine was loaded; {when}),
serving two indexes: {served}. Clients: asyncio +
httpx in another process, one connection each; half the requests are searches (hybrid, k=8, a
question from a fixed list, over one repo or both fused), half are file reads (`/api/file`, up to
120 lines of a random indexed file). Latency is client-side wall time per request.

Baseline, 1 client for {args.baseline_seconds:g} s:

{table(base)}

Load, {args.clients} concurrent clients for {args.seconds:g} s:

{table(load)}

Errors under load: **{l_all["errors"]}**. Median latency under load is
{l_all["p50"] / b_all["p50"]:.1f}x the single-client median (requests queue for 2 cores: searches
of one repo run one at a time, because the repo's embedding model is shared); throughput
{l_all["rps"]:.1f} vs {b_all["rps"]:.1f} requests/s.
"""
    print(text)
    if args.write:
        doc = args.write.read_text(encoding="utf-8") if args.write.exists() else "# Benchmarks\n"
        if re.search(r"^## Serve\n", doc, re.M):
            doc = re.sub(r"^## Serve\n.*?(?=^## |\Z)", text + "\n", doc, flags=re.M | re.S)
        else:
            doc = doc.rstrip("\n") + "\n\n" + text
        args.write.write_text(doc, encoding="utf-8")
    if l_all["errors"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
