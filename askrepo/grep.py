"""Exact search over the indexed files: ripgrep-like line matches, ranked for coding agents.

Semantics
---------
* A pattern is a Python regular expression matched against each line separately (lines are split
  on ``"\\n"`` only; a trailing ``"\\r"`` is ignored). ``literal=True`` searches the text as is.
  One result per matching line; ``line`` and ``column`` are 1-based (column counts characters).
* A literal query that has no match anywhere but contains regex escapes of punctuation
  (``class Foo\\(``, ``a \\| b``) is searched again with the escapes removed: people often paste an
  escaped pattern into a literal search. The result's ``note`` says when this happened.
* ``path`` is a regular expression searched (``re.search``) in the repo-relative POSIX path;
  ``lang`` keeps files whose indexed language is that name (``py``, ``js``, ``ts`` … are aliases).

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

Safety: patterns over 10 KB are refused, and any user regex (the pattern, or ``path``) is run in
a separate worker process that is killed at the deadline, so a catastrophic regex returns
``timed_out=True`` (with the matches found so far) instead of hanging the caller.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .datatypes import CODE, CONFIG, DOC, TEST
from .errors import UsageError

MAX_PATTERN_BYTES = 10 * 1024
MAX_LIMIT = 1000
MAX_TEXT_CHARS = 2000  # longer lines (minified code) are cut in the output
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
    m = _ASSIGN_RE.match(line)
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
    "dash": re.compile(r"(?P<p>--[^\n]*|/\*[\s\S]*?(?:\*/|\Z))|(?P<c>" + _STR + ")"),
    "markup": re.compile(r"(?P<p><!--[\s\S]*?(?:-->|\Z))|(?P<c>" + _STR + ")"),
}


def _token_family(lang: str | None) -> str | None:
    if lang is None:
        return None
    if lang in ("python", "starlark", "pymanifest"):
        return "python"
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
# Scanning (runs in-process for plain literals, in a worker process for user regexes)


def _unescape(query: str) -> str:
    """Drop backslashes before punctuation/space: ``class Foo\\(`` -> ``class Foo(``."""
    return re.sub(r"\\([^A-Za-z0-9_])", r"\1", query)


def _scan(req: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> None:
    """Search the files in ``req`` and ``emit`` one record per file with matches.

    The last record is ``{"done": files_searched, "timed_out": bool, "capped": bool}``.
    """
    from .secrets import redact

    root = Path(req["root"])
    root_real = os.path.realpath(root)
    flags = 0 if req["case_sensitive"] else re.IGNORECASE
    rx = re.compile(req["regex"], flags)
    exact_rx = None if req["case_sensitive"] else re.compile(req["regex"])
    path_rx = re.compile(req["path"]) if req.get("path") else None
    needle = req.get("needle")  # a plain string every matching file must contain
    deadline = req["deadline"]
    searched = found = 0
    timed_out = capped = False
    for path, lang, cls in req["files"]:
        if time.time() > deadline:
            timed_out = True
            break
        if found >= MAX_CANDIDATES:
            capped = True
            break
        if path_rx is not None and not path_rx.search(path):
            continue
        full = os.path.join(root, path)
        real = os.path.realpath(full)
        if not real.startswith(root_real + os.sep):
            continue  # a symlink that leaves the repository
        try:
            with open(real, "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        searched += 1
        if b"\0" in raw[:_BINARY_SNIFF]:
            continue
        text = raw.decode("utf-8-sig", errors="replace")  # as the indexer reads it
        text, _ = redact(text)  # search what the index holds: secrets never match or show
        if needle is not None and needle not in text:
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "" and text.endswith("\n"):
            lines.pop()
        rows: list[list[Any]] = []
        spans: list[tuple[int, int]] | None = None
        starts: list[int] = []
        offsets: list[int] = []
        for idx, raw_line in enumerate(lines):
            line = raw_line[:-1] if raw_line.endswith("\r") else raw_line
            m = rx.search(line)
            if m is None:
                continue
            if spans is None:
                spans = prose_spans(text, lang)
                starts = [s for s, _ in spans]
                pos = 0
                for ln in lines:
                    offsets.append(pos)
                    pos += len(ln) + 1
            dspan = definition_span(line)
            is_def = bool(
                dspan and m.start() <= dspan[0] and dspan[1] <= m.end() and dspan[0] < dspan[1]
            ) and not is_local(lines, idx)
            shown = line if len(line) <= MAX_TEXT_CHARS else line[:MAX_TEXT_CHARS] + "…"
            rows.append(
                [
                    idx + 1,
                    m.start() + 1,
                    shown,
                    is_def,
                    exact_rx is None or exact_rx.search(line) is not None,
                    is_whole_word(line, m.start(), m.end()),
                    _in_spans(spans, starts, offsets[idx] + m.start()),
                ]
            )
            found += 1
            if found >= MAX_CANDIDATES:
                break
        if rows:
            emit({"p": path, "r": _CLASS_RANK.get(cls, 0), "m": rows})
    emit({"done": searched, "timed_out": timed_out, "capped": capped})


def _worker_main() -> None:
    """Entry point of the worker process: a JSON request on stdin, JSON lines on stdout."""
    req = json.loads(sys.stdin.read())
    out = sys.stdout

    def emit(rec: dict[str, Any]) -> None:
        out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        out.flush()

    _scan(req, emit)


def _run_in_worker(req: dict[str, Any], timeout_s: float) -> tuple[list[dict[str, Any]], bool]:
    """Run ``_scan`` in a fresh interpreter; kill it at the deadline. Returns (records, killed)."""
    pkg_parent = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = pkg_parent + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    proc = subprocess.Popen(
        [sys.executable, "-S", "-c", "from askrepo.grep import _worker_main; _worker_main()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        encoding="utf-8",
    )
    killed = False
    try:
        out, err = proc.communicate(json.dumps(req), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        killed = True
    records = []
    for ln in (out or "").splitlines():
        try:
            records.append(json.loads(ln))
        except json.JSONDecodeError:
            break  # a line cut by the kill
    if not killed and proc.returncode != 0:
        last = (err or "").strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"grep worker failed: {last[0]}")
    return records, killed


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


def _compile_check(what: str, regex: str, hint: str) -> None:
    try:
        re.compile(regex)
    except re.error as exc:
        raise UsageError(f"Invalid regular expression in {what}: {exc} — {hint}") from exc


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

    See the module docstring for the semantics and the ranking. Raises UsageError for bad input.
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
    if path is not None:
        _compile_check("path", path, "pass a regular expression such as 'src/.*\\.py$'")
    if not literal:
        _compile_check("pattern", pattern, "fix it, or pass literal=true to search the text as is")

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
    result = _search(root, entries, pattern, literal, path, case_sensitive, start + timeout_s)
    if literal and not result[0] and not result[2] and (unescaped := _unescape(pattern)) != pattern:
        remaining = max(0.05, start + timeout_s - time.time())
        second = _search(
            root, entries, unescaped, True, path, case_sensitive, time.time() + remaining
        )
        if second[0]:
            note = f"No literal match for {pattern!r}; showing matches of {unescaped!r}"
            return _finish(second, limit, unescaped, note)
    return _finish(result, limit, pattern, None)


def _search(
    root: Path,
    entries: list[tuple[str, str | None, str]],
    pattern: str,
    literal: bool,
    path: str | None,
    case_sensitive: bool,
    deadline: float,
) -> tuple[list[Candidate], int, bool, bool]:
    """Returns (candidates, files_searched, timed_out, capped)."""
    req = {
        "root": str(root),
        "files": entries,
        "regex": re.escape(pattern) if literal else pattern,
        "case_sensitive": case_sensitive,
        "path": path,
        "needle": pattern if literal and case_sensitive else None,
        "deadline": deadline,
    }
    records: list[dict[str, Any]] = []
    killed = False
    if literal and path is None:
        _scan(req, records.append)  # no user regex: linear time, no worker needed
    else:
        records, killed = _run_in_worker(req, max(0.05, deadline - time.time()) + 0.5)
    cands: list[Candidate] = []
    searched, timed_out, capped = 0, killed, False
    for rec in records:
        if "done" in rec:
            searched = rec["done"]
            timed_out = timed_out or rec["timed_out"]
            capped = rec["capped"]
            continue
        for line, col, text, is_def, exact, whole, prose in rec["m"]:
            cands.append(
                Candidate(rec["p"], line, col, text, rec["r"], is_def, exact, whole, prose)
            )
    if killed:
        searched = len({c.path for c in cands})
    return cands, searched, timed_out, capped


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
