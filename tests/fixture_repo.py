"""A small, realistic repository with every awkward case the walker must handle.

``make_fixture_repo(dest)`` writes it (as a git repository by default) and returns its root.
``EXPECTED`` says what the walker must keep and skip (and why); ``expected_kept(git)`` gives
the kept files for one mode; ``QUESTIONS`` pairs questions with the file and symbol that
answer them, for end-to-end retrieval tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # this checkout: its askrepo is the one tested

# --- file contents -------------------------------------------------------------------------------

AUTH_PY = '''\
"""User authentication: password hashing, login checks and server-side sessions."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time

ITERATIONS = 120_000


def hash_password(password: str, salt: bytes | None = None) -> str:
    """Hash a password with PBKDF2-SHA256 and a random salt; returns "salt$hash" in hex."""
    salt = salt or os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, ITERATIONS)
    return salt.hex() + "$" + digest.hex()


def authenticate_user(username: str, password: str, users: dict[str, str]) -> bool:
    """Check a login: look the user up and compare the password hash in constant time.

    ``users`` maps a username to the stored "salt$hash" string made by ``hash_password``.
    Unknown users still pay for one hash so that timing does not reveal which names exist.
    """
    stored = users.get(username)
    if stored is None:
        hash_password(password)
        return False
    salt_hex, _, expected = stored.partition("$")
    candidate = hash_password(password, bytes.fromhex(salt_hex)).partition("$")[2]
    return hmac.compare_digest(candidate, expected)


class SessionStore:
    """In-memory login sessions that expire after ``ttl`` seconds of inactivity."""

    def __init__(self, ttl: float = 1800.0) -> None:
        self.ttl = ttl
        self._sessions: dict[str, tuple[str, float]] = {}

    def create(self, username: str) -> str:
        """Start a session for a user who has logged in; returns the session token."""
        token = secrets.token_urlsafe(32)
        self._sessions[token] = (username, time.monotonic())
        return token

    def get(self, token: str) -> str | None:
        """The username for a live session (refreshing its timestamp), or None if expired."""
        entry = self._sessions.get(token)
        if entry is None:
            return None
        username, last_seen = entry
        if time.monotonic() - last_seen > self.ttl:
            self.expire(token)
            return None
        self._sessions[token] = (username, time.monotonic())
        return username

    def expire(self, token: str) -> None:
        """Log a session out: forget the token so later requests are anonymous."""
        self._sessions.pop(token, None)
'''

CONFIG_PY = '''\
"""Load the shop's configuration from a TOML or JSON file, falling back to defaults."""

from __future__ import annotations

import json
from pathlib import Path

DEFAULTS: dict[str, object] = {
    "currency": "EUR",
    "tax_rate": 0.2,
    "session_ttl": 1800,
    "max_cart_items": 50,
    "retry_attempts": 3,
}


def load_config(path: str | Path | None = None) -> dict[str, object]:
    """Read settings from ``path`` (.toml or .json) and merge them over ``DEFAULTS``.

    A missing file is not an error: the defaults are returned. Unknown keys are rejected so
    that a typo in the config file does not silently keep the default.
    """
    config = dict(DEFAULTS)
    if path is None:
        return config
    path = Path(path)
    if not path.exists():
        return config
    if path.suffix == ".toml":
        import tomllib

        loaded = tomllib.loads(path.read_text(encoding="utf-8"))
    elif path.suffix == ".json":
        loaded = json.loads(path.read_text(encoding="utf-8"))
    else:
        raise ValueError(f"unsupported config format: {path.suffix}")
    unknown = set(loaded) - set(DEFAULTS)
    if unknown:
        raise KeyError(f"unknown config keys: {sorted(unknown)}")
    config.update(loaded)
    return config
'''

PRICING_PY = '''\
"""Prices and discounts. Amounts are integer cents to avoid rounding errors."""

from __future__ import annotations

DISCOUNT_CODES = {"WELCOME10": 10, "SPRING25": 25, "STAFF50": 50}


def apply_discount(amount_cents: int, code: str | None) -> int:
    """Apply a percentage discount code to an amount; unknown or empty codes change nothing.

    The discount is rounded down to whole cents and never makes the price negative.
    """
    if not code:
        return amount_cents
    percent = DISCOUNT_CODES.get(code.strip().upper())
    if percent is None:
        return amount_cents
    reduction = amount_cents * percent // 100
    return max(0, amount_cents - reduction)


def add_tax(amount_cents: int, rate: float) -> int:
    """Add sales tax at ``rate`` (0.2 = 20%), rounding half up to the nearest cent."""
    return int(amount_cents * (1 + rate) + 0.5)
'''

CART_PY = '''\
"""The shopping cart: line items, quantities and the discounted total."""

from __future__ import annotations

from dataclasses import dataclass, field

from .pricing import add_tax, apply_discount


@dataclass
class LineItem:
    sku: str
    unit_price_cents: int
    quantity: int = 1


@dataclass
class Cart:
    """A customer's cart. ``discount_code`` is applied to the subtotal before tax."""

    items: dict[str, LineItem] = field(default_factory=dict)
    discount_code: str | None = None
    max_items: int = 50

    def add_item(self, sku: str, unit_price_cents: int, quantity: int = 1) -> None:
        """Add ``quantity`` of a product, merging with an existing line for the same SKU."""
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        if sum(i.quantity for i in self.items.values()) + quantity > self.max_items:
            raise ValueError("cart is full")
        line = self.items.get(sku)
        if line is None:
            self.items[sku] = LineItem(sku, unit_price_cents, quantity)
        else:
            line.quantity += quantity

    def remove_item(self, sku: str, quantity: int | None = None) -> None:
        """Remove some (or, with no quantity, all) units of a product from the cart."""
        line = self.items.get(sku)
        if line is None:
            raise KeyError(sku)
        if quantity is None or quantity >= line.quantity:
            del self.items[sku]
        else:
            line.quantity -= quantity

    def total(self, tax_rate: float = 0.2) -> int:
        """The amount to pay in cents: subtotal, minus the discount code, plus tax."""
        subtotal = sum(i.unit_price_cents * i.quantity for i in self.items.values())
        discounted = apply_discount(subtotal, self.discount_code)
        return add_tax(discounted, tax_rate)
'''

HTTP_PY = '''\
"""Small HTTP helpers: query-string parsing and retrying flaky calls."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import unquote_plus

T = TypeVar("T")


def parse_query_string(query: str) -> dict[str, list[str]]:
    """Parse "a=1&b=2&a=3" into {"a": ["1", "3"], "b": ["2"]}, decoding %XX and "+"."""
    params: dict[str, list[str]] = {}
    for pair in query.lstrip("?").split("&"):
        if not pair:
            continue
        key, _, value = pair.partition("=")
        params.setdefault(unquote_plus(key), []).append(unquote_plus(value))
    return params


def retry_with_backoff(
    attempts: int = 3, base_delay: float = 0.5, exceptions: tuple[type[Exception], ...] = (OSError,)
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: retry a failing call with exponential backoff and jitter.

    The call is tried ``attempts`` times; after failure n it sleeps base_delay * 2**n plus up
    to 10% jitter. The last exception is re-raised when every attempt failed.
    """

    def decorate(func: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(func)
        def wrapper(*args, **kwargs) -> T:
            for attempt in range(attempts):
                try:
                    return func(*args, **kwargs)
                except exceptions:
                    if attempt == attempts - 1:
                        raise
                    delay = base_delay * 2**attempt
                    time.sleep(delay + random.uniform(0, delay / 10))
            raise AssertionError("unreachable")

        return wrapper

    return decorate
'''

# Line numbers matter: tests check that these exact lines are redacted.
SETTINGS_PY = '''\
"""Runtime settings for local development. Production reads everything from the environment."""

import os

DEBUG = True
DATABASE_URL = os.environ.get("DATABASE_URL", "sqlite:///shop.db")

AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"
SMTP_HOST = "localhost"
password = "hunter2hunter2"
SMTP_PASSWORD = os.environ.get("SMTP_PASSWORD", "")
'''
SETTINGS_AWS_LINE = 8
SETTINGS_PASSWORD_LINE = 10

INVENTORY_PY = (
    '"""Stock levels and reservations (this file uses Windows CRLF line endings)."""\n'
    "\n"
    "STOCK: dict[str, int] = {}\n"
    "\n"
    "\n"
    "def reserve_stock(sku: str, quantity: int) -> bool:\n"
    '    """Reserve units of a product for an order; False if not enough are in stock."""\n'
    "    available = STOCK.get(sku, 0)\n"
    "    if quantity <= 0 or available < quantity:\n"
    "        return False\n"
    "    STOCK[sku] = available - quantity\n"
    "    return True\n"
    "\n"
    "\n"
    "def restock(sku: str, quantity: int) -> None:\n"
    '    """Add delivered units back to the stock level."""\n'
    "    STOCK[sku] = STOCK.get(sku, 0) + quantity\n"
).replace("\n", "\r\n")
INVENTORY_RESERVE_LINE = 6  # `def reserve_stock` (1-based)

# Latin-1 bytes in a comment: not valid UTF-8.
LABELS_PY = (
    b'"""Price labels for the shop window."""\n'
    b"\n"
    b"# Libell\xe9s affich\xe9s en vitrine (encodage Latin-1 h\xe9rit\xe9)\n"
    b"\n"
    b"\n"
    b'def format_price_label(amount_cents: int, currency: str = "EUR") -> str:\n'
    b'    """Format cents as a shop-window label such as "12.50 EUR"."""\n'
    b'    return f"{amount_cents // 100}.{amount_cents % 100:02d} {currency}"\n'
)

GENERATED_KEEP_PY = '''\
"""Checked-in output of the schema generator that we keep (re-included by !generated_keep.py)."""

ORDER_FIELDS = ("id", "customer", "items", "total_cents", "status")


def order_from_row(row: tuple) -> dict:
    """Turn a database row into an order dict using ORDER_FIELDS."""
    return dict(zip(ORDER_FIELDS, row))
'''

NOTIFICATIONS_PY = '''\
"""Customer notifications (new module, not committed yet)."""


def send_order_confirmation(email: str, order_id: str, outbox: list[tuple[str, str]]) -> None:
    """Queue the order-confirmation email for a customer."""
    subject = f"Your order {order_id} is confirmed"
    outbox.append((email, subject))
'''

APP_JS = """\
// Browser side of the shop: fetch the cart and render it.

const formatMoney = (cents, currency = "EUR") =>
  `${(cents / 100).toFixed(2)} ${currency}`;

const renderCart = (cart) => {
  const list = document.querySelector("#cart");
  list.innerHTML = "";
  for (const item of cart.items) {
    const row = document.createElement("li");
    row.textContent = `${item.quantity} x ${item.sku} - ${formatMoney(item.unitPriceCents)}`;
    list.appendChild(row);
  }
  const total = document.querySelector("#cart-total");
  total.textContent = formatMoney(cart.totalCents);
  return list;
};

async function fetchCart(sessionToken) {
  const response = await fetch("/api/cart", {
    headers: { Authorization: `Bearer ${sessionToken}` },
  });
  if (!response.ok) {
    throw new Error(`cart request failed: ${response.status}`);
  }
  return response.json();
}

export { renderCart, fetchCart, formatMoney };
"""

SERVER_GO = """\
package main

import (
	"encoding/json"
	"log"
	"net/http"
	"time"
)

// healthHandler answers load-balancer health checks with the server's uptime.
func healthHandler(started time.Time) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"status": "ok",
			"uptime": time.Since(started).String(),
		})
	}
}

// newServer wires the routes and timeouts of the shop's HTTP server.
func newServer(addr string) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", healthHandler(time.Now()))
	return &http.Server{
		Addr:         addr,
		Handler:      mux,
		ReadTimeout:  5 * time.Second,
		WriteTimeout: 10 * time.Second,
	}
}

func main() {
	srv := newServer(":8080")
	log.Printf("listening on %s", srv.Addr)
	log.Fatal(srv.ListenAndServe())
}
"""

DEPLOY_SH = """\
#!/usr/bin/env bash
# Build and restart the shop service on the current host.
set -euo pipefail

deploy_shop() {
  local version="$1"
  git fetch --tags
  git checkout "v${version}"
  systemctl restart shop.service
}

deploy_shop "${1:?usage: deploy VERSION}"
"""

TEST_AUTH_PY = """\
from shop.auth import SessionStore, authenticate_user, hash_password


def test_authenticate_user_accepts_the_right_password():
    users = {"alice": hash_password("correct horse")}
    assert authenticate_user("alice", "correct horse", users)
    assert not authenticate_user("alice", "wrong", users)


def test_authenticate_user_rejects_unknown_users():
    assert not authenticate_user("mallory", "anything", {})


def test_session_store_expire_logs_out():
    store = SessionStore(ttl=60)
    token = store.create("alice")
    assert store.get(token) == "alice"
    store.expire(token)
    assert store.get(token) is None
"""

TEST_CART_PY = """\
import pytest

from shop.cart import Cart


def test_cart_total_applies_discount_and_tax():
    cart = Cart(discount_code="WELCOME10")
    cart.add_item("mug", 1000, quantity=2)
    assert cart.total(tax_rate=0.0) == 1800


def test_remove_item_partial_quantity():
    cart = Cart()
    cart.add_item("mug", 1000, quantity=3)
    cart.remove_item("mug", 1)
    assert cart.items["mug"].quantity == 2
    with pytest.raises(KeyError):
        cart.remove_item("teapot")
"""

README_MD = """\
# Demo shop

A tiny web shop used to test askrepo: a Python back end (`shop/`), a Go health server
(`server.go`) and a bit of browser JavaScript (`web/app.js`).

## Running

    python -m shop
    go run server.go

Configuration is read by `shop.config.load_config`; see `docs/usage.md`.
"""

USAGE_MD = """\
# Usage

## Configuration

Create `shop.toml` next to the app. Every key is optional; missing keys use the defaults in
`shop/config.py`:

```toml
currency = "EUR"
tax_rate = 0.2
session_ttl = 1800
```

## Discount codes

Codes such as `WELCOME10` are applied to the cart subtotal before tax.
"""

CAFE_MD = """\
# Café notes

Ideas for the café corner of the shop: loyalty stamps, a seasonal menu.
"""

PYPROJECT_TOML = """\
[project]
name = "demo-shop"
version = "0.1.0"
requires-python = ">=3.11"
"""

FILES: dict[str, str | bytes] = {
    "README.md": README_MD,
    "pyproject.toml": PYPROJECT_TOML,
    ".gitignore": "*.log\nbuild/\n",
    ".askrepoignore": "# private drafts are not for the index\ndocs/drafts/\n",
    ".env": "STRIPE_KEY=sk_live_51Habcdefghijklmnopqrstuv\nDB_PASSWORD=s3cr3t-Pa55word\n",
    ".env.example": "STRIPE_KEY=\nDB_PASSWORD=\n",
    "shop/__init__.py": '"""Demo shop package."""\n',
    "shop/.gitignore": "generated_*.py\n!generated_keep.py\n",
    "shop/auth.py": AUTH_PY,
    "shop/config.py": CONFIG_PY,
    "shop/cart.py": CART_PY,
    "shop/pricing.py": PRICING_PY,
    "shop/http.py": HTTP_PY,
    "shop/settings.py": SETTINGS_PY,
    "shop/inventory.py": INVENTORY_PY.encode("utf-8"),
    "shop/labels.py": LABELS_PY,
    "shop/generated_keep.py": GENERATED_KEEP_PY,
    "shop/generated_models.py": '"""Regenerated on every build; ignored."""\nMODELS = []\n',
    "shop/scratch.py": "# local experiments, excluded via .git/info/exclude\nx = 1\n",
    "web/app.js": APP_JS,
    "web/vendor.min.js": "!function(e){" + "var a=1;" * 50 + "}(window);\n",
    "web/bundle.js": "(function(){"
    + "var x=[1,2,3].map(function(n){return n*2});" * 150
    + "})();\n",
    "web/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08",
    "data/blob.dat": b"SHOPDATA\x00\x01\x02\x03" * 64,
    "data/big_dump.txt": "".join(
        f"row {i:07d}: lorem ipsum dolor sit amet\n" for i in range(30_000)
    ),
    "server.go": SERVER_GO,
    "scripts/deploy": DEPLOY_SH,
    "tests/test_auth.py": TEST_AUTH_PY,
    "tests/test_cart.py": TEST_CART_PY,
    "docs/usage.md": USAGE_MD,
    "docs/café notes.md": CAFE_MD,
    "docs/drafts/wip.md": "# Work in progress\n\nNot ready.\n",
    "server.log": "2024-01-01 started\n",
    "build/output.js": "console.log('built');\n",
    "node_modules/x/index.js": "module.exports = function x() { return 1; };\n",
}
# Only in git mode: committed, then deleted from the work tree (git still lists it).
DELETED_IN_GIT = "shop/obsolete.py"
# Written after the commit in git mode (untracked, not ignored: must still be indexed).
UNTRACKED = "shop/notifications.py"
GIT_EXCLUDED = "shop/scratch.py"  # listed in .git/info/exclude
SYMLINKS = {"shop/auth_link.py": "auth.py", "etc_link": "/etc"}

# --- what the walker must find -------------------------------------------------------------------

EXPECTED: dict = {
    # path -> (language, file_class); kept in both modes
    "kept": {
        ".askrepoignore": ("gitignore", "config"),
        ".env.example": (None, "config"),
        ".gitignore": ("gitignore", "config"),
        "README.md": ("markdown", "doc"),
        "docs/café notes.md": ("markdown", "doc"),
        "docs/usage.md": ("markdown", "doc"),
        "pyproject.toml": ("toml", "config"),
        "scripts/deploy": ("bash", "code"),
        "server.go": ("go", "code"),
        "shop/.gitignore": ("gitignore", "config"),
        "shop/__init__.py": ("python", "code"),
        "shop/auth.py": ("python", "code"),
        "shop/cart.py": ("python", "code"),
        "shop/config.py": ("python", "code"),
        "shop/generated_keep.py": ("python", "code"),
        "shop/http.py": ("python", "code"),
        "shop/inventory.py": ("python", "code"),
        "shop/labels.py": ("python", "code"),
        UNTRACKED: ("python", "code"),
        "shop/pricing.py": ("python", "code"),
        "shop/settings.py": ("python", "code"),
        "tests/test_auth.py": ("python", "test"),
        "tests/test_cart.py": ("python", "test"),
        "web/app.js": ("javascript", "code"),
    },
    # kept only without git (git mode: excluded by .git/info/exclude)
    "kept_without_git": {GIT_EXCLUDED: ("python", "code")},
    # path -> reason (the key of WalkResult.skipped); same in both modes
    "skipped": {
        ".env": "secret",
        "data/big_dump.txt": "too_large",
        "data/blob.dat": "binary",
        "etc_link": "symlink",
        "node_modules/": "vendored",
        "shop/auth_link.py": "symlink",
        "web/bundle.js": "generated",
        "web/logo.png": "binary",
        "web/vendor.min.js": "generated",
    },
    # neither kept nor counted
    "ignored": ["build/output.js", "docs/drafts/wip.md", "server.log", "shop/generated_models.py"],
    "ignored_with_git": [GIT_EXCLUDED, DELETED_IN_GIT],
    "untracked": UNTRACKED,
    "deleted_in_git": DELETED_IN_GIT,
    "git_excluded": GIT_EXCLUDED,
    "crlf": "shop/inventory.py",
    "invalid_utf8": "shop/labels.py",
    "unicode_name": "docs/café notes.md",
    "secret_lines": {
        "shop/settings.py": {
            "aws-access-key": SETTINGS_AWS_LINE,
            "password": SETTINGS_PASSWORD_LINE,
        }
    },
}

# (question, path, symbol) for end-to-end retrieval tests; symbols are qualified "Class.method".
QUESTIONS: list[tuple[str, str, str]] = [
    ("where is the password checked when a user logs in?", "shop/auth.py", "authenticate_user"),
    ("how are passwords hashed before they are stored?", "shop/auth.py", "hash_password"),
    ("how does a user session get logged out or expire?", "shop/auth.py", "SessionStore.expire"),
    (
        "how is the configuration file loaded and merged with defaults?",
        "shop/config.py",
        "load_config",
    ),
    ("how is the cart total computed?", "shop/cart.py", "Cart.total"),
    ("how do I add a product to the cart?", "shop/cart.py", "Cart.add_item"),
    ("how is a discount code applied to a price?", "shop/pricing.py", "apply_discount"),
    (
        "how are failed calls retried with exponential backoff?",
        "shop/http.py",
        "retry_with_backoff",
    ),
    ("how is a URL query string parsed into parameters?", "shop/http.py", "parse_query_string"),
    ("how is stock reserved for an order?", "shop/inventory.py", "reserve_stock"),
    ("how is the cart rendered in the browser?", "web/app.js", "renderCart"),
    ("what answers the load balancer health check?", "server.go", "healthHandler"),
]


def expected_kept(git: bool = True) -> dict[str, tuple[str | None, str]]:
    """path -> (language, file_class) of every file the walker keeps in that mode."""
    kept = dict(EXPECTED["kept"])
    if not git:
        kept.update(EXPECTED["kept_without_git"])
    return dict(sorted(kept.items()))


def expected_skipped() -> dict[str, list[str]]:
    """reason -> sorted paths, as in ``WalkResult.skipped_paths`` (same in both modes)."""
    out: dict[str, list[str]] = {}
    for path, reason in EXPECTED["skipped"].items():
        out.setdefault(reason, []).append(path)
    return {k: sorted(v) for k, v in sorted(out.items())}


# --- building it ---------------------------------------------------------------------------------


def _git_env() -> dict[str, str]:
    """The environment minus user/system git config and inherited GIT_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k == "GIT_EXEC_PATH"}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=_git_env(), check=True, capture_output=True)


def git(root: Path, *args: str) -> str:
    """git in ``root`` for tests: hermetic (``_git_env``), author and committer ``t``; returns
    the stripped standard output."""
    env = _git_env()
    for who in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{who}_NAME"], env[f"GIT_{who}_EMAIL"] = "t", "t@example.invalid"
    out = subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return out.stdout.decode("utf-8", "replace").strip()


def _write(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)


def make_fixture_repo(dest: Path, *, git: bool = True) -> Path:
    """Write the fixture repository into ``dest`` (created if needed) and return its root."""
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in FILES.items():
        _write(root, rel, content)
    for rel, target in SYMLINKS.items():
        os.symlink(target, root / rel)
    (root / "scripts" / "deploy").chmod(0o755)
    if git:
        _write(root, DELETED_IN_GIT, '"""Old checkout flow, removed."""\n')
        _git(root, "init", "-q", "-b", "main")
        _git(root, "config", "user.name", "Fixture Bot")
        _git(root, "config", "user.email", "fixture@example.invalid")
        _git(root, "config", "commit.gpgsign", "false")
        _git(root, "config", "core.autocrlf", "false")
        with open(root / ".git" / "info" / "exclude", "a", encoding="utf-8") as fh:
            fh.write(f"\n{GIT_EXCLUDED}\n")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", "Demo shop")
        (root / DELETED_IN_GIT).unlink()
    _write(root, UNTRACKED, NOTIFICATIONS_PY)
    return root


@contextmanager
def askrepo_home(home: Path) -> Iterator[Path]:
    """ASKREPO_HOME set to ``home`` for a block, then restored (module-scoped fixtures cannot
    use ``monkeypatch``)."""
    old = os.environ.get("ASKREPO_HOME")
    os.environ["ASKREPO_HOME"] = str(home)
    try:
        yield home
    finally:
        if old is None:
            os.environ.pop("ASKREPO_HOME", None)
        else:
            os.environ["ASKREPO_HOME"] = old


def indexed_fixture_repo(tmp_path_factory: Any, home_name: str, embedder: Any = None):
    """The fixture repository indexed in its own ASKREPO_HOME (the real MiniLM model unless
    ``embedder`` is given). Returns ``(root, home)``."""
    from askrepo.indexer import index_repo

    home = tmp_path_factory.mktemp(home_name)
    with askrepo_home(home):
        root = make_fixture_repo(tmp_path_factory.mktemp("fx") / "repo")
        index_repo(root, embedder=embedder)
    return root, home


def run_cli(
    *args: str,
    home: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: Path | None = None,
    timeout: float = 600,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m askrepo.cli ARGS`` in a subprocess, its output captured as text.

    It runs this checkout's askrepo (first on PYTHONPATH) with ``stdin`` as its standard input
    (None: none), ASKREPO_HOME set to
    ``home`` (None: as in this process, i.e. the test's own home) and ``env`` on top of the
    environment (a None value removes that variable)."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), full.get("PYTHONPATH")) if p)
    if home is not None:
        full["ASKREPO_HOME"] = str(home)
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return subprocess.run(
        [sys.executable, "-m", "askrepo.cli", *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        timeout=timeout,
        **({"input": stdin} if stdin is not None else {"stdin": subprocess.DEVNULL}),
    )
