"""Split a source file into chunks: one per function, method and class, plus line windows.

Code files are parsed with tree-sitter (tree-sitter-language-pack grammars, bundled, offline).
What counts as a definition is *data*, not code: ``askrepo/queries/<language>.scm`` holds one
tree-sitter query per language using these captures:

``@definition.function`` / ``@definition.method`` / ``@definition.class``
    A definition node. ``@name`` (same pattern) is its name. A function nested directly in a
    class (or impl) becomes a ``method``; definitions nested in a function stay in its chunk.
``@definition.impl``
    A container that emits no chunk of its own but qualifies and "methodises" the functions
    inside it (Rust ``impl Foo`` -> ``Foo.new``). Its other lines become ``window`` chunks.
``@definition.namespace``
    A container that only qualifies names (C++ namespaces, Kotlin companion objects).
``@end``
    Extends a definition to the end of this node, for grammars where a definition's header and
    body are siblings (Dart: ``method_signature`` followed by ``function_body``).
``@receiver``
    Qualifies a definition declared outside its type (Go ``func (s *Server) Run`` ->
    ``Server.Run``, C++ ``void Foo::run()`` -> ``Foo.run``).
``@wrapper``
    A node that, when a definition is its last named child, is part of that definition
    (Python ``decorated_definition``, JS ``export_statement``, C++ ``template_declaration``).
``@default``
    Marks a definition without a name that the file exports as its default (JS/TS
    ``export default function () {}``, ``export default class extends Base {}``): it is named
    after the file (``adapters/xhr.js`` -> ``xhr``; ``index.js`` -> its directory's name).
``@doc``
    Comments, decorators and attributes: a contiguous run of them directly above a definition
    (no blank line, nothing else on their lines) is attached to its chunk; a ``/** … */``
    block may stand one blank line above.
``@call``
    The callee name of a call (``a.b.c()`` -> ``c``); a chunk's ``calls`` are those in its lines.

A file starting with ``; inherits: other`` reuses ``other.scm`` (``tsx`` -> ``typescript``);
a file whose name starts with ``_`` only holds patterns several languages share
(``_ecmascript.scm``) and is not a language.
There is no per-language code in this module: everything is generic over the captures above.
Between and around definitions, the remaining lines become ``window`` chunks (symbol = the
enclosing class, or None at module level); a gap made only of closing punctuation (``}``,
``end``) is glued onto the chunk before it instead.

Lines are split on ``"\\n"`` only, exactly as editors and git count them; tree-sitter rows are
computed over the UTF-8 bytes of the same text and therefore agree.
"""

from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import accumulate
from typing import Any

from askrepo import cmacros, rustmacros
from askrepo.datatypes import Chunk
from askrepo.lines import split_lines

# Bump whenever the chunks of some file change: the next `askrepo index` re-chunks and
# re-embeds every file of an index built by another version (store._check_compatible).
# 4: source files that are not UTF-8 are read as cp1252 / Latin-1 instead of with U+FFFD
# (ingest.decode), and the changes made under version 3 without a bump reach old indexes
# (Swift operator functions, a /** */ doc one blank line above, Kotlin typealias, #if-wrapped
# C++ declarations, ...).
# 5: a name escaped in backticks (Swift / Kotlin / Scala ``func `set`()``) is stored without
# them; vectors of chunks whose embedded text is unchanged are reused, not recomputed.
# 6: a Rust trait's required methods are chunks of their own (``Buf.chunk``) and an impl for a
# reference or slice qualifies its methods (``impl Buf for &[u8]`` -> ``[u8].chunk``); in
# JavaScript / TypeScript a function set on an object (``res.send = function``,
# ``Foo.prototype.bar = …``) or in an object of functions (``const traps = { get() {} }``) is
# qualified by it; Go, Java and TypeScript interface methods and abstract methods are chunks of
# their own too (``declarations.is_bodyless`` tells them apart).
CHUNKER_VERSION = "6"

_SIGNATURE_MAX = 200
_MAX_ATTACHED = 100  # longer comment runs above a definition are left to window chunks
_MAX_ERROR_WIDTH = 5000
_KINDS = frozenset({"function", "method", "class", "impl", "namespace"})
_LANG_NAME = re.compile(r"[a-z0-9_]+")
_INHERITS = re.compile(r"^\s*;+\s*inherits:\s*([\w, ]+)", re.MULTILINE)
# A line made only of closing punctuation or a block terminator (``}``, ``});``, ``end``).
_PUNCT = " \t\r\x0b\x0c{}()[];,"
_TERMINATORS = frozenset({"", "end", "fi", "done", "esac"})
# Words that may precede a definition on its first line and belong in its signature.
_SIG_PREFIX = re.compile(r"[\w\s]*")
_SIG_OPEN = re.compile(r"([(\[]) ")
_SIG_CLOSE = re.compile(r",? ([)\]])")
# Markdown
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)(.*)")
_SETEXT = re.compile(r" {0,3}(?:={3,}|-{3,})[ \t]*")


# --------------------------------------------------------------------------------------------
# Public API


def chunk_text(
    path: str,
    text: str,
    language: str | None,
    *,
    max_lines: int = 150,
    window: int = 60,
    overlap: int = 10,
) -> list[Chunk]:
    """Chunk one file's text. Never raises; blank text gives ``[]``.

    ``language`` is a tree-sitter-language-pack name, ``"markdown"``, or None. Code in a
    language without a query file (or that fails to parse) is chunked as plain text windows.
    """
    lines = split_lines(text)
    if not any(line.strip() for line in lines):
        return []
    window = max(1, int(window))
    overlap = min(max(0, int(overlap)), window - 1)
    max_lines = max(1, int(max_lines))
    out = _Out(path, lines, language, window, overlap, max_lines)
    if language == "markdown":
        _markdown(out)
        return out.chunks
    if language:
        try:
            if _code(out, text, language):
                return out.chunks
        except Exception:  # noqa: BLE001 - a grammar/query failure must degrade, not crash
            out.chunks.clear()
    _windows(out, 1, len(lines), "text", None)
    return out.chunks


def supported_languages() -> list[str]:
    """Languages that have a query file (and so get definition-level chunks)."""
    root = resources.files("askrepo").joinpath("queries")
    return sorted(
        p.name[:-4] for p in root.iterdir() if p.name.endswith(".scm") and p.name[0] != "_"
    )


# --------------------------------------------------------------------------------------------
# Output collection


@dataclass
class _Out:
    path: str
    lines: list[str]
    language: str | None
    window: int
    overlap: int
    max_lines: int
    chunks: list[Chunk] = field(default_factory=list)
    call_rows: list[int] = field(default_factory=list)  # 1-based line of each call, sorted
    call_names: list[str] = field(default_factory=list)

    def blank(self, line_no: int) -> bool:
        return not self.lines[line_no - 1].strip()

    def trim(self, lo: int, hi: int) -> tuple[int, int] | None:
        """Range without leading/trailing blank lines, or None if all blank."""
        while lo <= hi and self.blank(lo):
            lo += 1
        while hi >= lo and self.blank(hi):
            hi -= 1
        return (lo, hi) if lo <= hi else None

    def calls(self, lo: int, hi: int) -> list[str]:
        if not self.call_rows:
            return []
        a = bisect.bisect_left(self.call_rows, lo)
        b = bisect.bisect_right(self.call_rows, hi)
        return list(dict.fromkeys(self.call_names[a:b]))

    def add(
        self,
        lo: int,
        hi: int,
        kind: str,
        symbol: str | None,
        signature: str | None = None,
    ) -> None:
        self.chunks.append(
            Chunk(
                path=self.path,
                start_line=lo,
                end_line=hi,
                text="\n".join(self.lines[lo - 1 : hi]),
                language=self.language,
                kind=kind,
                symbol=symbol,
                signature=signature,
                calls=self.calls(lo, hi),
            )
        )

    def extend_last(self, hi: int) -> None:
        last = self.chunks[-1]
        last.end_line = hi
        last.text = "\n".join(self.lines[last.start_line - 1 : hi])
        last.calls = self.calls(last.start_line, hi)


def _spans(lo: int, hi: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Overlapping windows of ``size`` lines covering lo..hi."""
    step = max(1, size - overlap)
    out = []
    a = lo
    while True:
        b = min(a + size - 1, hi)
        out.append((a, b))
        if b >= hi:
            return out
        a += step


def _windows(
    out: _Out,
    lo: int,
    hi: int,
    kind: str,
    symbol: str | None,
    signature: str | None = None,
    *,
    limit: int | None = None,
) -> None:
    """One chunk for lo..hi if it has at most ``limit`` lines (default: window), else windows.

    Blank edges are trimmed and blank-only windows skipped.
    """
    rng = out.trim(lo, hi)
    if rng is None:
        return
    lo, hi = rng
    limit = out.window if limit is None else limit
    spans = [(lo, hi)] if hi - lo + 1 <= limit else _spans(lo, hi, out.window, out.overlap)
    for a, b in spans:
        r = out.trim(a, b)
        if r is not None:
            out.add(r[0], r[1], kind, symbol, signature)


# --------------------------------------------------------------------------------------------
# Query loading (cached per language; parsers per thread because they are not thread-safe)

_local = threading.local()


@cache
def _query_source(language: str) -> str | None:
    if not _LANG_NAME.fullmatch(language):
        return None
    res = resources.files("askrepo").joinpath("queries", f"{language}.scm")
    if not res.is_file():
        return None
    src = res.read_text(encoding="utf-8")
    m = _INHERITS.search(src)
    if m:
        parents = [p.strip() for p in m.group(1).split(",") if p.strip()]
        src = "\n".join([*(_query_source(p) or "" for p in parents), src])
    return src


@cache
def _compiled(language: str) -> tuple[Any, Any] | None:
    """(Language, Query) for ``language`` or None if it has no query file. Raises on bad queries."""
    src = _query_source(language)
    if src is None:
        return None
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    lang = get_language(language)  # type: ignore[arg-type]
    return lang, Query(lang, src)


def _parser(language: str, lang: Any) -> Any:
    cache = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    parser = cache.get(language)
    if parser is None:
        from tree_sitter import Parser

        parser = cache[language] = Parser(lang)
    return parser


# --------------------------------------------------------------------------------------------
# Code


@dataclass
class _Def:
    node: Any  # range node (extended to its wrappers)
    core: Any  # the captured definition node (for the signature)
    kind: str  # function | method | class | impl | namespace
    name: str | None
    receiver: str | None
    start: int  # 1-based first line of the node itself
    end: int  # 1-based last line
    end_byte: int  # past the node, or past its @end extent
    children: list[_Def] = field(default_factory=list)


class _ByteLines:
    """Line geometry of the parsed bytes, so per-node checks never rescan a long line."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.starts = [0]
        self.starts.extend(accumulate(len(line) + 1 for line in data.split(b"\n")))
        self._ink: dict[int, tuple[int, int]] = {}

    def start(self, row: int) -> int:
        return self.starts[min(row, len(self.starts) - 1)]

    def ink(self, row: int) -> tuple[int, int]:
        """Byte offsets of the first and past-the-last non-whitespace byte of ``row``."""
        got = self._ink.get(row)
        if got is None:
            a = self.start(row)
            b = min(self.start(row + 1) - 1, len(self.data)) if row + 1 < len(self.starts) else a
            line = self.data[a:b]
            lead = len(line) - len(line.lstrip())
            got = self._ink[row] = (a + lead, a + len(line.rstrip()))
        return got


def _end_row(node: Any) -> int:
    """0-based last row, not counting a trailing newline the node swallowed."""
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        row -= 1
    return row


def _text(data: bytes, node: Any) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _part(name: str) -> str:
    """A symbol part: ``ns::Foo`` / ``App\\Models`` -> ``ns.Foo`` / ``App.Models``; an operator
    (Swift ``..<``, ``<~>``: no word character) stays whole; a name escaped in backticks
    (Swift / Kotlin / Scala ``func `default`()``, ``fun `is`()``) is the name itself."""
    name = name.replace("`", "")
    if not _WORDISH.search(name):
        return name
    return ".".join(" ".join(p.split()) for p in re.split(r"::|\\|\.", name) if p.strip())


_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_WORDISH = re.compile(r"\w")


def _qualified(name: str) -> tuple[str, bool]:
    """``(cleaned, swallowed)`` for a C++-style name (with ``::`` or ``<``): template arguments
    dropped (``Foo<T>`` -> ``Foo``) and, when an unknown macro made the parser swallow the
    return type into the name (``SPDLOG_INLINE std::string Foo::bar()``), only its last word
    kept; ``swallowed`` says so, and then the receiver captured with it is part of that type,
    not a scope."""
    if "<" not in name and "::" not in name or "operator" in name or not _WORDISH.search(name):
        return name, False
    prev = None
    while prev != name:
        prev, name = name, _TEMPLATE_ARGS.sub("", name)
    words = name.split()
    if len(words) > 1:
        return words[-1].lstrip("&*"), True
    return name, False


def _code(out: _Out, text: str, language: str) -> bool:
    """Chunk code by definitions. False if ``language`` has no query (caller falls back)."""
    compiled = _compiled(language)
    if compiled is None:
        return False
    lang, query = compiled
    from tree_sitter import QueryCursor

    if language in cmacros.LANGUAGES:
        text = cmacros.mask_macros(text)  # same length: offsets still match out.lines
    data = text.encode("utf-8", "replace")
    parser = _parser(language, lang)
    tree = parser.parse(data)
    if language == "rust":
        opened = rustmacros.unwrap_item_macros(data, tree.root_node, parser.parse)
        if opened is not None:  # items inside cfg_server! { … }: parse them as items
            data = opened
            tree = parser.parse(data)
    if _pathological(tree.root_node):
        return False
    bl = _ByteLines(data)
    nlines = len(out.lines)

    by_core: dict[int, tuple[int, Any, str, Any, Any, Any, bool]] = {}  # core id -> (score, ..)
    wrappers: set[int] = set()
    docs: dict[int, list[Any]] = {}  # end row -> [start byte, start row, ok, end byte, ok]
    calls: list[tuple[int, int, str]] = []
    for _pattern, caps in QueryCursor(query).matches(tree.root_node):
        for cap, nodes in caps.items():
            if cap == "call":
                for n in nodes:
                    if n.end_byte > n.start_byte:
                        calls.append((n.start_byte, n.start_point[0] + 1, _text(data, n)))
            elif cap == "doc":
                for n in nodes:
                    _note_doc(docs, bl, n)
            elif cap == "wrapper":
                wrappers.update(n.id for n in nodes)
            elif cap.startswith("definition."):
                kind = cap.split(".", 1)[1]
                if kind not in _KINDS or not nodes:
                    continue
                core = nodes[0]
                name = (caps.get("name") or [None])[0]
                receiver = (caps.get("receiver") or [None])[0]
                extent = (caps.get("end") or [None])[0]
                default = "default" in caps
                if name is None and kind != "namespace" and not default:
                    continue
                if name is not None and name.end_byte <= name.start_byte:
                    continue  # MISSING node from error recovery
                score = (name is not None) + (receiver is not None)
                old = by_core.get(core.id)
                if old is None or score > old[0]:
                    by_core[core.id] = (score, core, kind, name, receiver, extent, default)

    calls.sort()
    out.call_rows = [row for _b, row, _n in calls]
    out.call_names = [name for _b, _r, name in calls]

    # One definition per name node: the widest wins (e.g. two patterns for one function).
    by_name: dict[Any, _Def] = {}
    for _score, core, kind, name, receiver, extent, default in by_core.values():
        if core.end_byte <= core.start_byte:
            continue
        node = core
        parent = node.parent
        while parent is not None and parent.id in wrappers:
            last = parent.named_children[-1] if parent.named_child_count else None
            if last is None or last.id != node.id:
                break
            node, parent = parent, parent.parent
        last = extent if extent is not None and extent.end_byte > node.end_byte else node
        name_text, swallowed = _qualified(_text(data, name)) if name is not None else (None, False)
        if name is None and default:
            name_text = default_export_name(out.path)
            if name_text is None:
                continue
        receiver_text = None
        if receiver is not None and not swallowed:
            receiver_text = _qualified(_text(data, receiver))[0]
        d = _Def(
            node=node,
            core=core,
            kind=kind,
            name=_part(name_text) if name_text is not None else None,
            receiver=_part(receiver_text) if receiver_text is not None else None,
            start=min(node.start_point[0] + 1, nlines),
            end=min(_end_row(last) + 1, nlines),
            end_byte=last.end_byte,
        )
        key = name.id if name is not None else ("core", core.id)
        old = by_name.get(key)
        if old is None or (d.end_byte - node.start_byte) > (old.end_byte - old.node.start_byte):
            by_name[key] = d

    roots = _nest(sorted(by_name.values(), key=lambda d: (d.node.start_byte, -d.end_byte)))
    ctx = _Ctx(out, bl, _attach_map(docs))
    ctx.emit_children(roots, 1, nlines, [], False, None)
    return True


_INDEX_STEMS = frozenset({"index", "main", "mod"})


def default_export_name(path: str) -> str | None:
    """The name a file's anonymous default export is known by: its stem as an identifier
    (``lib/adapters/xhr.js`` -> ``xhr``, ``use-thing.ts`` -> ``use_thing``); for an
    ``index``/``main`` file, its directory's (``src/router/index.ts`` -> ``router``)."""
    parts = path.replace("\\", "/").split("/")
    stem = parts[-1].split(".", 1)[0]
    if stem.lower() in _INDEX_STEMS and len(parts) > 1:
        stem = parts[-2]
    name = re.sub(r"\W+", "_", stem).strip("_")
    return name if name and not name[0].isdigit() else None


def _pathological(root: Any) -> bool:
    """True for a huge flat ERROR node (e.g. 50k unmatched braces): tree-sitter queries over
    such a node take quadratic time, so the file is chunked as plain text instead."""
    if not root.has_error:
        return False
    if root.type == "ERROR" and root.child_count > _MAX_ERROR_WIDTH:
        return True
    return any(
        c.type == "ERROR" and c.child_count > _MAX_ERROR_WIDTH for c in root.children if c.has_error
    )


def _note_doc(docs: dict[int, list[Any]], bl: _ByteLines, n: Any) -> None:
    """Remember a comment/decorator by its last row, with whether it owns its lines."""
    if n.end_byte <= n.start_byte:
        return
    row = _end_row(n)
    starts_line = bl.ink(n.start_point[0])[0] >= n.start_byte
    ends_line = n.end_point[1] == 0 or bl.ink(n.end_point[0])[1] <= n.end_byte
    old = docs.get(row)
    if old is None:
        docs[row] = [n.start_byte, n.start_point[0], starts_line, n.end_byte, ends_line]
        return
    if n.start_byte < old[0]:
        old[0], old[1], old[2] = n.start_byte, n.start_point[0], starts_line
    if n.end_byte > old[3]:
        old[3], old[4] = n.end_byte, ends_line


def _attach_map(docs: dict[int, list[Any]]) -> dict[int, int]:
    """1-based last line of a whole-line comment/decorator -> its 1-based first line."""
    return {row + 1: v[1] + 1 for row, v in docs.items() if v[2] and v[4] and v[1] <= row}


def _nest(defs: list[_Def]) -> list[_Def]:
    """Build the nesting forest from definitions sorted by (start, -end)."""
    roots: list[_Def] = []
    stack: list[_Def] = []
    for d in defs:
        while stack and (
            d.node.start_byte >= stack[-1].end_byte or d.end_byte > stack[-1].end_byte
        ):
            stack.pop()
        (stack[-1].children if stack else roots).append(d)
        stack.append(d)
    return roots


class _Ctx:
    """Walks the definition forest and lays out chunks so every non-blank line is covered."""

    def __init__(self, out: _Out, bl: _ByteLines, attach: dict[int, int]) -> None:
        self.out = out
        self.bl = bl
        self.data = bl.data
        self.attach = attach

    def attached_start(self, line: int, floor: int) -> int:
        """First line of the doc/decorator run directly above ``line`` (not above ``floor``).

        A ``/** … */`` block (JSDoc, Javadoc, PHPDoc, Doxygen) one blank line above counts as
        directly above: commander writes every method's JSDoc that way, and the block says
        what the definition does. Any other comment past a blank line stays apart (a licence
        header, a section banner)."""
        across = self._doc_block_ends(line - 2, floor) and self.out.blank(line - 1)
        start = line - 1 if across else line  # across: walk up from the blank line
        while start - 1 >= floor and (start - 1) in self.attach:
            first = self.attach[start - 1]
            if first >= start:
                break
            start = max(first, floor)
            if line - start > _MAX_ATTACHED:
                return line
        return line if across and start == line - 1 else start

    def _doc_block_ends(self, row: int, floor: int) -> bool:
        """Whether a whole-line ``/** … */`` comment ends on 1-based ``row`` (not above
        ``floor``)."""
        first = self.attach.get(row)
        if first is None or row < floor or first < floor:
            return False
        lines = self.out.lines
        return lines[first - 1].lstrip().startswith("/**") and lines[row - 1].rstrip().endswith(
            "*/"
        )

    def emit_children(
        self,
        children: list[_Def],
        lo: int,
        hi: int,
        chain: list[str],
        in_class: bool,
        gap_symbol: str | None,
    ) -> None:
        pos = lo
        for d in children:
            if d.end < pos:
                continue  # entirely on lines already emitted (one-liners sharing a line)
            s = d.start if d.start < pos else self.attached_start(d.start, pos)
            if s > pos:
                self.gap(pos, s - 1, gap_symbol)
            self.emit_def(d, s, chain, in_class)
            pos = max(pos, d.end + 1)
        if pos <= hi:
            self.gap(pos, hi, gap_symbol)

    def emit_def(self, d: _Def, s: int, chain: list[str], in_class: bool) -> None:
        names = list(chain)
        if d.receiver:
            names.append(d.receiver)
        if d.name:
            names.append(d.name)
        symbol = ".".join(names) or None
        out = self.out
        if d.kind in ("impl", "namespace"):
            sub_in_class = in_class or d.kind == "impl"
            self.emit_children(d.children, s, d.end, names, sub_in_class, symbol)
            return
        sig = self.signature(d)
        if d.kind != "class":
            kind = "method" if (in_class and d.kind == "function") else d.kind
            _windows(out, s, d.end, kind, symbol, sig, limit=out.max_lines)
            return
        if not d.children:
            _windows(out, s, d.end, "class", symbol, sig, limit=out.max_lines)
            return
        first = d.children[0]
        if first.start <= d.start:
            header_end = d.start
        else:
            header_end = self.attached_start(first.start, d.start + 1) - 1
        _windows(out, s, header_end, "class", symbol, sig, limit=out.max_lines)
        self.emit_children(d.children, header_end + 1, d.end, names, True, symbol)

    def gap(self, lo: int, hi: int, symbol: str | None) -> None:
        """Lines between definitions: windows, or glued to the previous chunk if trivial."""
        out = self.out
        rng = out.trim(lo, hi)
        if rng is None:
            return
        lo, hi = rng
        if (
            out.chunks
            and hi - lo < 3
            and out.chunks[-1].end_line < lo
            and all(out.lines[i - 1].strip(_PUNCT) in _TERMINATORS for i in range(lo, hi + 1))
            and all(out.blank(i) for i in range(out.chunks[-1].end_line + 1, lo))
        ):
            out.extend_last(hi)
            return
        _windows(out, lo, hi, "window", symbol)

    def signature(self, d: _Def) -> str | None:
        """The definition's header: from its first line up to its body, whitespace-collapsed."""
        core = d.core
        body = _find_body(core)
        data = self.data
        row = core.start_point[0]
        line_start = self.bl.start(row)
        start = core.start_byte
        if 0 < start - line_start <= _SIGNATURE_MAX:
            prefix = data[line_start:start].decode("utf-8", "replace")
            if _SIG_PREFIX.fullmatch(prefix):
                start = line_start  # "export const", "pub", "type" before the node
        if body is not None and core.start_byte < body.start_byte <= core.end_byte:
            end = body.start_byte
        elif d.end_byte > core.end_byte:
            end = core.end_byte  # a header node whose body is its @end sibling
        else:
            end = min(core.end_byte, self.bl.start(row + 1) - 1)
        raw = data[start : min(end, start + 4 * _SIGNATURE_MAX)].decode("utf-8", "replace")
        rows = raw.split("\n")
        while len(rows) > 1 and rows[0].lstrip().startswith(("@", "#[", "[")):
            rows.pop(0)  # annotations / attributes inside the definition node
        while len(rows) > 1 and rows[-1].lstrip().startswith(("#", "//", "/*", "*", "--")):
            rows.pop()  # comment lines between the header and the body
        sig = " ".join(" ".join(rows).split())
        sig = _SIG_CLOSE.sub(r"\1", _SIG_OPEN.sub(r"\1", sig))  # "( a, b, )" -> "(a, b)"
        if sig.endswith(("{", ":", ";")):
            sig = sig[:-1].rstrip()
        if len(sig) > _SIGNATURE_MAX:
            sig = sig[: _SIGNATURE_MAX - 1].rstrip() + "…"
        return sig or None


def _find_body(node: Any) -> Any:
    """The body of a definition: a ``body`` field, or a ``*body`` child, searched 3 levels deep;
    else a ``Block`` child of the node itself (Zig: ``Decl`` = ``FnProto`` + ``Block``)."""
    found = _body_below(node)
    if found is None:
        found = next((c for c in reversed(node.named_children) if c.type == "Block"), None)
    return found


def _body_below(node: Any) -> Any:
    level = [node]
    for _ in range(3):
        nxt = []
        for n in level:
            b = n.child_by_field_name("body")
            if b is not None:
                return b
            for c in n.named_children:
                if c.type.endswith("body"):
                    return c
                nxt.append(c)
        level = nxt
        if not level:
            break
    return None


# --------------------------------------------------------------------------------------------
# Markdown


def _atx_title(raw: str) -> str | None:
    """Heading text without the optional closing #s ("Title ##" -> "Title")."""
    title = raw.strip()
    bare = title.rstrip("#")
    if bare != title and (not bare or bare[-1] in " \t"):
        title = bare.strip()
    return title or None


def _markdown(out: _Out) -> None:
    """Sections by ATX/setext headings (outside fenced code); oversized sections windowed."""
    lines = out.lines
    heads: list[tuple[int, str | None]] = [(1, None)]
    fence: str | None = None
    i = 0
    n = len(lines)
    if n and lines[0].strip() == "---":  # YAML front matter
        for j in range(1, n):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    while i < n:
        line = lines[i].rstrip("\r")
        m = _FENCE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker
            elif (
                marker[0] == fence[0]
                and len(marker) >= len(fence)
                and not line.strip()[len(marker) :]
            ):
                fence = None
        elif fence is None:
            h = _ATX.fullmatch(line)
            if h:
                title = _atx_title(h.group(2))
                heads.append((i + 1, title or None))
            elif (
                i > 0
                and _SETEXT.fullmatch(line)
                and lines[i - 1].strip()
                and heads[-1][0] != i  # the line above is not already a heading
                and not _FENCE.match(lines[i - 1])
                and not _SETEXT.fullmatch(lines[i - 1].rstrip("\r"))
            ):
                heads.append((i, lines[i - 1].strip() or None))
        i += 1
    # Drop duplicate starts (a heading on line 1 replaces the preamble).
    clean: list[tuple[int, str | None]] = []
    for start, title in heads:
        if clean and clean[-1][0] >= start:
            clean[-1] = (start, title)
        else:
            clean.append((start, title))
    for k, (start, title) in enumerate(clean):
        end = clean[k + 1][0] - 1 if k + 1 < len(clean) else n
        if start <= end:
            _windows(out, start, end, "section", title, limit=out.max_lines)
