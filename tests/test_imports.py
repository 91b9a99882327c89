"""Names a file imports from outside the repository (askrepo.imports), and the card's use of
them: a call of an imported ``escape`` is not a call of the index's ``escape``."""

from __future__ import annotations

from askrepo.datatypes import Chunk
from askrepo.evidence import Graph, evidence_card, gather_graph
from askrepo.imports import bindings, external_call, external_names, is_external
from tests.test_evidence import hit


def test_python_bindings_hand_worked():
    text = (
        "import re\n"
        "import os.path as osp\n"
        "from html import escape\n"
        "from .markup import (\n    render,\n    Tag as T,\n)\n"
        "def f():\n    from ._loop import loop_last\n"
    )
    assert bindings(text, "rich/console.py") == {
        "re": "re",
        "osp": "os.path",
        "escape": "html",
        "render": ".markup",
        "T": ".markup",
        "loop_last": "._loop",
    }


def test_js_bindings_hand_worked():
    text = (
        "import merge, { pick as p, type Opts } from 'lodash';\n"
        "import * as path from 'node:path';\n"
        "const { join } = require('./utils');\n"
        "const axios = require('axios');\n"
    )
    assert bindings(text, "lib/a.ts") == {
        "merge": "lodash",
        "p": "lodash",
        "Opts": "lodash",
        "path": "node:path",
        "join": "./utils",
        "axios": "axios",
    }
    assert bindings("from html import escape", "notes.txt") == {}


def test_external_modules_are_only_those_no_indexed_file_can_be():
    indexed = ["src/rich/markup.py", "src/rich/console.py", "lib/utils/index.js"]
    assert is_external("html", "src/rich/console.py", indexed)
    assert not is_external("rich.markup", "src/rich/console.py", indexed)
    assert not is_external("rich", "src/rich/console.py", indexed)  # a package of the repo
    assert not is_external(".markup", "src/rich/console.py", indexed)  # relative: the repo's
    assert is_external("lodash", "lib/a.js", indexed)
    assert not is_external("utils/index", "lib/a.js", indexed)
    assert not is_external("@/utils", "lib/a.js", indexed)  # a path alias: cannot tell


def test_a_call_is_external_only_when_every_call_site_is():
    bound = {"escape": "html", "re": "re", "markup": ".markup"}
    idx = ["rich/markup.py"]
    external = external_names(
        "from html import escape\nimport re\nfrom . import markup", "rich/a.py", idx
    )
    assert external == {"escape", "re"}  # .markup is the repository's
    assert {n for n, m in bound.items() if is_external(m, "rich/a.py", idx)} == external
    assert external_call("return escape(s)", "escape", external)
    assert external_call("re.escape(w) + re.escape(v)", "escape", external)
    assert not external_call("markup.escape(s)", "escape", external)
    assert not external_call("escape(s); obj.escape(t)", "escape", external)
    assert not external_call("return s", "escape", external)  # no call seen


def test_the_card_does_not_take_an_imported_name_for_the_indexes_own():
    escape_def = 'def escape(markup):\n    """Escape text for console markup."""\n    return x'
    export = 'def export_html(self):\n    """Export as HTML."""\n    return escape(text)'
    hits = [
        hit(1, "rich/markup.py", 48, escape_def, "escape"),
        hit(2, "rich/console.py", 2200, export, "Console.export_html", "method", ["escape"]),
    ]
    question = "How do `escape` and `Console.export_html` escape text?"
    plain = Graph(definitions={"escape": 1, "export_html": 1})
    rel = " ".join(r.text for r in evidence_card(question, hits, plain).relations)
    assert "calls `escape`" in rel  # without the imports: the name is unique, so stated
    graph = Graph(
        definitions={"escape": 1, "export_html": 1},
        external={"rich/console.py": frozenset({"escape"})},
    )
    rel = " ".join(r.text for r in evidence_card(question, hits, graph).relations)
    assert "calls `escape`" not in rel


class _Store:
    """Enough of a store for gather_graph: one definition, one caller, two files."""

    def __init__(self, chunks):
        self.chunks = chunks

    def by_symbol(self, names, classes, limit):
        return [(c.path, c, 0.0) for c in self.chunks if c.symbol in names]

    def callers(self, name, classes, limit):
        return [(c.path, c, 0.0) for c in self.chunks if name in c.calls]

    def files(self):
        return {c.path: None for c in self.chunks}

    def file_chunks(self, paths, limit=50):
        return [(c.path, c, 0.0) for p in paths for c in self.chunks if c.path == p]


def test_gather_graph_reads_the_imports_of_candidates_and_callers():
    imports = "from html import escape\nimport re"
    header = Chunk("rich/console.py", 1, 2, imports, "python", "window")
    caller = Chunk(
        "rich/console.py", 10, 12, "def export_html():\n    return escape(t)", "python",
        "function", "export_html", calls=["escape"],
    )  # fmt: skip
    own = Chunk("rich/markup.py", 48, 50, "def escape(m):\n    return m", "python", "function",
                "escape")  # fmt: skip
    graph = gather_graph(_Store([header, caller, own]), [hit(1, "rich/markup.py", 48, own.text,
                                                             "escape")])  # fmt: skip
    assert graph.external["rich/console.py"] == {"escape", "re"}  # neither is an indexed file
    assert graph.callers["escape"] == [caller]


def test_a_caller_that_imports_the_name_from_outside_is_not_listed():
    escape_def = 'def escape(markup):\n    """Escape text for console markup."""\n    return x'
    caller = Chunk(
        "rich/console.py", 2200, 2202, "def export_html(self):\n    return escape(text)",
        "python", "method", "Console.export_html", calls=["escape"],
    )  # fmt: skip
    hits = [hit(1, "rich/markup.py", 48, escape_def, "escape")]
    question = "Who calls `escape`?"
    graph = Graph(definitions={"escape": 1}, callers={"escape": [caller]})
    rel = " ".join(r.text for r in evidence_card(question, hits, graph).relations)
    assert "`Console.export_html`" in rel
    graph.external = {"rich/console.py": frozenset({"escape"})}
    rel = " ".join(r.text for r in evidence_card(question, hits, graph).relations)
    assert "`Console.export_html`" not in rel
