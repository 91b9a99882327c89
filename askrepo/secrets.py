"""Keep secrets out of the index: skip secret files, redact secrets inside the files we keep.

Two layers:

* :func:`is_secret_path` — files that exist to hold credentials (``.env``, private keys,
  ``.netrc``, ``credentials.json``...) are never read. Templates (``.env.example``,
  ``.env.sample``, ``.env.template``, ``.env.dist``) hold no secrets and are kept, and so are
  public keys (``id_rsa.pub``).
* :func:`redact` — high-confidence secrets inside kept files (cloud keys, tokens, private key
  blocks, ``password = "literal"``) are replaced by ``[REDACTED:<kind>]`` before chunking.

Redaction never adds or removes a line break, so every line number (and therefore every
``path:line`` citation) is the same before and after. Every pattern is linear-time: each
starts with a literal or a negative look-behind that allows a match to start only at the
beginning of a run of token characters, and no pattern has nested or overlapping quantifiers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from posixpath import basename

# --- secret files -------------------------------------------------------------------------------

_SECRET_NAMES = frozenset(
    {
        ".env",
        ".envrc",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".htpasswd",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        ".dockercfg",
        "credentials",
        "credentials.json",
        "secrets.yml",
        "secrets.yaml",
        "secrets.json",
        "credentials.yml",
        "credentials.yaml",
        "kubeconfig",
        ".vault_pass",
        ".vault-pass",
        ".vault_password",
        ".vault-password",
        ".s3cfg",
        ".boto",
        ".terraformrc",
        "terraform.rc",
    }
)
# Files named for their tool's directory: registry auths in ~/.docker/config.json, cluster
# credentials (`client-key-data`, tokens) in ~/.kube/config.
_SECRET_PATH_ENDS = (".docker/config.json", ".kube/config")
_SECRET_SUFFIXES = (
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".jks",
    ".keystore",
    ".kdbx",
    ".ppk",
    ".credentials",
    ".tfstate",
    ".tfstate.backup",
    ".kubeconfig",
    ".env",
)
_SSH_KEY_PREFIXES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
# `.env.<suffix>` files with these suffixes are templates without real values: keep them.
_ENV_TEMPLATE_SUFFIXES = frozenset({"example", "sample", "template", "dist", "defaults"})


def is_secret_path(path: str) -> bool:
    """True if ``path`` (repo-relative) names a file that exists to hold credentials."""
    low = path.replace("\\", "/").lower()
    name = basename(low)
    if name in _SECRET_NAMES or ("/" + low).endswith(tuple("/" + e for e in _SECRET_PATH_ENDS)):
        return True
    if name.startswith(".env."):
        return name[5:] not in _ENV_TEMPLATE_SUFFIXES
    if name.startswith(_SSH_KEY_PREFIXES):
        return not name.endswith(".pub")
    if name.startswith("service-account") and name.endswith(".json"):
        return True
    return name.endswith(_SECRET_SUFFIXES)


# --- redaction ----------------------------------------------------------------------------------


def _marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


_PEM_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_LINE_CONTENT = re.compile(r"[^\r\n]+")
_BASE64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/=]{16,}[ \t]*(?:\r\n|\r|\n|$)")
_KEY_MATERIAL = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{16}")
_HEADER_LINE = re.compile(r"[ \t]*[A-Za-z-]{1,40}:[^\r\n]{0,200}(?:\r\n|\r|\n|$)")


def _redact_pem(text: str) -> tuple[str, int]:
    """Replace each line of a private key block by a marker (one count per block).

    A block needs key material (a run of 16+ base64 characters) after its BEGIN line, so code
    that merely mentions the markers (``BEGIN = "-----BEGIN RSA PRIVATE KEY-----"``) is kept.
    """
    if "PRIVATE KEY" not in text:
        return text, 0
    out: list[str] = []
    pos = search_from = count = 0
    no_end_after = len(text) + 1  # once an END search fails, later ones fail too: stay linear
    while True:
        m = _PEM_BEGIN.search(text, search_from)
        if m is None:
            break
        end_m = _PEM_END.search(text, m.end()) if m.end() < no_end_after else None
        if end_m is not None:
            if _KEY_MATERIAL.search(text, m.end(), end_m.start()) is None:
                # No key between the markers; any later BEGIN before this END has none either.
                search_from = end_m.start()
                continue
            stop = end_m.end()
        else:
            no_end_after = m.end()
            stop = _truncated_block_end(text, m.end())
            if _KEY_MATERIAL.search(text, m.end(), stop) is None:
                search_from = stop  # a later BEGIN before `stop` would see a part of this
                continue
        block = text[m.start() : stop]
        out.append(text[pos : m.start()])
        out.append(_LINE_CONTENT.sub(_marker("private-key"), block))
        pos = search_from = stop
        count += 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


def _truncated_block_end(text: str, start: int) -> int:
    """End of a key block without END marker: its BEGIN line plus following base64 lines."""
    stop = text.find("\n", start)
    stop = len(text) if stop < 0 else stop + 1
    while stop < len(text):
        line = _BASE64_LINE.match(text, stop) or _HEADER_LINE.match(text, stop)
        if line is None or line.end() == stop:
            break
        stop = line.end()
    # keep the block's final line break outside the block
    if text[stop - 2 : stop] == "\r\n":
        return stop - 2
    if text[stop - 1 : stop] in ("\n", "\r"):
        return stop - 1
    return stop


# Token patterns: (kind, literals, regex). The whole match is replaced by the marker. A pattern
# runs only if one of its literals occurs in the text (a fast substring test), so ordinary
# source files pay for a few ``in`` checks, not for ten regex scans.
_TOKEN_PATTERNS: list[tuple[str, tuple[str, ...], re.Pattern[str]]] = [
    (
        "slack-webhook",
        ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/services/T\w{4,40}/B\w{4,40}/\w{8,80}"),
    ),
    (
        "aws-access-key",
        ("AKIA", "ASIA"),
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    (
        "github-token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_\w{22,255})"),
    ),
    ("slack-token", ("xox",), re.compile(r"(?<![A-Za-z0-9-])xox[baprs]-[A-Za-z0-9-]{10,250}")),
    ("stripe-key", ("k_live_",), re.compile(r"(?<![A-Za-z0-9_])[sr]k_live_[A-Za-z0-9]{10,247}")),
    (
        "google-api-key",
        ("AIza",),
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
    ),
    ("gitlab-token", ("glpat-",), re.compile(r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,50}")),
    ("npm-token", ("npm_",), re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    (
        "pypi-token",
        ("pypi-AgEIcHlwaS5vcmc",),
        re.compile(r"(?<![A-Za-z0-9_-])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}"),
    ),
    (
        "openai-key",
        ("T3BlbkFJ", "sk-proj-"),
        re.compile(
            r"(?<![A-Za-z0-9_-])sk-(?:[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
            r"|proj-[A-Za-z0-9_-]{40,200})"
        ),
    ),
    (
        "sendgrid-key",
        ("SG.",),
        re.compile(r"(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"),
    ),
    (
        "azure-storage-key",
        ("AccountKey=",),
        re.compile(r"(?<=AccountKey=)[A-Za-z0-9+/]{86}==|(?<=AccountKey=)[A-Za-z0-9+/]{88}"),
    ),
    (
        "twilio-key",
        ("SK", "AC"),
        re.compile(r"(?<![A-Za-z0-9_])(?:SK|AC)[0-9a-f]{32}(?![A-Za-z0-9_])"),
    ),
    (
        "mailchimp-key",
        ("-us",),
        re.compile(r"(?<![A-Za-z0-9_])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9_])"),
    ),
    (
        "jwt",
        ("eyJ",),
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4000}\.eyJ[A-Za-z0-9_-]{8,8000}"
            r"\.[A-Za-z0-9_-]{16,2000}"
        ),
    ),
]

# `aws_secret_access_key = wJalr...` (quoted or not, as in ~/.aws/credentials or env files).
_AWS_SECRET = re.compile(
    r"(?i)(aws_?secret_?access_?key[\"']?[ \t]{0,10}(?:=|:)[ \t]{0,10}[\"']?)"
    r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
)

# `db_password = "hunter2"`, `"apiKey": "..."`, `token := '...'`, `secret => "..."`.
# Found value-first (a separator then a quoted literal: the regex starts with a character
# class, which the regex engine scans for quickly), then the text just before the separator
# must END with one of the key words (`db_password`, `dbPassword`, `GITHUB_TOKEN`), so
# `password_hash`, `tokenizer`, `token_url` do not count. Only quoted literals are secrets:
# `password = os.environ["X"]` is left alone.
_KEY_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "access_key",
    "access-key",
    "accesskey",
    "private_key",
    "private-key",
    "privatekey",
    "secret_key",
    "secret-key",
    "secretkey",
    # from detect-secrets' keyword detector
    "auth_key",
    "authkey",
    "client_key",
    "service_key",
    "account_key",
    "signing_key",
    "signingkey",
    "encryption_key",
    "encryptionkey",
    "db_pass",
    "key_pass",
    "contraseña",
    "contrasena",
    "client-key-data",  # a kubeconfig's private key, wherever the file is
    "client_key_data",
)
_ASSIGN_VALUE = re.compile(r"(?:=>|:=|=|:)[ \t]{0,10}([\"'`])([^\"'`\\\r\n]{1,500})\1")
# Matched on the REVERSED text before the separator, anchored at the separator, so that each
# candidate costs one short match instead of a search through the window.
_ASSIGN_KEY_REVERSED = re.compile(
    r"(?i)[ \t]{0,10}"
    r"(?:[\w.\[\], |]{0,40}?[A-Za-z_][ \t]{0,10}:[ \t]{0,10})?"  # a type: `password: str = "x"`
    r"[\"']?"
    r"(" + "|".join(re.escape(w[::-1]) for w in _KEY_WORDS) + r")"
)
_KEY_WINDOW = 100

# `scheme://user:password@host`: only the password part is replaced.
_URL_PASSWORD = re.compile(
    r"(?<=://)([^\s/:@\"'`<>()\[\]{}]{1,100}):([^\s/@\"'`<>()\[\]{}]{1,200})@"
)

# Files whose values need no quotes (``password=hunter2`` in an .ini is a literal; in Python it
# would be a variable): for these the unquoted ``KEY = value`` / ``KEY: value`` form counts too,
# as in detect-secrets' keyword detector for config files.
_CONFIG_SUFFIXES = (
    ".ini", ".cfg", ".conf", ".cnf", ".properties", ".toml", ".yaml", ".yml", ".env",
    ".envrc", ".sh", ".bash", ".zsh", ".service", ".tf", ".tfvars", ".hcl",
)  # fmt: skip
_CONFIG_NAMES = frozenset({"dockerfile", "containerfile", ".envrc", ".env", "makefile"})
# One line `[- ][export ]KEY[ ]=|:[ ]VALUE[ comment]`; KEY and VALUE are runs without spaces.
_CONFIG_LINE = re.compile(
    r"(?m)^([ \t]*(?:-[ \t]+)?(?:export[ \t]+|ENV[ \t]+)?[\"']?)([A-Za-z0-9_.\-]{1,100})"
    r"([\"']?[ \t]*[=:][ \t]*)([^\s\"'`#;][^\s]{0,499})([ \t]*(?:[#;][^\n]*)?\r?)$"
)
# `Authorization: Bearer <token>` / `Basic <base64>` in scripts, docs and tests.
_AUTH_HEADER = re.compile(r"(?i)(?<![A-Za-z])(bearer|basic)[ \t]+([A-Za-z0-9._~+/-]{16,500}=*)")


def is_config_path(path: str) -> bool:
    """Whether values in this file are literals without quotes (config files, shell, env)."""
    name = basename(path.replace("\\", "/")).lower()
    return name in _CONFIG_NAMES or name.endswith(_CONFIG_SUFFIXES) or name.startswith(".env")


_PLACEHOLDER_WORDS = (
    "changeme",
    "change_me",
    "change-me",
    "example",
    "placeholder",
    "dummy",
    "redacted",
    "your_",
    "your-",
    "xxxx",
    "***",
    "...",
    "\u2026",
    "fake",
    "sample",
    "my_",
    "my-",
    "some-",
    "some_",
    # a value that names what it stands for: "my-secret", "MyToken", "db_password_here"
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
)
_PLACEHOLDER_VALUES = frozenset({"none", "null", "nil", "true", "false", "todo", "undefined"})
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}")


def _is_placeholder(value: str) -> bool:
    """True for values that are obviously not real secrets (empty, templates, names, prose)."""
    v = value.strip()
    low = v.lower()
    if len(v) < 6 or any(c.isspace() for c in v):
        return True  # too short to matter, or a sentence ("Enter your password")
    if v[0] in "<{$%[(!&*" or "{{" in v or "${" in v or "$(" in v:
        return True  # <your-key>, ${TOKEN}, $(cmd), %(pw)s, [REDACTED:...], !vault, &anchor
    if low in _PLACEHOLDER_VALUES or any(w in low for w in _PLACEHOLDER_WORDS):
        return True
    if _ENV_NAME.fullmatch(v) or _COLOUR.fullmatch(v):
        return True  # the NAME of an environment variable ("GITHUB_TOKEN"), a colour
    return len(set(v)) <= 2  # "aaaaaaaa", "********"


def _assign_kind(word: str) -> str:
    w = word.lower()
    if w.startswith(("pass", "pwd")):
        return "password"
    if "token" in w:
        return "token"
    if "api" in w:
        return "api-key"
    return "secret"


def redact(text: str, path: str | None = None) -> tuple[str, int]:
    """Replace high-confidence secrets with ``[REDACTED:<kind>]``; return (text, count).

    ``path`` (repo-relative) says what kind of file this is: in config files, shell scripts and
    env files (:func:`is_config_path`) unquoted ``KEY=value`` literals count too.
    Never changes the number of lines: each line of a multi-line private key block becomes
    a marker, and the block's line breaks stay as they were.
    """
    text, count = _redact_pem(text)

    def sub(pattern: re.Pattern[str], repl: Callable[[re.Match[str]], str]) -> None:
        nonlocal text, count

        def wrapped(m: re.Match[str]) -> str:
            nonlocal count
            new = repl(m)
            if new != m.group(0):
                count += 1
            return new

        text = pattern.sub(wrapped, text)

    for kind, literals, pattern in _TOKEN_PATTERNS:
        if any(lit in text for lit in literals):
            sub(pattern, lambda m, k=kind: _marker(k))
    low = text.lower()
    if "secret" in low and "aws" in low:
        sub(_AWS_SECRET, lambda m: m.group(1) + _marker("aws-secret"))
    if any(w in low for w in _KEY_HINTS):
        sub(_ASSIGN_VALUE, lambda m: _redact_assignment(text, m))
    if path is not None and is_config_path(path) and any(w in low for w in _KEY_HINTS):
        sub(_CONFIG_LINE, _redact_config_line)
    if "bearer" in low or "basic" in low:
        sub(
            _AUTH_HEADER,
            lambda m: (
                m.group(0)
                if _is_placeholder(m.group(2)) or not _mixed(m.group(2))
                else f"{m.group(1)} {_marker('auth-header')}"
            ),
        )
    if "://" in text:
        sub(
            _URL_PASSWORD,
            lambda m: (
                m.group(0)
                if _is_placeholder(m.group(2))
                else f"{m.group(1)}:{_marker('url-password')}@"
            ),
        )
    return text, count


_KEY_HINTS = ("pass", "pwd", "secret", "token", "key", "contrase")


def _mixed(value: str) -> bool:
    """Letters and digits both: a credential, not a word (``Bearer authentication``)."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _redact_config_line(m: re.Match[str]) -> str:
    """Redact the unquoted value of ``KEY = value`` in a config file when KEY names a secret."""
    key, value = m.group(2), m.group(4)
    low = key.lower().replace("-", "_")
    word = next((w for w in _KEY_WORDS if low.endswith(w.replace("-", "_"))), None)
    if word is None or _is_placeholder(value) or value.lower() in low:
        return m.group(0)
    if value.startswith("[REDACTED:"):
        return m.group(0)
    return m.group(1) + key + m.group(3) + _marker(_assign_kind(word)) + m.group(5)


def _redact_assignment(text: str, m: re.Match[str]) -> str:
    """Redact the literal of ``<key> = "<literal>"`` when the key names a secret."""
    start = m.start()
    window = text[max(0, start - _KEY_WINDOW) : start][::-1]
    key = _ASSIGN_KEY_REVERSED.match(window)
    value = m.group(2)
    if key is None or _is_placeholder(value):
        return m.group(0)
    word = key.group(1)[::-1]
    if value.lower() in word.lower():
        return m.group(0)  # access_key = "access"
    prefix = m.group(0)[: m.start(2) - start]
    return prefix + _marker(_assign_kind(word)) + m.group(1)
