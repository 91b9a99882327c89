"""Run an index in a child process (for kill / concurrency tests).

usage: python -m tests.index_child ROOT [PAUSE_STAGE] [LOOPS]
(environment: INDEX_CHILD_PIECE_CHARS=N gives the fake embedder piece vectors, as
``ModelSpec.piece_chars``)
With PAUSE_STAGE, prints "AT <stage>" and sleeps when that stage is first reported, so the parent
can SIGKILL it there ("phase1": just after phase 1 committed; "embed": after 8 chunks got
vectors, mid-phase-2). With LOOPS, re-indexes that many times, toggling a file between two versions.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import askrepo.indexer as indexer
from askrepo.indexer import index_repo
from tests.fakes import FakeEmbedder

VERSION_A = "def alpha_handler(request):\n    return 'alpha'\n"
VERSION_B = "def beta_handler(request):\n    return 'beta'\n"


def main() -> None:
    root = Path(sys.argv[1])
    pause = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
    loops = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    indexer.EMBED_BATCH = 4  # many small table writes, so a kill can land between them
    indexer.STORE_BATCH = 4

    def progress(stage: str, done: int, total: int) -> None:
        if stage == pause and (stage != "embed" or done >= 8):
            print("AT", stage, flush=True)
            time.sleep(120)

    if loops:
        for i in range(loops):
            (root / "toggle.py").write_text(VERSION_A if i % 2 else VERSION_B)
            index_repo(root, embedder=FakeEmbedder())
        print("DONE", flush=True)
        return
    pieces = int(os.environ.get("INDEX_CHILD_PIECE_CHARS") or 0)
    index_repo(root, embedder=FakeEmbedder(piece_chars=pieces), progress=progress)
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
