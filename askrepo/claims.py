"""Verified claims: split an answer into claims and check what each names against its citations.

A claim is a sentence, a bullet or a fenced code block. For each claim: its ``[n]`` citations,
the things it names — identifiers (``Context.lookup_default``, ``default_map``), paths
(``src/click/core.py:727-771``), line numbers (``line 320``) and literals (backticked code,
quoted text) — and which of those its cited snippets do not show (a path also counts when the
index has the file). A claim that names something its citations do not show, or that names
things and cites nothing, is unsupported. Pure functions; the snippets are anything with
``path``, ``start_line``, ``end_line``, ``symbol`` and ``text``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from askrepo.datatypes import symbol_matches
from askrepo.identifiers import FILE_EXTENSIONS, looks_like_identifier

# A citation group as askrepo.answer reads it: [3], [1, 2], [2-4].
_GROUP = re.compile(r"\[\s*(\d+(?:\s*[-–]\s*\d+)?(?:\s*,\s*\d+(?:\s*[-–]\s*\d+)?)*)\s*\]")
_ITEM = re.compile(r"(\d+)(?:\s*[-–]\s*(\d+))?")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)
_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_DOTTED = re.compile(r"(?<![\w.:/-])[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
_EXT = "|".join(sorted(FILE_EXTENSIONS, key=len, reverse=True))
_PATH = re.compile(
    rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{_EXT}))(?::(\d+)(?:-(\d+))?)?(?![\w/])"
)
_SLASH_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+)(?::(\d+)(?:-(\d+))?)?(?![\w/])")
_LINE_REF = re.compile(r"\b(?:lines?|L)\s?(\d+)(?:\s*[-–]\s*(\d+))?\b")
_QUOTED = re.compile(r"\"([^\"\n]{2,200})\"|“([^”\n]{2,200})”")
_SENTENCE = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)([.!?])\s+(?=[A-Z\[`*\"“(])")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_RECEIVERS = ("self.", "this.", "cls.")


@dataclass
class Claim:
    text: str
    citations: list[int]
    names: list[str] = field(default_factory=list)  # everything checked, in order
    unsupported: list[str] = field(default_factory=list)

    @property
    def supported(self) -> bool:
        """Cites something and names nothing its citations do not show."""
        return bool(self.citations) and not self.unsupported

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "citations": list(self.citations),
            "names": list(self.names),
            "unsupported": list(self.unsupported),
        }


# ------------------------------------------------------------------------------------------
# Splitting


def _mask(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with every match of ``pattern`` replaced by as many ``x`` (newlines kept)."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", "x", m.group(0)), text)


def _blank(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with every match of ``pattern`` replaced by as many spaces (newlines kept): no
    word of the match, nor a made-up one (``xxx.xxx``), is left to read as a name."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def citations_in(text: str) -> list[int]:
    """``[n]`` numbers in ``text`` outside code, in first-appearance order (ranges expanded)."""
    masked = _mask(_mask(text, _FENCE), _SPAN)
    out: list[int] = []
    for m in _GROUP.finditer(masked):
        start = m.start()
        before = masked[start - 1] if start else ""
        after = masked[m.end()] if m.end() < len(masked) else ""
        if re.match(r"[\w)]", before) or after == "(":
            continue
        for item in _ITEM.finditer(m.group(1)):
            a, b = int(item.group(1)), int(item.group(2)) if item.group(2) else None
            nums = [a] if b is None else list(range(a, b + 1)) if a < b <= a + 50 else [a, b]
            out.extend(n for n in nums if n not in out)
    return out


def _strip_citations(text: str) -> str:
    return _GROUP.sub("", text)


def split_claims(text: str) -> list[str]:
    """Claims of an answer, in order: each fenced code block (with the line that introduces it
    when that line only carries citations), then each sentence of each prose line.

    A fragment that is only citations or punctuation joins the claim before it; headings and
    empty lines are not claims.
    """
    out: list[str] = []
    pos = 0
    for m in _FENCE.finditer(text):
        before = text[pos : m.start()].rstrip("\n")
        head, _, last = before.rpartition("\n")
        block = m.group(0).strip("\n")
        if last.strip() and not _PATH.sub("", _strip_citations(last)).strip(" .:-—()"):
            before = head  # "[1] src/x.py:1-9" right above the block introduces it
            block = last.strip() + "\n" + block
        out.extend(_prose_claims(before))
        out.append(block)
        pos = m.end()
    out.extend(_prose_claims(text[pos:]))
    return out


def _prose_claims(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.split("\n"):
        line = _BULLET.sub("", raw).strip()
        if not line or re.fullmatch(r"#+\s.*|[-=*_]{3,}", line):
            continue
        masked = _mask(line, _SPAN)
        cuts = [0] + [m.end(1) for m in _SENTENCE.finditer(masked)] + [len(line)]
        for a, b in zip(cuts, cuts[1:], strict=False):
            piece = line[a:b].strip()
            if not piece:
                continue
            if out and not _strip_citations(piece).strip(" .,;:!?—-"):
                out[-1] = f"{out[-1]} {piece}"  # "[1]" after a sentence belongs to it
            else:
                out.append(piece)
    return out


# ------------------------------------------------------------------------------------------
# What a claim names


@dataclass
class Named:
    identifiers: list[str] = field(default_factory=list)
    paths: list[tuple[str, int | None, int | None]] = field(default_factory=list)
    lines: list[tuple[int, int]] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)


def _is_path(s: str) -> bool:
    return bool(_PATH.fullmatch(s) or (_SLASH_PATH.fullmatch(s) and "." in s.rsplit("/", 1)[-1]))


def named_things(claim: str) -> Named:
    """Identifiers, paths (with optional ``:start-end``), line references and literals a claim
    names. Backticked text is an identifier when it is one (``name``, ``a.b``, ``f()``), a path
    when it looks like one, otherwise a literal; outside backticks, code-looking words
    (snake_case, CamelCase, dotted), paths and double-quoted text count.
    """
    named = Named()
    body = claim
    fence = _FENCE.search(claim)
    if fence:  # a code block: its identifiers must be in the cited code
        code = fence.group(0)
        for tok in _DOTTED.findall(code):
            if looks_like_identifier(tok):
                _add(named.identifiers, _clean_ident(tok))
        body = claim[: fence.start()] + claim[fence.end() :]
    for m in _SPAN.finditer(body):
        inner = m.group(2).strip()
        if not inner:
            continue
        ident = inner[:-2].rstrip() if inner.endswith("()") else inner
        if _is_path(inner):
            _add_path(named, inner)
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*", ident):
            _add(named.identifiers, _clean_ident(ident))
        else:
            _add(named.literals, inner)
    prose = _blank(body, _SPAN)
    for m in _QUOTED.finditer(prose):
        _add(named.literals, body[m.start() + 1 : m.end() - 1])
    prose = _blank(prose, _QUOTED)
    for pat in (_PATH, _SLASH_PATH):
        for m in pat.finditer(prose):
            if _is_path(m.group(1)):
                _add_path(named, body[m.start() : m.end()])
        prose = _blank(prose, pat)
    for m in _LINE_REF.finditer(prose):
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) else a
        if (a, b) not in named.lines:
            named.lines.append((a, b))
    for m in _DOTTED.finditer(prose):
        tok = m.group(0)
        if looks_like_identifier(tok):
            _add(named.identifiers, _clean_ident(tok))
    return named


def _clean_ident(name: str) -> str:
    name = name.replace("::", ".")
    if name.startswith(_RECEIVERS) and "." in name:
        name = name.split(".", 1)[1]
    return name


def _add(xs: list[str], x: str) -> None:
    if x and x not in xs:
        xs.append(x)


def _add_path(named: Named, s: str) -> None:
    m = re.fullmatch(r"(.+?)(?::(\d+)(?:-(\d+))?)?", s.strip())
    if not m:
        return
    a = int(m.group(2)) if m.group(2) else None
    b = int(m.group(3)) if m.group(3) else a
    entry = (m.group(1), a, b)
    if entry not in named.paths:
        named.paths.append(entry)


# ------------------------------------------------------------------------------------------
# Checking


def _squash(s: str) -> str:
    """Text compared for literals: no whitespace, no trailing comma before a closing bracket."""
    s = re.sub(r"\s+", "", s)
    return re.sub(r",(?=[)\]}]|$)", "", s)


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text) is not None


def identifier_shown(name: str, snippets: Sequence[Any]) -> bool:
    """Whether a cited snippet shows ``name``: in its text (a dotted name also as ``a.b`` or
    with each part present), or as its symbol (exact, or a dotted suffix either way)."""
    parts = [p for p in name.split(".") if p]
    for s in snippets:
        sym = getattr(s, "symbol", None) or ""
        if symbol_matches(sym, name) or (sym and symbol_matches(name, sym)):
            return True
        text = getattr(s, "text", "") or ""
        if _has_word(text, name):
            return True
    if len(parts) > 1:  # Class.method: each part in some cited snippet (text or symbol)
        pool = " ".join(
            f"{getattr(s, 'text', '')} {(getattr(s, 'symbol', None) or '').replace('.', ' ')}"
            for s in snippets
        )
        return all(_has_word(pool, p) for p in parts)
    return False


def literal_shown(literal: str, snippets: Sequence[Any]) -> bool:
    want = _squash(literal.rstrip("…").rstrip())
    if not want:
        return True
    return any(want in _squash(getattr(s, "text", "") or "") for s in snippets)


def check_claim(
    text: str,
    sources: Mapping[int, Any],
    path_exists: Callable[[str], bool] = lambda p: False,
) -> Claim:
    """One claim checked against the snippets it cites (``sources``: number → snippet)."""
    cites = citations_in(text)
    cited = [sources[n] for n in cites if n in sources]
    named = named_things(text)
    names: list[str] = []
    bad: list[str] = []
    for ident in named.identifiers:
        names.append(ident)
        if not identifier_shown(ident, cited):
            bad.append(ident)
    for path, a, b in named.paths:
        label = path if a is None else f"{path}:{a}" + (f"-{b}" if b != a else "")
        names.append(label)
        same = [s for s in cited if s.path == path or s.path.endswith("/" + path)]
        exists = bool(same) or path_exists(path) or any(path in (s.text or "") for s in cited)
        # a symbol that looks like a file name (Go's method `context.json`) names a cited source
        exists = exists or (a is None and any(getattr(s, "symbol", None) == path for s in cited))
        if not exists:
            bad.append(label)
        elif (
            a is not None
            and same
            and not any(s.start_line <= a and (b or a) <= s.end_line for s in same)
        ):
            bad.append(label)  # lines outside every cited range of that file
    for a, b in named.lines:
        label = f"line {a}" if a == b else f"lines {a}-{b}"
        names.append(label)
        if not any(s.start_line <= a and b <= s.end_line for s in cited):
            bad.append(label)
    for lit in named.literals:
        names.append(lit)
        if not literal_shown(lit, cited):
            bad.append(lit)
    return Claim(text=text, citations=cites, names=names, unsupported=bad)


def check_answer(
    text: str,
    sources: Mapping[int, Any],
    path_exists: Callable[[str], bool] = lambda p: False,
) -> list[Claim]:
    """Every claim of ``text`` checked; see :func:`check_claim`."""
    return [check_claim(c, sources, path_exists) for c in split_claims(text)]


def unsupported_count(claims: Iterable[Claim]) -> int:
    return sum(1 for c in claims if c.unsupported)


def mark_unsupported(text: str, claims: Sequence[Claim], marker: str = "⚠") -> str:
    """``text`` with each unsupported claim's first line followed by a marker naming what is
    not shown, e.g. ``… [2] ⚠ not in the cited code: `foo`, `bar```."""
    out = text
    for c in claims:
        if not c.unsupported:
            continue
        first = c.text.split("\n", 1)[0]
        what = ", ".join(f"`{x}`" if "`" not in x else x for x in c.unsupported[:4])
        why = "not in the cited code" if c.citations else "cites nothing"
        note = f" {marker} _{why}: {what}_" if c.citations else f" {marker} _{why} ({what})_"
        i = out.find(first)
        if i >= 0:
            j = i + len(first)
            out = out[:j] + note + out[j:]
    return out
