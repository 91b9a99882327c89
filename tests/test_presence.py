"""Issue 10 item 1: a refusal ("the code base does not contain X") must be certain.

Absence is decided by an exact whole-word scan of the indexed text (askrepo.presence), never by
the full-text ranker, which drops stop words, one-letter names and digits. Real index (LanceDB,
tree-sitter), real ripgrep; the fake embedder only because vectors play no part here.
"""

from __future__ import annotations

import builtins
import keyword

import pytest
from click_corpus import click_src

from askrepo import presence
from askrepo.answer import missing_identifiers
from askrepo.identifiers import STOP_WORDS
from askrepo.indexer import index_repo
from askrepo.store import open_index
from tests.fakes import FakeEmbedder

BUILTINS = sorted(n for n in dir(builtins) if n.isidentifier() and not n.startswith("_"))
STOPS = sorted(w for w in STOP_WORDS if w.isidentifier())


def test_term_regex_hand_worked():
    assert presence.text_has_term("get", ["x = d.get('a')"])
    assert not presence.text_has_term("get", ["x = d.getter('a')", "target = 1"])
    assert presence.text_has_term("getFileContext", ["def get_file_context(path):"])
    assert presence.text_has_term("HTTPServer", ["class http_server:"])
    assert presence.text_has_term("x", ["f(x, y)"]) and not presence.text_has_term("x", ["fx"])
    assert presence.text_has_term("Context.invoke", ["Context.invoke(cb)"])
    assert not presence.text_has_term("Context.invoke", ["SubContext.invoked"])
    assert presence.term_regex("") is None


@pytest.fixture(scope="module")
def words_repo(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    root = tmp_path_factory.mktemp("words")
    py = ["def use_builtins(data):"]
    py += [f"    v{i} = data.{name}" for i, name in enumerate(BUILTINS)]
    py += ["    return v0", ""]
    (root / "builtin_uses.py").write_text("\n".join(py))
    js = ["export function useWords(record) {"]
    js += [f"  record.{w}();" for w in STOPS]
    js += ["}", ""]
    (root / "words.js").write_text("\n".join(js))
    (root / "other.py").write_text("def get_file_context(path):\n    return path\n")
    mp = pytest.MonkeyPatch()
    mp.setenv("ASKREPO_HOME", str(home))
    index_repo(root, embedder=FakeEmbedder())
    yield root, open_index(root)
    mp.undo()


def test_builtins_and_stop_words_used_as_identifiers_are_never_refused(words_repo, monkeypatch):
    root, store = words_repo
    assert len(BUILTINS) > 100 and len(STOPS) > 100
    assert "get" in STOPS and "all" in BUILTINS and "id" in BUILTINS
    assert any(keyword.iskeyword(w) for w in STOPS)
    refused = {}
    for name in [*BUILTINS, *STOPS]:
        missing = missing_identifiers(f"Where is `{name}` used?", store)
        if missing:
            refused[name] = missing
    assert refused == {}


def test_an_identifier_that_appears_nowhere_is_still_refused(words_repo):
    _, store = words_repo
    for name in ("FrobnicateWidgetRegistry", "zzq_absent_name", "qq"):
        assert missing_identifiers(f"Where is `{name}` used?", store) == [name]
    # another identifier style of a name that exists is not a refusal
    assert missing_identifiers("What does `getFileContext` return?", store) == []


def test_changed_and_deleted_files_are_judged_by_the_indexed_text(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def only_in_a_indexed():\n    return 1\n")
    (root / "b.py").write_text("def only_in_b_indexed():\n    return 2\n")
    (root / "c.py").write_text("def keep():\n    return 3\n")
    index_repo(root, embedder=FakeEmbedder())
    store = open_index(root)
    (root / "a.py").write_text("def renamed():\n    return 1\n")  # changed since indexing
    (root / "b.py").unlink()  # deleted since indexing
    assert store.has_term("only_in_a_indexed") and store.has_term("only_in_b_indexed")
    assert not store.has_term("renamed_nowhere")


def test_eval_hiding_store_uses_the_same_rule(words_repo):
    from askrepo.evaluate import _HidingStore

    _, store = words_repo
    assert store.has_term("get_file_context")
    assert not _HidingStore(store, "other.py").has_term("get_file_context")
    assert _HidingStore(store, "other.py").has_term("get")  # still in words.js


def test_click_get_is_not_refused(tmp_path):
    """The issue's example: `get` (15 `.get(` calls in core.py) was refused on Click 8.4.1."""
    root = click_src()
    index_repo(root, embedder=FakeEmbedder())
    store = open_index(root)
    assert missing_identifiers("Where is `get` used to read the default map?", store) == []
    for name in ("all", "any", "id", "x", "iter", "len"):
        assert missing_identifiers(f"Where is `{name}()` called?", store) == [], name
    assert missing_identifiers("Where is `ClickOptionRegistry`?", store) == ["ClickOptionRegistry"]


def test_word_root_hand_worked():
    assert presence.word_root("YAML", "yaml") == "yam"
    assert presence.word_root("dashboards", "dashboard") == "dashboa"
    assert presence.word_root("lazily", "lazili") == "laz"  # Snowball's y -> i, then dropped


def test_a_word_is_nowhere_only_when_no_file_holds_its_root_in_any_form(words_repo):
    from askrepo.answer import nowhere_words

    _, store = words_repo
    assert store.has_fragment("contex")  # inside get_file_context
    assert store.has_fragment("FILE")  # any case
    assert not store.has_fragment("entangl")
    assert store.has_fragment("a-b")  # not a word: never claimed absent
    assert nowhere_words(["contexts", "Entanglement"], store) == ["Entanglement"]
    assert not _hiding(store, "other.py").has_fragment("contex")  # only other.py has it
    # several at once, with one file list and one check of changed files
    assert store.absent_fragments(["contex", "entangl", "a-b", "quux9"]) == ["entangl", "quux9"]
    assert _hiding(store, "other.py").absent_fragments(["contex", "FILE"]) == ["contex"]


def _hiding(store, path):
    from askrepo.evaluate import _HidingStore

    return _HidingStore(store, path)
