"""What code and history indexes written before askrepo's own full-text index
(``askrepo.lexical``) held: LanceDB's full-text index on their ``fts`` column."""

from __future__ import annotations

from typing import Any


def lancedb_fts_index(tbl: Any) -> int:
    """Build LanceDB's full-text index on ``tbl`` with the configuration askrepo used for it,
    and return the table version that holds it."""
    from lancedb.index import FTS

    tbl.create_index(
        "fts", config=FTS(with_position=False, stem=True, remove_stop_words=True), replace=True
    )
    return tbl.version
