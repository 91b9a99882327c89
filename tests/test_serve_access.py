"""Access rules of ``askrepo serve`` (pure functions) and the token store / `askrepo token` CLI."""

from __future__ import annotations

import json
import os
import stat

import pytest

from askrepo.errors import UsageError
from askrepo.serve.access import (
    Principal,
    Refusal,
    bearer,
    check_host_origin,
    is_loopback,
    split_host,
)
from askrepo.tokens import TokenStore, hash_token


@pytest.mark.parametrize(
    "host,expected",
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.com", False),
        ("localhost.example.com", False),
        ("", False),
    ],
)
def test_is_loopback(host, expected):
    assert is_loopback(host) is expected


def test_split_host():
    assert split_host("localhost:8765") == ("localhost", 8765)
    assert split_host("[::1]:9") == ("::1", 9)
    assert split_host("[::1]") == ("::1", None)
    assert split_host("Example.COM") == ("example.com", None)
    assert split_host("a:b") == ("a", -1)


def test_loopback_server_refuses_foreign_host_and_origin():
    check_host_origin("127.0.0.1:8765", None, loopback_bind=True)
    check_host_origin("localhost:8765", "http://localhost:8765", loopback_bind=True)
    check_host_origin("[::1]:8765", "http://127.0.0.1:3000", loopback_bind=True)
    for host in (None, "", "evil.example", "evil.example:8765", "127.0.0.1.nip.io:8765"):
        with pytest.raises(Refusal) as e:
            check_host_origin(host, None, loopback_bind=True)
        assert e.value.status == 403 and e.value.code == "host_not_local"
    for origin in ("http://evil.example", "null", "file://", "https://localhost.evil.example"):
        with pytest.raises(Refusal) as e:
            check_host_origin("localhost:8765", origin, loopback_bind=True)
        assert e.value.code == "origin_not_local"


def test_remote_server_allows_same_origin_only():
    check_host_origin("code.example:8765", None, loopback_bind=False)
    check_host_origin("code.example:8765", "http://code.example:8765", loopback_bind=False)
    check_host_origin("code.example", "https://code.example", loopback_bind=False)
    with pytest.raises(Refusal) as e:
        check_host_origin("code.example:8765", "http://other.example:8765", loopback_bind=False)
    assert e.value.code == "origin_mismatch"
    with pytest.raises(Refusal):
        check_host_origin("code.example:8765", "http://code.example:9999", loopback_bind=False)


def test_bearer_header_parsing():
    assert bearer("Bearer abc") == "abc"
    assert bearer("bearer   abc  ") == "abc"
    assert bearer("Basic abc") is None
    assert bearer("Bearer ") is None
    assert bearer(None) is None


def test_principal_repo_limits():
    assert Principal("local", None).allows("/any")
    p = Principal("t1", frozenset({"/a"}))
    assert p.allows("/a") and not p.allows("/b")


def test_token_store_create_verify_revoke(tmp_path):
    path = tmp_path / "home" / "tokens.json"
    store = TokenStore(path)
    info, token = store.create("alice", [tmp_path])
    assert token.startswith(f"askrepo_{info.id}_") and len(token) > 50
    raw = path.read_text()
    assert token not in raw and hash_token(token) in raw  # only the hash is stored
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert info.repos == [str(tmp_path.resolve())]
    assert "hash" not in info.to_dict()

    v = store.verify(token)
    assert v.token is not None and v.token.name == "alice"
    assert store.verify(None).reason == "missing"
    assert store.verify("nope").reason == "malformed"
    assert store.verify(token[:-1] + ("A" if token[-1] != "A" else "B")).reason == "unknown"
    other = TokenStore(path)  # another process (a running server) sees the same file
    assert other.verify(token).token is not None
    store.revoke("alice")
    assert other.verify(token).reason == "revoked"
    assert [t.revoked for t in other.list()] == [True]
    with pytest.raises(UsageError, match="No active token"):
        store.revoke("alice")


def test_token_store_errors(tmp_path):
    store = TokenStore(tmp_path / "tokens.json")
    store.create("bob")
    with pytest.raises(UsageError, match="exists"):
        store.create("bob")
    with pytest.raises(UsageError, match="not a directory"):
        store.create("carol", [tmp_path / "missing"])
    (tmp_path / "tokens.json").write_text("{broken")
    with pytest.raises(UsageError, match="unreadable"):
        TokenStore(tmp_path / "tokens.json").list()


def test_token_cli(tmp_path):
    from typer.testing import CliRunner

    from askrepo.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["token", "create", "--name", "ci", "--repo", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    created = json.loads(res.stdout)
    assert created["name"] == "ci" and created["token"].startswith("askrepo_")
    listed = json.loads(runner.invoke(app, ["token", "list", "--json"]).stdout)
    assert [t["id"] for t in listed["tokens"]] == [created["id"]]
    assert "token" not in listed["tokens"][0] and "hash" not in listed["tokens"][0]
    res = runner.invoke(app, ["token", "revoke", created["id"]])
    assert res.exit_code == 0 and "revoked" in res.stdout
    res = runner.invoke(app, ["token", "revoke", created["id"]])
    assert res.exit_code == 2 and "No active token" in res.output and "Traceback" not in res.output
