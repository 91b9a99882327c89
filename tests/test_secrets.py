"""Secret files are recognised; secrets in kept files are redacted without moving any line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askrepo.ingest import read_text
from askrepo.secrets import is_secret_path, redact
from tests.fixture_repo import EXPECTED, make_fixture_repo

# --- secret files --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        "app/.env",
        ".env.local",
        ".env.production",
        "prod.env",
        ".envrc",
        "certs/server.pem",
        "tls/server.key",
        "id_rsa",
        "home/.ssh/id_ed25519",
        "id_ecdsa",
        "id_dsa",
        "keystore.p12",
        "cert.pfx",
        "release.jks",
        "android/debug.keystore",
        ".netrc",
        ".pgpass",
        ".htpasswd",
        ".git-credentials",
        ".npmrc",
        ".pypirc",
        "credentials",
        ".aws/credentials",
        "gcp/credentials.json",
        "deploy.credentials",
        "config/secrets.yml",
        "secrets.yaml",
        "secrets.json",
        "vault.kdbx",
        "service-account.json",
        "infra/service-account-prod.json",
        "terraform.tfstate",
        "CERTS/SERVER.PEM",
        # registry and cluster credentials, vault passwords, tool configs with keys
        ".docker/config.json",
        "home/.kube/config",
        "deploy/kubeconfig",
        "prod.kubeconfig",
        "terraform.tfstate.backup",
        ".vault_pass",
        "ansible/.vault-password",
        "config/credentials.yml",
        ".s3cfg",
        ".terraformrc",
    ],
)
def test_secret_paths(path: str) -> None:
    assert is_secret_path(path)


@pytest.mark.parametrize(
    "path",
    [
        ".env.example",
        ".env.sample",
        ".env.template",
        ".env.dist",
        "id_rsa.pub",
        ".ssh/id_ed25519.pub",
        "shop/settings.py",
        "src/keys.py",
        "docs/secrets.md",
        "environment.py",
        "src/credentials_form.tsx",
        "key.txt",
        "monkey.py",
        "service-account.md",
        "config.json",  # only Docker's, in .docker/
        "docker/config.json",
        "src/config",
        "kube/config.go",
    ],
)
def test_not_secret_paths(path: str) -> None:
    assert not is_secret_path(path)


# --- redaction: each kind ------------------------------------------------------------------------

GH_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # 36 chars after the prefix
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@pytest.mark.parametrize(
    ("line", "secret", "kind"),
    [
        ('KEY_ID = "AKIAIOSFODNN7EXAMPLE"', "AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
        ("key=ASIAY34FZKBOKMUTVV7A&x=1", "ASIAY34FZKBOKMUTVV7A", "aws-access-key"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws-secret",
        ),
        (
            'AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws-secret",
        ),
        (f"token = {GH_TOKEN}", GH_TOKEN, "github-token"),
        (f"x='{GH_TOKEN.replace('ghp_', 'gho_')}'", GH_TOKEN[4:], "github-token"),
        (f"x='{GH_TOKEN.replace('ghp_', 'ghu_')}'", GH_TOKEN[4:], "github-token"),
        (f"x='{GH_TOKEN.replace('ghp_', 'ghs_')}'", GH_TOKEN[4:], "github-token"),
        (f"x='{GH_TOKEN.replace('ghp_', 'ghr_')}'", GH_TOKEN[4:], "github-token"),
        (
            "auth: github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
            "github-token",
        ),
        (
            "slack = 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'",
            "xoxb-123456789012",
            "slack-token",
        ),
        (
            "hook = 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX'",
            "T00000000/B00000000",
            "slack-webhook",
        ),
        (
            "stripe.api_key = sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
            "stripe-key",
        ),
        (
            'const KEY = "AIzaSyA1234567890abcdefghijklmnopqrstuv";',
            "AIzaSyA1234567890abcdefghijklmnopqrstuv",
            "google-api-key",
        ),
        (f"Authorization: Bearer {JWT}", JWT, "jwt"),
        ('password = "hunter2hunter2"', "hunter2hunter2", "password"),
        ("DB_PASSWORD='S3cure!pass'", "S3cure!pass", "password"),
        ('dbPassword: "Tr0ub4dor&3x"', "Tr0ub4dor&3x", "password"),
        ('{"passwd": "p4ssw0rd-99"}', "p4ssw0rd-99", "password"),
        ('password: str = "hunter2hunter2"', "hunter2hunter2", "password"),
        ('secret := "9f8e7d6c5b4a"', "9f8e7d6c5b4a", "secret"),
        ("{ :secret => 'f00b4rb4z123' }", "f00b4rb4z123", "secret"),
        ('CLIENT_SECRET = "qwertyuiop123456"', "qwertyuiop123456", "secret"),
        ("api_key: 'a1b2c3d4e5f6g7h8'", "a1b2c3d4e5f6g7h8", "api-key"),
        ('apiKey = "k-8s7d6f5g4h3j"', "k-8s7d6f5g4h3j", "api-key"),
        ('"x-api-key": "zzq9182736455"', "zzq9182736455", "api-key"),
        ('auth_token = "tok_7fj3k2l1m0"', "tok_7fj3k2l1m0", "token"),
        ('access_token = "ya29.a0AfH6SMB"', "ya29.a0AfH6SMB", "token"),
        ('GITHUB_TOKEN="abc123def456"', "abc123def456", "token"),
        ("DATABASE_URL = 'postgres://admin:pr0d-P4ss@db:5432/shop'", "pr0d-P4ss", "url-password"),
    ],
)
def test_each_kind_is_redacted(line: str, secret: str, kind: str) -> None:
    text = f"first line\n{line}\nlast line\n"
    out, n = redact(text)
    assert n == 1
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert out.splitlines()[0] == "first line" and out.splitlines()[2] == "last line"
    assert out.count("\n") == text.count("\n")


def test_assignment_keeps_key_and_quotes() -> None:
    out, n = redact('    password = "hunter2hunter2"  # local only')
    assert (out, n) == ('    password = "[REDACTED:password]"  # local only', 1)


def test_url_keeps_user_and_host() -> None:
    out, _ = redact("redis://cache:s3cr3t-value@redis.internal:6379/0")
    assert out == "redis://cache:[REDACTED:url-password]@redis.internal:6379/0"


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n"
    "7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFc\n"
    "zGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE\n"
    "-----END RSA PRIVATE KEY-----\n"
)


def test_pem_block_keeps_every_line() -> None:
    text = 'KEY = """\n' + PEM + '"""\nprint("after")\n'
    out, n = redact(text)
    assert n == 1
    lines = out.split("\n")
    assert len(lines) == len(text.split("\n"))
    assert lines[0] == 'KEY = """'
    assert lines[1:6] == ["[REDACTED:private-key]"] * 5  # BEGIN, 3 key lines, END
    assert lines[6:8] == ['"""', 'print("after")']
    assert "MIIE" not in out


def test_pem_block_with_crlf_and_other_kinds() -> None:
    for header in ("OPENSSH PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        text = PEM.replace("RSA PRIVATE KEY", header).replace("\n", "\r\n")
        out, n = redact(text)
        assert n == 1
        assert out == "[REDACTED:private-key]\r\n" * 5


def test_pem_block_at_end_of_text_keeps_its_last_line() -> None:
    text = PEM.rstrip("\n")
    out, n = redact(text)
    assert n == 1
    assert len(out.splitlines()) == len(text.splitlines()) == 5


def test_pem_block_on_one_line_as_in_json() -> None:
    text = '{"private_key": "' + PEM.replace("\n", "\\n") + '", "client_email": "x@y.z"}\n'
    out, n = redact(text)
    assert n == 1
    assert "MIIE" not in out and '"client_email": "x@y.z"' in out
    assert out.count("\n") == 1


def test_truncated_pem_without_end_marker() -> None:
    body = PEM.split("\n")[1:4]
    text = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(body) + "\n\nnext = 1\n"
    out, n = redact(text)
    assert n == 1
    assert out == "[REDACTED:private-key]\n" * 4 + "\nnext = 1\n"


def test_pem_markers_without_key_material_are_code() -> None:
    text = (
        'BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n'
        'END = b"-----END OPENSSH PRIVATE KEY-----"\n'
    )
    assert redact(text) == (text, 0)


# --- redaction: what is left alone ---------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        'password = ""',
        'password = "changeme"',
        'password = "CHANGE_ME"',
        "api_key = '<your-api-key>'",
        'token = "${GITHUB_TOKEN}"',
        'token = "{{ secrets.TOKEN }}"',
        "password = '%(password)s'",
        'password = os.environ["DB_PASSWORD"]',
        'password = os.getenv("DB_PASSWORD", "")',
        "password = settings.DB_PASSWORD",
        "password = get_password()",
        'token_env = "GITHUB_TOKEN"',
        'prompt_password = "Enter your password:"',
        'password_hash = "5f4dcc3b5aa765d61d8327deb882cf99"',
        'tokenizer = "bert-base-uncased"',
        'token_url = "https://oauth2.example.com/token"',
        'secret_name = "prod-db"',
        'api_key = "your_api_key_here"',
        'password = "xxxxxxxx"',
        'password = "********"',
        'token = "hf_..."',
        'secret = "my-secret"',
        'client_secret = "fake-client-secret"',
        'Token: "#dcdccc"',
        'password = "none"',
        "if password == 'hunter2hunter2':",
        "AKIA1234",  # too short for an access key id
        "MY_AKIAIOSFODNN7EXAMPLEXYZ",  # part of a longer word
        "eyJhbGciOiJIUzI1NiJ9",  # one JWT segment is not a token
        "url = 'https://user:${PASSWORD}@host/'",
        "docs: https://example.com:8080/path@v2",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",  # Stripe test keys are public
    ],
)
def test_left_alone(line: str) -> None:
    assert redact(line) == (line, 0)


def test_count_adds_up_and_nothing_else_changes() -> None:
    text = (
        "import os\n"
        "KEY = 'AKIAIOSFODNN7EXAMPLE'\n"
        "SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'  # aws_secret_access_key\n"
        f"GH = '{GH_TOKEN}'\n"
        'password = "hunter2hunter2"\n'
        "def f():\n"
        "    return 1\n"
    )
    out, n = redact(text)
    assert n == 3  # SECRET is not named like an AWS secret and has no key word: kept
    assert out.split("\n")[0] == "import os"
    assert out.split("\n")[5:] == ["def f():", "    return 1", ""]


# --- line structure is invariant -----------------------------------------------------------------

_SNIPPETS = [
    "AKIAIOSFODNN7EXAMPLE",
    GH_TOKEN,
    JWT,
    'password = "hunter2hunter2"',
    "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    PEM,
    PEM.replace("\n", "\r\n"),
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "postgres://u:p4ssw0rd9@h/db",
    "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXX",
    "xoxp-1234567890-abcdef",
    "sk_live_abcdefghij1234",
    "AIzaSyA1234567890abcdefghijklmnopqrstuv",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_SNIPPETS),
            st.text(alphabet=st.sampled_from(list("ab =:'\"\r\n\t-/+AKIAghp_eyJ.@")), max_size=40),
        ),
        max_size=12,
    )
)
def test_line_breaks_never_change(parts: list[str]) -> None:
    text = "".join(parts)
    out, n = redact(text)
    assert out.count("\n") == text.count("\n")
    assert out.count("\r") == text.count("\r")
    assert len(out.splitlines()) == len(text.splitlines())
    assert n >= 0
    assert redact(out)[0] == out  # idempotent: markers are never redacted again


# --- size ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit",
    [
        "a",
        "eyJ",
        "ghp_",
        'password="',
        "-----BEGIN PRIVATE KEY-----",
        "://a:",
        "xoxb-",
        "AKIA",
        "aws_secret_access_key=",
        "token = '",
    ],
)
def test_ten_megabyte_single_line_finishes(unit: str) -> None:
    text = unit * (10_000_000 // len(unit))
    out, _ = redact(text)
    assert "\n" not in out


# --- the fixture ---------------------------------------------------------------------------------


def test_fixture_settings_redacted_on_known_lines(tmp_path) -> None:
    root = make_fixture_repo(tmp_path / "repo", git=False)
    text, _ = read_text(root, "shop/settings.py")
    out, n = redact(text)
    lines = out.split("\n")
    assert len(lines) == len(text.split("\n"))
    assert n == 2
    for kind, line_no in EXPECTED["secret_lines"]["shop/settings.py"].items():
        assert f"[REDACTED:{kind}]" in lines[line_no - 1]
    assert "hunter2" not in out and "AKIAIOSFODNN7EXAMPLE" not in out
    changed = [i for i, (a, b) in enumerate(zip(text.split("\n"), lines, strict=True), 1) if a != b]
    assert changed == sorted(EXPECTED["secret_lines"]["shop/settings.py"].values())


# ----------------------------------------------------------------------------------------------
# Measured against detect-secrets (issue 10 item 13): unquoted config values, more token kinds


def test_unquoted_password_in_ini_is_redacted_but_not_a_python_variable() -> None:
    text = "[database]\nuser = admin\npassword=hunter2\n"
    out, n = redact(text, "conf/app.ini")
    assert n == 1 and "hunter2" not in out and "password=[REDACTED:password]" in out
    assert out.count("\n") == text.count("\n")
    assert redact(text)[0] == text  # without a path nothing says it is a config file
    code = "password = hunter2\n"  # Python: a variable, not a literal
    assert redact(code, "app/settings.py") == (code, 0)


@pytest.mark.parametrize(
    "path, line, secret",
    [
        ("setup.cfg", "password = Xk29fLq0aZ7p  # prod", "Xk29fLq0aZ7p"),
        ("app.properties", "spring.datasource.password=p4ssW0rdLongEnough", "p4ssW0rdLongEnough"),
        ("k8s/c.yml", "  client_secret: Zq81mNb6Tr0Lp2", "Zq81mNb6Tr0Lp2"),
        ("docker-compose.yml", "      - POSTGRES_PASSWORD=pgS3cretValue", "pgS3cretValue"),
        ("deploy.sh", "export DB_PASSWORD=S3cr3tValue99", "S3cr3tValue99"),
        ("Dockerfile", "ENV API_TOKEN=tok9f8e7d6c5b4a", "tok9f8e7d6c5b4a"),
        ("win.ini", "password = hunter2\r", "hunter2"),
        # a kubeconfig under any name: its private key
        (
            "deploy/cluster.yaml",
            "    client-key-data: LS0tLS1CRUdJTiBSU0EgS0VZ",
            "LS0tLS1CRUdJTiBSU0EgS0VZ",
        ),
    ],
)
def test_unquoted_config_values(path: str, line: str, secret: str) -> None:
    out, n = redact(line + "\n", path)
    assert n == 1 and secret not in out


@pytest.mark.parametrize(
    "path, line",
    [
        ("conf/app.ini", "password = ${DB_PASSWORD}"),
        ("conf/app.ini", "password_file = /run/secrets/db_password"),
        ("values.yaml", "  password: !vault |"),
        ("values.yaml", "  password: <your-password>"),
        ("deploy.sh", "export DB_PASSWORD=$DB_PASSWORD_FROM_CI"),
        ("deploy.sh", 'export DB_PASSWORD="$(vault read -field=pw secret/db)"'),
        ("conf/app.ini", "token ="),
        ("conf/app.ini", "token = null"),
        ("k8s/d.yml", "          key: password"),
    ],
)
def test_config_lines_left_alone(path: str, line: str) -> None:
    assert redact(line + "\n", path) == (line + "\n", 0)


@pytest.mark.parametrize(
    "line, secret",
    [
        ('x = "glpat-' + "a1B2c3D4e5F6g7H8i9J0" + '"', "glpat-a1B2c3D4e5F6g7H8i9J0"),
        ('a = "npm_' + "A" * 18 + "b" * 18 + '"', "npm_" + "A" * 18 + "b" * 18),
        ("t = 'pypi-AgEIcHlwaS5vcmc" + "x" * 60 + "'", "pypi-AgEIcHlwaS5vcmc" + "x" * 60),
        ("k = 'sk-" + "a" * 20 + "T3BlbkFJ" + "b" * 20 + "'", "T3BlbkFJ"),
        ("c = SG('SG." + "a" * 22 + "." + "b" * 43 + "')", "SG." + "a" * 22),
        ("AccountKey=" + "Q" * 86 + "==;EndpointSuffix=x", "Q" * 86),
        ('c = Client("SK' + "0123456789abcdef" * 2 + '")', "0123456789abcdef"),
        ('m = "' + "0123456789abcdef" * 2 + '-us12"', "0123456789abcdef"),
        ('curl -H "Authorization: Bearer a8F3kLq9Zr2XwP0vN7mT"', "a8F3kLq9Zr2XwP0vN7mT"),
    ],
)
def test_token_kinds_adopted_from_detect_secrets(line: str, secret: str) -> None:
    out, n = redact(line + "\n")
    assert n >= 1 and secret not in out


def test_bearer_in_prose_and_code_is_left_alone() -> None:
    for line in (
        "Use Bearer authentication for every request.",
        'headers["Authorization"] = "Bearer " + token',
        "Authorization: Bearer <your-access-token>",
    ):
        assert redact(line + "\n") == (line + "\n", 0)


def test_benchmark_fixture_all_caught_no_false_alarms() -> None:
    """tests/data/secrets_bench.jsonl (benchmarks/bench_secrets.py): every secret caught, every
    ordinary line untouched, with the file's path."""
    import json
    from pathlib import Path

    fixture = Path(__file__).parent / "data" / "secrets_bench.jsonl"
    cases = [json.loads(x) for x in fixture.read_text("utf-8").splitlines() if x.strip()]
    missed, false = [], []
    for c in cases:
        out, _ = redact(c["text"], c["path"])
        if c["secret"] is None and out != c["text"]:
            false.append(c["id"])
        if c["secret"] is not None and c["secret"] in out:
            missed.append(c["id"])
    assert (missed, false) == ([], [])
    assert sum(c["secret"] is not None for c in cases) >= 30
    assert sum(c["secret"] is None for c in cases) >= 30
