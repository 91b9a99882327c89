"""Find the files worth indexing in a repository, and read them back safely.

Which files (see ``docs/ingest.md`` for the user-facing version):

* Inside a git work tree, git itself lists the files
  (``git ls-files --cached --others --exclude-standard``), so nested ``.gitignore`` files,
  ``.git/info/exclude`` and the global excludes file are honoured exactly as git does. Tracked
  files deleted from the work tree are skipped silently; submodules and nested repositories are
  not entered. Outside a work tree (or without git, or when the root is itself git-ignored),
  the tree is walked directly and every ``.gitignore`` is applied with gitignore semantics.
  A submodule or nested repository is counted as ``nested_repo`` (git mode).
* ``.askrepoignore`` files (gitignore syntax, at the root or in any directory) are applied on
  top, in both modes.
* Then files are skipped, and counted by reason: ``symlink`` (never followed), ``vendored``
  (one entry per directory such as ``node_modules/``), ``secret`` (see ``askrepo.secrets``),
  ``generated`` (lock files, minified or protobuf output, a line longer than 5,000 characters,
  or Go's "Code generated ... DO NOT EDIT." header), ``binary`` (a known non-text extension or
  a NUL byte in the first 8 KiB), ``too_large`` and ``unreadable``. Ignored files are not
  counted.

Symbolic links are never followed and nothing outside the root is ever opened.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from . import config
from .datatypes import CODE, CONFIG, DOC, TEST, SourceFile
from .errors import UsageError
from .secrets import is_secret_path

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

BINARY_SNIFF_BYTES = 8 * 1024
MINIFIED_SNIFF_BYTES = 64 * 1024
MINIFIED_LINE_CHARS = 5_000
IGNORE_FILES = (".gitignore", ".askrepoignore")

# --- what is skipped -----------------------------------------------------------------------------

VENDORED_DIRS = frozenset(
    {
        "node_modules",
        "bower_components",
        "vendor",
        "third_party",
        "dist",
        "build",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".eggs",
        "site-packages",
    }
)
# `build/` and `dist/` are also legitimate package names (pypa's `build` is `src/build/`):
# a directory with these names that holds an `__init__.py` is kept.
_PACKAGE_NAMES_TOO = frozenset({"build", "dist"})
# Version-control directories: skipped silently, like ignored files.
_VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr"})

LOCK_FILES = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "poetry.lock",
        "cargo.lock",
        "uv.lock",
        "composer.lock",
        "gemfile.lock",
        "go.sum",
        "pipfile.lock",
        "pdm.lock",
        "packages.lock.json",
        "podfile.lock",
        "pubspec.lock",
        "mix.lock",
        "flake.lock",
    }
)
_GENERATED_SUFFIXES = (
    ".min.js",
    ".min.css",
    ".min.mjs",
    ".map",
    ".lock",
    "_pb2.py",
    "_pb2.pyi",
    "_pb2_grpc.py",
    ".pb.go",
    ".pb.cc",
    ".pb.h",
    ".bundle.js",
)
_GO_GENERATED = re.compile(rb"^// Code generated .{0,200}DO NOT EDIT\.", re.MULTILINE)

# Known non-text extensions: skipped as "binary" without being read.
BINARY_EXTS = frozenset(
    """
    png jpg jpeg gif bmp ico icns webp tif tiff psd xcf heic avif svg svgz eps ai
    zip tar gz tgz bz2 xz zst 7z rar lz lzma jar war ear whl egg apk deb rpm dmg iso img msi
    woff woff2 ttf otf eot
    pyc pyo pyd so dylib dll exe bin o obj a lib class dex wasm elf
    pdf doc docx xls xlsx ppt pptx odt ods odp rtf epub
    mp3 mp4 m4a wav ogg oga flac aac avi mov mkv webm wmv flv
    sqlite sqlite3 db mdb
    npy npz pkl pickle parquet arrow feather h5 hdf5 onnx pt pth ckpt safetensors gguf tflite pb
    ds_store
    """.split()
)

# --- languages -----------------------------------------------------------------------------------

# Names are tree-sitter-language-pack 0.13.0 names (tests check every one of them).
EXT_LANGUAGE: dict[str, str] = {
    "py": "python",
    "pyi": "python",
    "pyw": "python",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "go": "go",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "h": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "hpp": "cpp",
    "hh": "cpp",
    "hxx": "cpp",
    "h++": "cpp",
    "ipp": "cpp",
    "cu": "cuda",
    "cuh": "cuda",
    "cs": "csharp",
    "rb": "ruby",
    "rake": "ruby",
    "gemspec": "ruby",
    "php": "php",
    "kt": "kotlin",
    "kts": "kotlin",
    "scala": "scala",
    "sc": "scala",
    "sbt": "scala",
    "swift": "swift",
    "m": "objc",
    "mm": "objc",
    "dart": "dart",
    "lua": "lua",
    "rockspec": "lua",
    "luau": "luau",
    "r": "r",
    "jl": "julia",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hrl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "mli": "ocaml_interface",
    "fs": "fsharp",
    "fsx": "fsharp",
    "fsi": "fsharp_signature",
    "clj": "clojure",
    "cljs": "clojure",
    "cljc": "clojure",
    "el": "elisp",
    "lisp": "commonlisp",
    "scm": "scheme",
    "rkt": "racket",
    "zig": "zig",
    "zon": "zig",
    "nim": "nim",
    "v": "verilog",
    "d": "d",
    "pl": "perl",
    "pm": "perl",
    "groovy": "groovy",
    "gradle": "groovy",
    "sol": "solidity",
    "sh": "bash",
    "bash": "bash",
    "zsh": "bash",
    "ksh": "bash",
    "fish": "fish",
    "ps1": "powershell",
    "psm1": "powershell",
    "sql": "sql",
    "graphql": "graphql",
    "gql": "graphql",
    "proto": "proto",
    "thrift": "thrift",
    "html": "html",
    "htm": "html",
    "xhtml": "html",
    "vue": "vue",
    "svelte": "svelte",
    "astro": "astro",
    "css": "css",
    "scss": "scss",
    "md": "markdown",
    "markdown": "markdown",
    "mdx": "markdown",
    "rst": "rst",
    "org": "org",
    "tex": "latex",
    "bib": "bibtex",
    "json": "json",
    "jsonc": "json",
    "json5": "json",
    "ipynb": "json",
    "yaml": "yaml",
    "yml": "yaml",
    "toml": "toml",
    "ini": "ini",
    "cfg": "ini",
    "xml": "xml",
    "xsd": "xml",
    "plist": "xml",
    "csproj": "xml",
    "properties": "properties",
    "csv": "csv",
    "tsv": "tsv",
    "tf": "terraform",
    "tfvars": "terraform",
    "hcl": "hcl",
    "nix": "nix",
    "cmake": "cmake",
    "mk": "make",
    "dockerfile": "dockerfile",
    "bzl": "starlark",
    "star": "starlark",
    "vim": "vim",
    "glsl": "glsl",
    "hlsl": "hlsl",
    "wgsl": "wgsl",
    "asm": "asm",
    "s": "asm",
    "ino": "arduino",
    "gd": "gdscript",
    "elm": "elm",
    "purs": "purescript",
    "gleam": "gleam",
    "odin": "odin",
    "tcl": "tcl",
    "pas": "pascal",
    "f90": "fortran",
    "f95": "fortran",
    "f03": "fortran",
    "vhd": "vhdl",
    "vhdl": "vhdl",
    "sv": "verilog",
    "svh": "verilog",
    "prisma": "prisma",
    "twig": "twig",
    "typ": "typst",
    "rego": "rego",
    "smithy": "smithy",
    "capnp": "capnp",
    "kdl": "kdl",
    "ron": "ron",
    "jsonnet": "jsonnet",
    "libsonnet": "jsonnet",
    "po": "po",
    "erb": "embeddedtemplate",
}
# A ``.h`` file whose first HEAD_SNIFF_BYTES have one of these is C++, not C.
HEAD_SNIFF_BYTES = 8192
_CPP_HEADER = re.compile(
    rb"""^[ \t]*(?:
        namespace[ \t]+\w+[^;\n]*\{ | template[ \t]*< | (?:public|private|protected)[ \t]*:
      | class[ \t]+\w+[^;\n]*[{:]\s*$ | using[ \t]+namespace\b
      | \#[ \t]*include[ \t]*<(?:iostream|string|string_view|vector|memory|map|unordered_map|utility
          |algorithm|functional|type_traits|cstdint|cstddef|cstdio|cstdlib|cstring|chrono|mutex
          |thread|atomic|array|optional|tuple)>
    )|\bstd::\w""",
    re.MULTILINE | re.VERBOSE,
)
# Whole file names (lower-cased) that say the language.
NAME_LANGUAGE: dict[str, str] = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "make",
    "gnumakefile": "make",
    "cmakelists.txt": "cmake",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "guardfile": "ruby",
    "vagrantfile": "ruby",
    "podfile": "ruby",
    "brewfile": "ruby",
    "jenkinsfile": "groovy",
    "build": "starlark",
    "build.bazel": "starlark",
    "workspace": "starlark",
    "workspace.bazel": "starlark",
    "tiltfile": "starlark",
    "go.mod": "gomod",
    "pipfile": "toml",
    ".gitignore": "gitignore",
    ".askrepoignore": "gitignore",
    ".dockerignore": "gitignore",
    ".gitattributes": "gitattributes",
    ".editorconfig": "ini",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".zshrc": "bash",
    ".profile": "bash",
    "meson.build": "meson",
    "kconfig": "kconfig",
}
# Shebang interpreter (version digits stripped) -> language.
SHEBANG_LANGUAGE: dict[str, str] = {
    "python": "python",
    "pypy": "python",
    "node": "javascript",
    "nodejs": "javascript",
    "bun": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "tsx": "typescript",
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "dash": "bash",
    "ksh": "bash",
    "ash": "bash",
    "fish": "fish",
    "ruby": "ruby",
    "perl": "perl",
    "php": "php",
    "lua": "lua",
    "luajit": "lua",
    "rscript": "r",
    "julia": "julia",
    "elixir": "elixir",
    "escript": "erlang",
    "tclsh": "tcl",
    "groovy": "groovy",
    "swift": "swift",
    "pwsh": "powershell",
    "make": "make",
}

# --- classes -------------------------------------------------------------------------------------

TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "testing"})
_TEST_NAME = re.compile(
    r"""(
      test_.*\.py | .*_test\.py | conftest\.py
    | .*_test\.go
    | .*\.(test|spec)\.(ts|tsx|js|jsx|mjs|cjs|mts|cts)
    | .*Tests?\.(java|kt|cs|php|scala|swift)
    | .*_(spec|test)\.rb | .*_test\.(exs|dart|rs|cc|cpp|c)
    | tests?\.(rs|zig) | tests\.py
    )""",
    re.VERBOSE,
)
DOC_LANGUAGES = frozenset({"markdown", "rst", "org", "latex", "bibtex", "typst"})
DOC_EXTS = frozenset({"md", "markdown", "mdx", "rst", "txt", "text", "adoc", "asciidoc", "rdoc"})
DOC_NAMES = frozenset(
    {
        "readme",
        "changelog",
        "changes",
        "history",
        "news",
        "license",
        "licence",
        "copying",
        "authors",
        "contributors",
        "contributing",
        "code_of_conduct",
        "security",
        "notice",
        "maintainers",
    }
)
DOC_DIRS = frozenset({"docs", "doc"})
CONFIG_LANGUAGES = frozenset(
    {
        "json",
        "yaml",
        "toml",
        "ini",
        "xml",
        "properties",
        "csv",
        "tsv",
        "dockerfile",
        "make",
        "cmake",
        "meson",
        "starlark",
        "gomod",
        "gitignore",
        "gitattributes",
        "requirements",
        "terraform",
        "hcl",
        "kconfig",
    }
)
CONFIG_EXTS = frozenset({"conf", "cnf", "env", "example", "sample", "template", "lock"})
CONFIG_NAMES = frozenset(
    {
        "procfile",
        "manifest.in",
        ".npmignore",
        ".prettierrc",
        ".eslintrc",
        ".babelrc",
        ".nvmrc",
        ".python-version",
        ".tool-versions",
        ".flake8",
        ".pylintrc",
        ".coveragerc",
        ".mailmap",
        "codeowners",
    }
)
CONFIG_DIRS = frozenset({".github", ".circleci", ".gitlab", ".devcontainer", ".vscode"})


@dataclass
class WalkResult:
    """The files to index (sorted by path) and what was skipped, by reason."""

    root: Path
    files: list[SourceFile] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_paths: dict[str, list[str]] = field(default_factory=dict)

    def _skip(self, reason: str, path: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        self.skipped_paths.setdefault(reason, []).append(path)


# --- public API ----------------------------------------------------------------------------------


def walk(root: Path, *, max_file_bytes: int | None = None, first_only: bool = False) -> WalkResult:
    """List the files under ``root`` worth indexing; see the module docstring for the rules.
    ``first_only``: stop at the first file kept (whether there is anything to index at all),
    so the skip counts are complete only when no file is kept."""
    root = check_root(root)
    limit = config.max_file_bytes() if max_file_bytes is None else max_file_bytes
    result = WalkResult(root=root)
    top = str(root)
    listed = _git_list(root)
    if listed is not None:
        candidates = _filter_git_list(top, listed, result)
    else:
        candidates = _walk_tree(top, result)
    for rel, st in candidates:
        _inspect(top, rel, st, limit, result)
        if first_only and result.files:
            break
    result.files.sort(key=lambda f: f.path)
    for paths in result.skipped_paths.values():
        paths.sort()
    result.skipped = dict(sorted(result.skipped.items()))
    result.skipped_paths = dict(sorted(result.skipped_paths.items()))
    return result


def inspect_paths(
    root: Path, rels: Iterable[str], *, with_gitignore: bool, max_file_bytes: int | None = None
) -> WalkResult:
    """Apply the walker's rules and checks to these repo-relative paths only: O(paths).

    ``with_gitignore``: also apply ``.gitignore`` files (outside git; inside a work tree git
    has already left out ignored files). Paths that do not exist (any more) are left out.
    """
    root = check_root(root)
    top = str(root)
    limit = config.max_file_bytes() if max_file_bytes is None else max_file_bytes
    result = WalkResult(root=root)
    rules = _Rules(with_gitignore=with_gitignore)
    rules.load_dir(top, "")
    dir_state: dict[str, str | None] = {"": None}
    for rel in sorted(set(rels)):
        parts = rel.split("/")
        if not rel or any(p in ("", ".", "..") or p in _VCS_DIRS for p in parts):
            continue
        if _dir_state(top, "/".join(parts[:-1]), dir_state, rules) is not None:
            continue
        if rules.ignored(rel, is_dir=False):
            continue
        try:
            st = os.lstat(os.path.join(top, rel))
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            continue
        _inspect(top, rel, st, limit, result)
    result.files.sort(key=lambda f: f.path)
    return result


def list_candidates(root: Path) -> list[str]:
    """The paths a walk outside git would inspect (ignore rules applied, nothing read)."""
    result = WalkResult(root=Path(root))
    return [rel for rel, _ in _walk_tree(str(root), result)]


def read_text(root: Path, path: str) -> tuple[str, str] | None:
    """Read one repo-relative file: (text, sha256 of its raw bytes), or None.

    None when the file vanished, is unreadable, is (now) a symlink or not a regular file, or
    the path leaves the root. Line endings are kept as they are; the bytes are decoded by
    ``decode`` (UTF-8 without its BOM, else cp1252 / Latin-1), so line numbers (counted by
    splitting on "\\n") always match the file on disk.
    """
    top = os.path.realpath(root)
    parts = path.replace("\\", "/").split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return None
    full = os.path.join(top, *parts)
    # A symlink anywhere in the parent chain would lead elsewhere: refuse it.
    if os.path.realpath(os.path.dirname(full)) != os.path.dirname(full):
        return None
    data = _read_bytes(full)
    if data is None:
        return None
    return decode(data), hashlib.sha256(data).hexdigest()


def decode(data: bytes) -> str:
    """A source file's bytes as text, the one decoding every reader of file content shares
    (indexing, citations, verify, grep, the file viewer), so they all see the same lines.

    UTF-8 when the bytes are valid UTF-8 (a leading BOM dropped); otherwise the file is taken
    to be a legacy 8-bit encoding: Windows-1252 (cp1252, the superset of Latin-1 that editors
    write), or Latin-1 when it holds one of the five bytes cp1252 leaves undefined. Latin-1
    decodes any bytes, so this never fails and no byte becomes U+FFFD. Only byte 0x0A becomes
    ``"\\n"`` in all three, so line numbers (counted by splitting on ``"\\n"``) match the file
    on disk. A file that is mostly UTF-8 — more valid non-ASCII characters than invalid
    sequences, as a UTF-8 file with one stray Latin-1 byte — stays UTF-8, that byte U+FFFD:
    read as cp1252, every other accented character would show as an ``Ã©`` pair.
    """
    return decode_source(data)[0]


def decode_source(data: bytes) -> tuple[str, str]:
    """``decode`` and the encoding it used: ``"utf-8"``, ``"cp1252"`` or ``"latin-1"``."""
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8-sig", errors="replace")
    invalid = text.count("\ufffd") - data.count("\ufffd".encode())
    valid = sum(1 for ch in text if ord(ch) > 127) - text.count("\ufffd")
    if valid > invalid:  # mostly UTF-8: a stray byte, not a legacy 8-bit file
        return text, "utf-8"
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def detect_language(path: str, head: bytes = b"") -> str | None:
    """Language (a tree-sitter-language-pack name) from the file name, else the shebang."""
    name = path.rsplit("/", 1)[-1].lower()
    if name in NAME_LANGUAGE:
        return NAME_LANGUAGE[name]
    if name.startswith(("dockerfile.", "containerfile.")):
        return "dockerfile"
    if name.startswith("requirements") and name.endswith((".txt", ".in")):
        return "requirements"
    stem, dot, ext = name.rpartition(".")
    if dot and stem and ext in EXT_LANGUAGE:
        if ext == "h" and _CPP_HEADER.search(head):
            return "cpp"  # a C++ header (namespace, template, class, std::) is not C
        return EXT_LANGUAGE[ext]
    return _shebang_language(head)


def classify(path: str, language: str | None) -> str:
    """What a file is for: ``test``, ``doc``, ``config`` or ``code`` (first rule that applies).

    1. test: a directory named tests/test/__tests__/spec/testing, or a test file name
       (``test_*.py``, ``*_test.go``, ``*.test.ts``, ``*.spec.js``, ``FooTest.java``,
       ``FooTests.cs``, ``*_spec.rb``, ``conftest.py``, a Rust or Zig ``test.rs`` /
       ``tests.rs`` module, Django's ``tests.py`` ...).
    2. doc: markdown/rst/org/latex, ``.txt``/``.adoc``, README/CHANGELOG/LICENSE-like names,
       and anything under a ``docs/`` or ``doc/`` directory that is not code (code examples
       there stay code).
    3. config: data and build files (json, yaml, toml, ini, xml, Dockerfile, Makefile, CMake,
       Bazel, go.mod, requirements.txt, terraform, ``.env.example``, dotfiles like
       ``.gitignore``), and everything under ``.github/`` and other CI directories.
    4. code: everything else, including text files of unknown type.
    """
    parts = path.split("/")
    name = parts[-1]
    lname = name.lower()
    dirs = [d.lower() for d in parts[:-1]]
    ext = lname.rpartition(".")[2] if "." in lname.lstrip(".") else ""
    if TEST_DIRS.intersection(dirs) or _TEST_NAME.fullmatch(name):
        return TEST
    if language in CONFIG_LANGUAGES and lname.endswith(".txt"):
        return CONFIG  # requirements.txt, CMakeLists.txt
    base = re.split(r"[.\-]", lname.lstrip("."), maxsplit=1)[0]
    if language in DOC_LANGUAGES or ext in DOC_EXTS:
        return DOC
    if base in DOC_NAMES and (language is None or not ext):
        return DOC  # README, LICENSE-MIT, NOTICE (but not license.py)
    is_code = language is not None and language not in CONFIG_LANGUAGES
    if DOC_DIRS.intersection(dirs) and (not is_code or language in ("html", "css", "scss")):
        return DOC
    if (
        language in CONFIG_LANGUAGES
        or ext in CONFIG_EXTS
        or lname in CONFIG_NAMES
        or lname.startswith(".env")
        or CONFIG_DIRS.intersection(dirs)
    ):
        return CONFIG
    return CODE


def git_commit(root: Path) -> str | None:
    """The HEAD commit sha if ``root`` is inside a git work tree with at least one commit.

    None when the enclosing repository ignores ``root`` (its HEAD says nothing about these files).
    """
    if _git(root, "check-ignore", "-q", ".") is not None:
        return None
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    if out is None:
        return None
    sha = out.decode("ascii", "replace").strip()
    return sha if re.fullmatch(r"[0-9a-f]{40,64}", sha) else None


def git_toplevel(cwd: Path) -> Path | None:
    """The top-level directory of the git work tree containing ``cwd``, or None."""
    out = _git(cwd, "rev-parse", "--show-toplevel")
    top = out.decode("utf-8", "surrogateescape").strip() if out else ""
    return Path(top) if top else None


# --- listing -------------------------------------------------------------------------------------


def check_root(root: Path) -> Path:
    """The resolved root, or a UsageError if it is missing or not a directory."""
    root = Path(root).expanduser()
    if not root.exists():
        raise UsageError(f"{root} does not exist — pass the path of a repository directory")
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory — pass the repository's root directory")
    return root.resolve()


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    # Variables set by a calling git (hooks) would point git at another repository.
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR"):
        env.pop(var, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["LC_ALL"] = "C"
    return env


def _git(root: Path, *args: str) -> bytes | None:
    """Run git in ``root``; stdout, or None if git is missing or fails."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=root,
            env=_git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _git_list(root: Path) -> list[str] | None:
    """Paths (relative to root) git lists as tracked or untracked-not-ignored; None: no git."""
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.strip() != b"true":
        return None
    # The root itself ignored by an enclosing repository: git would list nothing.
    if _git(root, "check-ignore", "-q", ".") is not None:
        return None
    out = _git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if out is None:
        return None
    return sorted({os.fsdecode(p) for p in out.split(b"\0") if p})


def _filter_git_list(
    top: str, listed: Iterable[str], result: WalkResult
) -> list[tuple[str, os.stat_result | None]]:
    """Apply .askrepoignore and vendored-dir rules to git's list; lstat what remains."""
    rules = _Rules()
    rules.load_dir(top, "")
    dir_state: dict[str, str | None] = {"": None}
    out: list[tuple[str, os.stat_result | None]] = []
    for rel in listed:
        nested = rel.endswith("/")  # a nested repository git does not enter
        rel = rel.rstrip("/")
        parts = rel.split("/")
        if parts[-1] in _VCS_DIRS:
            continue
        if _dir_state(top, "/".join(parts[:-1]), dir_state, rules) is not None:
            continue  # ignored, or inside a vendored directory (counted once below)
        if not nested:
            if rules.ignored(rel, is_dir=False):
                continue
            try:
                st = os.lstat(os.path.join(top, rel))
            except (FileNotFoundError, NotADirectoryError):
                continue  # tracked but deleted from the work tree
            except OSError:
                result._skip("unreadable", rel)
                continue
            nested = stat.S_ISDIR(st.st_mode)  # a submodule
        if nested:  # not entered: say so, unless its directory is ignored
            if _dir_state(top, rel, dir_state, rules) is None:
                result._skip("nested_repo", rel + "/")
            continue
        out.append((rel, st))
    for state in sorted({s for s in dir_state.values() if s and s.startswith("vendored:")}):
        result._skip("vendored", state[len("vendored:") :])
    return out


def _dir_state(top: str, d: str, cache: dict[str, str | None], rules: _Rules) -> str | None:
    """Whether directory ``d`` (repo-relative) is ignored, inside a vendored dir, or fine.

    States: None (fine, its .askrepoignore loaded), "ignored", "vendored:<outermost dir>/".
    """
    chain: list[str] = []
    cur = d
    while cur not in cache:
        chain.append(cur)
        cur = cur.rpartition("/")[0]
    state = cache[cur]
    for cur in reversed(chain):
        if state is None:
            name = cur.rpartition("/")[2]
            if name in _VCS_DIRS or rules.ignored(cur, is_dir=True):
                state = "ignored"
            elif _is_vendored(top, cur, name):
                state = f"vendored:{cur}/"
            else:
                rules.load_dir(top, cur)
        cache[cur] = state
    return state


def _walk_tree(top: str, result: WalkResult) -> list[tuple[str, os.stat_result | None]]:
    """Walk the directory tree without git, applying .gitignore and .askrepoignore files."""
    rules = _Rules(with_gitignore=True)
    out: list[tuple[str, os.stat_result | None]] = []
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        abs_dir = os.path.join(top, rel_dir) if rel_dir else top
        rules.load_dir(top, rel_dir)
        try:
            with os.scandir(abs_dir) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            result._skip("unreadable", rel_dir + "/")
            continue
        subdirs: list[str] = []
        for e in entries:
            name = e.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in _VCS_DIRS:
                continue
            try:
                is_dir = e.is_dir(follow_symlinks=False)
                is_link = e.is_symlink()
            except OSError:
                result._skip("unreadable", rel)
                continue
            if is_dir:
                if rules.ignored(rel, is_dir=True):
                    continue
                if _is_vendored(top, rel, name):
                    result._skip("vendored", rel + "/")
                    continue
                subdirs.append(rel)
            elif rules.ignored(rel, is_dir=False):
                continue
            elif is_link:
                result._skip("symlink", rel)
            else:
                out.append((rel, None))
        stack.extend(reversed(subdirs))
    return out


def _is_vendored(top: str, rel: str, name: str) -> bool:
    if name not in VENDORED_DIRS:
        return False
    if name in _PACKAGE_NAMES_TOO:
        return not os.path.isfile(os.path.join(top, rel, "__init__.py"))
    return True


def excluded_by_rules(top: str | Path) -> Callable[[str], bool]:
    """A test of repository paths (which may no longer exist) against the rules the walk
    applies beyond git's own: ``.askrepoignore`` files in the path's directories (as they are
    in the work tree now) and secret file names (``secrets.is_secret_path``). For what the
    history index stores of files the code index leaves out."""
    from .secrets import is_secret_path

    rules = _Rules()
    root = str(top)

    def excluded(rel: str) -> bool:
        if is_secret_path(rel) or _CONTROL_CHARS.search(rel):
            return True
        parts = rel.split("/")
        for i in range(len(parts)):
            rules.load_dir(root, "/".join(parts[:i]))
            if rules.ignored("/".join(parts[: i + 1]), is_dir=i < len(parts) - 1):
                return True
        return False

    return excluded


def _own_dirs(top: str) -> set[str]:
    """ASKREPO_HOME and ASKREPO_MODELS, repo-relative, when they lie inside ``top`` (indexing
    ``~`` or a repository that holds them): never indexed, or every run would index the index
    it just wrote, and every check find it changed."""
    real_top = Path(os.path.realpath(top))
    own = set()
    for d in (config.home(), config.models_dir()):
        real = Path(os.path.realpath(d))
        if real != real_top and real.is_relative_to(real_top):
            own.add(real.relative_to(real_top).as_posix())
    return own


class _Rules:
    """Gitignore-style rules from ignore files in many directories (deeper files win)."""

    def __init__(self, *, with_gitignore: bool = False) -> None:
        self.names = IGNORE_FILES if with_gitignore else (".askrepoignore",)
        # per ignore-file name: directory -> spec
        self.specs: dict[str, dict[str, GitIgnoreSpec]] = {n: {} for n in self.names}
        self.loaded: set[str] = set()
        self.own: set[str] = set()  # askrepo's own directories inside the root (_own_dirs)

    def load_dir(self, top: str, rel_dir: str) -> None:
        if rel_dir in self.loaded:
            return
        self.loaded.add(rel_dir)
        if rel_dir == "":
            self.own = _own_dirs(top)
        for name in self.names:
            path = os.path.join(top, rel_dir, name)
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue  # git does not follow a symlinked .gitignore either
                with open(path, "rb") as fh:
                    lines = fh.read(1024 * 1024).decode("utf-8", "replace").splitlines()
            except OSError:
                continue
            from pathspec import GitIgnoreSpec

            spec = GitIgnoreSpec.from_lines(lines)
            if len(spec):
                self.specs[name][rel_dir] = spec

    def ignored(self, rel: str, *, is_dir: bool) -> bool:
        """True if any rule set ignores ``rel`` (its parent dirs were already checked)."""
        if self.own and any(rel == d or rel.startswith(d + "/") for d in self.own):
            return True
        parts = rel.split("/")
        for specs in self.specs.values():
            if not specs:
                continue
            decision = None
            for i in range(len(parts)):
                base = "/".join(parts[:i])
                spec = specs.get(base)
                if spec is None:
                    continue
                sub = "/".join(parts[i:]) + ("/" if is_dir else "")
                include = spec.check_file(sub).include
                if include is not None:
                    decision = include
            if decision:
                return True
        return False


# --- inspecting one file -------------------------------------------------------------------------


_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")


def _inspect(top: str, rel: str, st: os.stat_result | None, limit: int, result: WalkResult) -> None:
    name = rel.rsplit("/", 1)[-1]
    lname = name.lower()
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not valid UTF-8 cannot be cited
        result._skip("unreadable", rel.encode("utf-8", "replace").decode("utf-8"))
        return
    if _CONTROL_CHARS.search(rel):  # nor one with a newline or tab: `path:start-end` breaks
        result._skip("unreadable", _CONTROL_CHARS.sub("?", rel))
        return
    full = os.path.join(top, rel)
    if st is None:
        try:
            st = os.lstat(full)
        except OSError:
            result._skip("unreadable", rel)
            return
    if stat.S_ISLNK(st.st_mode):
        result._skip("symlink", rel)
        return
    if not stat.S_ISREG(st.st_mode):
        result._skip("unreadable", rel)  # fifo, socket, device
        return
    if is_secret_path(rel):
        result._skip("secret", rel)
        return
    if lname in LOCK_FILES or lname.endswith(_GENERATED_SUFFIXES) or ".generated." in lname:
        result._skip("generated", rel)
        return
    if lname.rpartition(".")[2] in BINARY_EXTS and "." in lname:
        result._skip("binary", rel)
        return
    if st.st_size > limit:
        result._skip("too_large", rel)
        return
    data = _read_bytes(full, limit + 1)
    if data is None:
        result._skip("unreadable", rel)
        return
    if len(data) > limit:
        result._skip("too_large", rel)
        return
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        result._skip("binary", rel)
        return
    if _looks_generated(data):
        result._skip("generated", rel)
        return
    language = detect_language(rel, data[:HEAD_SNIFF_BYTES])
    result.files.append(
        SourceFile(
            path=rel,
            language=language,
            file_class=classify(rel, language),
            size=len(data),
            sha=hashlib.sha256(data).hexdigest(),
            mtime_ns=st.st_mtime_ns,
            inode=st.st_ino,
        )
    )


def _read_bytes(full: str, max_bytes: int | None = None) -> bytes | None:
    """A regular file's bytes, never through a symlink; None if it cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(full, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read() if max_bytes is None else fh.read(max_bytes)
    except OSError:
        return None
    finally:
        os.close(fd)


def _looks_generated(data: bytes) -> bool:
    """Minified (a line over 5,000 chars in the first 64 KiB) or marked as generated."""
    head = data[:MINIFIED_SNIFF_BYTES]
    if len(head) > MINIFIED_LINE_CHARS:
        longest = max(map(len, head.split(b"\n")))
        # count characters, not bytes, for lines that are long only in bytes (e.g. CJK text)
        if longest > MINIFIED_LINE_CHARS and any(
            len(line.decode("utf-8", "replace")) > MINIFIED_LINE_CHARS
            for line in head.split(b"\n")
            if len(line) > MINIFIED_LINE_CHARS
        ):
            return True
    return _GO_GENERATED.search(data[:2048]) is not None


def _shebang_language(head: bytes) -> str | None:
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    words = line.split()
    if not words:
        return None
    prog = words[0].rsplit("/", 1)[-1]
    if prog == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if not rest:
            return None
        prog = rest[0].rsplit("/", 1)[-1]
    prog = re.sub(r"[\d.]+$", "", prog.lower())
    return SHEBANG_LANGUAGE.get(prog)
