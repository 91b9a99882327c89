"""`askrepo callers` / `find_callers` on a real index (tree-sitter call edges, LanceDB, MiniLM)."""

from __future__ import annotations

import json
import subprocess

import pytest

from askrepo.callers import find_callers
from askrepo.errors import UsageError
from askrepo.indexer import index_repo
from askrepo.store import open_index
from tests.fixture_repo import askrepo_home, run_cli

FILES = {
    "pkg/factory.py": (
        "def create(kind):\n"
        '    """Make a thing of this kind."""\n'
        "    return {'kind': kind}\n"
        "\n"
        "\n"
        "def escape(text):\n"
        "    return text.replace('<', '&lt;')\n"
    ),
    "pkg/hasher.py": (
        "class Hasher:\n"
        "    def create(self, seed):\n"
        "        return Hasher()\n"
        "\n"
        "    def rehash(self, seed):\n"
        "        return self.create(seed)\n"
    ),
    "pkg/hmac.py": ("class Hmac:\n    def create(self, key):\n        return Hmac()\n"),
    "pkg/users.py": (
        "from html import escape\n"
        "from pkg.factory import create\n"
        "from pkg.hasher import Hasher\n"
        "\n"
        "\n"
        "def make_user(name):\n"
        '    """Calls create() in a docstring: not a call line."""\n'
        "    user = create('user')\n"
        "    return user\n"
        "\n"
        "\n"
        "def seed_hash(seed):\n"
        "    return Hasher.create(Hasher(), seed)\n"
        "\n"
        "\n"
        "def anything(obj):\n"
        "    return obj.create(1)\n"
        "\n"
        "\n"
        "def page(title):\n"
        "    return '<h1>' + escape(title)\n"
        "\n"
        "\n"
        "def typed(h: Hasher, seed):\n"
        "    return h.create(seed)\n"
        "\n"
        "\n"
        "def with_hmac(key):\n"
        "    mac = Hmac()\n"
        "    return mac.create(key)\n"
    ),
    "tests/test_users.py": (
        "from pkg.users import make_user\n\n\ndef test_make_user():\n    assert make_user('a')\n"
    ),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("callers") / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = tmp_path_factory.mktemp("home")
    with askrepo_home(home):
        index_repo(root)
    return root, home


def _indexed(tmp_path, monkeypatch, files):
    """A real index of ``files`` (a git repository in ``tmp_path``), opened."""
    root = tmp_path / "repo"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setenv("ASKREPO_HOME", str(tmp_path / "home"))
    index_repo(root)
    return open_index(root)


def _store(repo):
    root, home = repo
    with askrepo_home(home):
        return open_index(root)


def _callers(res):
    return [(c.symbol, c.certain, [s.line for s in c.calls]) for c in res.callers]


def test_a_method_s_callers_are_certain_only_when_the_call_shows_its_class(repo):
    res = find_callers(_store(repo), "Hasher.create")
    assert [d.symbol for d in res.definitions] == ["Hasher.create"]
    assert res.others == 2  # the function create and Hmac.create
    assert _callers(res) == [
        ("Hasher.rehash", True, [6]),  # self.create( from its own class
        ("seed_hash", True, [13]),  # Hasher.create(
        ("typed", True, [25]),  # h.create( with h: Hasher
        ("make_user", False, [8]),  # create(: not through a Hasher
        ("anything", False, [17]),  # obj.create(: any create
    ]
    assert "2 other definition(s)" in res.note
    # with_hmac's mac = Hmac(): mac.create( is Hmac's (Hmac does not derive from Hasher)
    assert res.elsewhere == 1 and "1 caller(s) left out" in res.note


def test_a_function_s_bare_calls_are_certain_and_comments_are_not_calls(repo):
    res = find_callers(_store(repo), "create")
    assert [d.symbol for d in res.definitions] == ["create"]
    # make_user's docstring names create() on line 7: the call is line 8
    assert _callers(res)[0] == ("make_user", True, [8])
    assert {(s, c) for s, c, _ in _callers(res)[1:]} == {
        ("Hasher.rehash", False),
        ("seed_hash", False),
        ("anything", False),
    }
    assert res.elsewhere == 2  # h.create( (h: Hasher) and mac.create( (mac = Hmac())


def test_a_name_imported_from_outside_is_not_a_call_of_the_repository_s(repo):
    res = find_callers(_store(repo), "escape")  # users.py: from html import escape
    assert [d.symbol for d in res.definitions] == ["escape"]
    assert res.callers == [] and "No indexed code calls" in res.note


def test_a_name_as_people_type_it(repo):
    store = _store(repo)
    for typed in ("`create()`", "create()", " create "):
        assert [d.symbol for d in find_callers(store, typed).definitions] == ["create"]
    with pytest.raises(UsageError, match="characters long"):
        find_callers(store, "a" * 2000)


def test_tests_are_callers_unless_excluded(repo):
    store = _store(repo)
    assert [c.symbol for c in find_callers(store, "make_user").callers] == ["test_make_user"]
    assert find_callers(store, "make_user", include_tests=False).callers == []


def test_cli_callers_text_json_and_errors(repo):
    root, home = repo
    shown = run_cli("callers", "Hasher.create", "--repo", str(root), home=home)
    assert shown.returncode == 0, shown.stderr
    assert "Hasher.create (method) defined at pkg/hasher.py:2-3" in shown.stdout
    assert shown.stdout.index("seed_hash") < shown.stdout.index("possible callers")
    assert "13: return Hasher.create(Hasher(), seed)" in shown.stdout
    as_json = run_cli("callers", "create", "--repo", str(root), "--json", home=home)
    data = json.loads(as_json.stdout)
    assert data["callers"][0]["symbol"] == "make_user" and data["callers"][0]["certain"]
    assert data["stale"] is False and "indexed_commit" in data
    none = run_cli("callers", "no_such_name_xyz", "--repo", str(root), home=home)
    assert none.returncode == 1 and "Nothing in the index defines or calls" in none.stdout
    empty = run_cli("callers", " ", "--repo", str(root), home=home)
    assert empty.returncode != 0 and "Traceback" not in empty.stderr
    assert "name is empty" in empty.stdout + empty.stderr


RUST = {
    "src/policy.rs": (
        "/// Decides whether a failed request is sent again.\n"
        "///\n"
        "/// ```\n"
        "/// impl Policy for Attempts {\n"
        "///     fn retry(&self, req: &Req, res: &Res) -> bool { true }\n"
        "/// }\n"
        "/// ```\n"
        "pub trait Policy {\n"
        "    fn retry(&self, req: &Req, res: &Res) -> bool;\n"
        "}\n"
    ),
    "src/builder.rs": (
        "pub struct Builder { layers: Vec<Layer> }\n"
        "\n"
        "impl Builder {\n"
        "    /// Adds the retry layer.\n"
        "    pub fn retry(self, policy: Attempts) -> Builder {\n"
        "        let mut b = self;\n"
        "        b.layers.push(Layer::new(policy));\n"
        "        b\n"
        "    }\n"
        "}\n"
    ),
    "src/future.rs": (
        "pub struct ResponseFuture { policy: Attempts }\n"
        "\n"
        "impl ResponseFuture {\n"
        "    pub fn poll(&mut self, req: &Req, res: &Res) -> bool {\n"
        "        self.policy.retry(req, res)\n"
        "    }\n"
        "}\n"
    ),
    "src/go/store.go": (
        "package store\n"
        "\n"
        "type Store interface {\n"
        "\tClose() error\n"
        "}\n"
        "\n"
        "type fileStore struct{ path string }\n"
        "\n"
        "func (s *fileStore) Close() error {\n"
        "\treturn nil\n"
        "}\n"
        "\n"
        "func shutdown(s Store) error {\n"
        "\treturn s.Close()\n"
        "}\n"
    ),
}


def test_a_trait_s_bodiless_method_is_a_namesake_of_the_only_definition(tmp_path, monkeypatch):
    """Real index: ``self.policy.retry(req, res)`` may call the trait ``Policy``'s declared
    ``retry(&self, req, res)`` (implemented outside the index), not the index's one definition
    ``Builder.retry(self, policy)``: a possible caller, and the evidence card does not state
    it. A Go interface method with the same parameters as the one definition
    (``fileStore.Close``) is its implementation: its caller stays certain."""
    from askrepo import evidence

    store = _indexed(tmp_path, monkeypatch, RUST)
    assert store.declarations(["retry", "Close", "poll"]) == {
        "retry": [2],
        "Close": [0],
        "poll": [],
    }
    res = find_callers(store, "retry")
    assert [d.symbol for d in res.definitions] == ["Builder.retry"]
    assert _callers(res) == [("ResponseFuture.poll", False, [5])]
    assert res.others == 1 and "1 method declaration(s) of a trait or interface" in res.note
    closes = find_callers(store, "Close")
    assert [(c.symbol, c.certain) for c in closes.callers] == [("shutdown", True)]
    graph = evidence.gather_graph(store, store.find_symbol("Builder.retry"))
    assert graph.definitions["retry"] == 2
    graph = evidence.gather_graph(store, store.find_symbol("fileStore.Close"))
    assert graph.definitions["Close"] == 1


TYPED = {
    "src/Hasher.java": (
        "public class Hasher {\n"
        "    public byte[] digest(byte[] data) {\n"
        "        return data;\n"
        "    }\n"
        "}\n"
    ),
    "src/Salted.java": (
        "public class Salted\n"
        "        extends Hasher {\n"
        "    public byte[] digest(byte[] data) {\n"
        "        return salt(data);\n"
        "    }\n"
        "}\n"
    ),
    "src/Checksum.java": (
        "public class Checksum {\n"
        "    public long digest(byte[] data) {\n"
        "        return 0L;\n"
        "    }\n"
        "}\n"
    ),
    "src/Store.java": (
        "public class Store {\n"
        "    void save(Hasher h, byte[] d) {\n"
        "        write(h.digest(d));\n"
        "    }\n"
        "\n"
        "    void check(byte[] d) {\n"
        "        Checksum sum = new Checksum();\n"
        "        verify(sum.digest(d));\n"
        "    }\n"
        "\n"
        "    void salted(final Salted s, byte[] d) {\n"
        "        write(s.digest(d));\n"
        "    }\n"
        "}\n"
    ),
}


def test_a_call_through_a_declared_type(tmp_path, monkeypatch):
    """Real index (Java): ``Hasher h`` makes ``h.digest(`` Hasher's — certain; ``Checksum sum =
    new Checksum()`` makes ``sum.digest(`` Checksum's — left out of Hasher.digest's callers;
    for the subclass ``Salted.digest`` (``class Salted extends Hasher`` over two lines), a call
    through a ``Hasher`` may dispatch to it — possible, not left out."""
    store = _indexed(tmp_path, monkeypatch, TYPED)
    res = find_callers(store, "Hasher.digest")
    assert _callers(res) == [("Store.save", True, [3])]
    assert res.elsewhere == 2  # Checksum's sum.digest( and Salted's s.digest(
    sub = find_callers(store, "Salted.digest")
    assert _callers(sub) == [("Store.salted", True, [12]), ("Store.save", False, [3])]
    assert sub.elsewhere == 1  # only sum.digest(: a Checksum is no Salted
