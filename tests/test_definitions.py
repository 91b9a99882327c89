"""One definition of "definition" (issue 10 item 4): find_symbol never returns a markdown
heading or a line window, through the store, the MCP service and symbol boosting alike."""

from __future__ import annotations

from askrepo.datatypes import NON_DEFINITION_KINDS, is_definition
from askrepo.indexer import index_repo
from askrepo.store import open_index
from tests.fakes import FakeEmbedder


def test_is_definition_hand_worked():
    assert NON_DEFINITION_KINDS == {"window", "text", "section"}
    for kind in ("function", "method", "class"):
        assert is_definition(kind)
    for kind in ("window", "text", "section", "", None):
        assert not is_definition(kind)


def _repo(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "README.md").write_text(
        "# Guide\n\nIntro.\n\n## parse_config\n\nCall it.\n\n## Installation\n\npip install\n"
    )
    (root / "app.py").write_text("def parse_config(path):\n    return path\n")
    index_repo(root, embedder=FakeEmbedder())
    return root


def test_find_symbol_returns_definitions_not_headings(tmp_path):
    root = _repo(tmp_path)
    store = open_index(root)
    kinds = {c.kind for _, c, _ in store.where("kind = 'section'")}
    assert kinds == {"section"}  # the headings really are indexed as sections
    found = store.find_symbol("parse_config")
    assert [(c.path, c.kind) for c in found] == [("app.py", "function")]
    assert store.find_symbol("Installation") == []  # a heading only: no definition

    from askrepo.mcp_server import Service

    svc = Service([root])
    assert [d["path"] for d in svc.find_symbol("parse_config")["definitions"]] == ["app.py"]
    assert svc.find_symbol("Installation")["definitions"] == []
