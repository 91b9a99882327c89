"""Code-aware text for LanceDB full-text search.

LanceDB's native "simple" tokenizer splits on every non-alphanumeric character and lowercases:
``snake_case_name`` becomes three unrelated terms and ``getFileContext`` one term that never
matches a question about "file context". So both the indexed column and the query are expanded
the same way: every compound identifier contributes its parts *and* a joined whole form that
survives the tokenizer (``snake_case_name`` -> ``snake case name snakecasename``).

Everything here is pure, linear-time and never raises on odd input.
"""

from __future__ import annotations

import functools
import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One camel/snake "hump": HTTPServer -> HTTP|Server, parse2D -> parse|2D, base64 -> base|64.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+[A-Z]*(?![a-z])|[0-9]+")
# A (possibly dotted or ::-qualified) identifier: Context.lookup_default, std::vector, core.py
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*")
# Lookbehinds anchor each run at its start so that a search stays linear.
_CAMEL = re.compile(r"[a-z0-9][A-Z]|(?<![a-z])[A-Z][a-z]+[A-Z]|(?<![A-Z])[A-Z]{2,}[a-z]{2,}")
_WORD = re.compile(r"[^\W_]+")
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_CALLED = re.compile(
    r"(?<![A-Za-z0-9_.:])([A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*)\s*\(\)"
)
_QUOTED = re.compile(r"\"([^\"\n]{1,300})\"|(?<![A-Za-z])'([^'\n]{1,300})'(?![A-Za-z])")

# File extensions that mark a dotted token as a file name (core.py), not a qualified symbol.
FILE_EXTENSIONS = frozenset(
    "py pyi js jsx mjs cjs ts tsx go rs java kt kts c h cc cpp cxx hpp hh hxx cs rb php sh bash "
    "zsh swift scala lua md rst txt toml yaml yml json ini cfg xml html css scss sql proto "
    "gradle lock zig ex exs hs dart vue svelte erl clj jl groovy".split()
)
# CamelCase product names that appear in plain-English questions; not treated as symbols
# (unless backticked) so that "does it run on macOS?" is not "a question about `macOS`".
_PRODUCT_NAMES = frozenset(
    """
    github gitlab bitbucket javascript typescript coffeescript webassembly pypi macos ios ipados
    tvos watchos iphone ipad youtube linkedin postgresql mysql sqlite mongodb duckdb lancedb
    latex openai chatgpt powershell numpy scipy pytorch tensorflow fastapi devops oauth graphql
    vscode intellij pycharm wordpress paypal huggingface dockerhub
    """.split()
)
# Dotted tokens ending like this are web addresses, not symbols (example.com).
_DOMAINS = frozenset("com org net io dev edu gov".split())

# Small English stop-word list (question words included: they carry no code signal).
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each else even
    ever every few for from further get gets got had has have having he her here hers him his how
    i if in into is it its itself just let like may me might more most much must my no nor not
    now of off on once one only or other our ours out over own please same shall she should so
    some such than that the their theirs them then there these they this those through to too
    under until up us use used uses using very via was way we were what when where whether which
    while who whom whose why will with within without would yet you your yours
    e g eg ie etc s t d ll re ve don doesn didn isn aren wasn weren won wouldn shouldn couldn
    haven hasn hadn
    """.split()
)
# Receivers that say nothing about which symbol is meant: self.invoke -> invoke.
_RECEIVERS = ("self.", "this.", "cls.")
_NOISE = frozenset({"self", "this", "cls"})


def split_identifier(word: str) -> list[str]:
    """Split an identifier into lowercase parts.

    ``getFileContext`` -> [get, file, context]; ``HTTPServerError`` -> [http, server, error];
    ``snake_case_name`` -> [snake, case, name]; ``parse2D`` -> [parse, 2d].
    """
    return [m.group(0).lower() for m in _PART.finditer(word)]


def identifiers(text: str) -> list[str]:
    """Identifier-like tokens (``[A-Za-z_][A-Za-z0-9_]*``) of ``text``, in order."""
    return _IDENT.findall(text)


@functools.lru_cache(maxsize=1 << 16)
def _expansion(token: str) -> tuple[str, ...]:
    """Extra FTS terms for one identifier: its parts and a joined whole form, or () if simple.

    Cached: indexing meets the same identifiers in chunk after chunk.
    """
    parts = split_identifier(token)
    if len(parts) < 2:
        return ()
    joined = "".join(parts)
    # The tokenizer already yields token.lower() as one term when the token has no "_".
    if joined != token.lower():
        return (*parts, joined)
    return tuple(parts)


def fts_document(text: str, extra: str = "") -> str:
    """Text for the FTS column: ``extra`` + ``text`` + split parts / joined forms of compounds."""
    base = f"{extra}\n{text}" if extra else text
    seen: set[str] = set()
    added: dict[str, None] = {}
    for m in _IDENT.finditer(base):
        tok = m.group(0)
        if tok in seen:
            continue
        seen.add(tok)
        for term in _expansion(tok):
            added[term] = None
    if not added:
        return base
    return base + "\n" + " ".join(added)


def _is_file_name(token: str) -> bool:
    if "." not in token:
        return False
    return token.rsplit(".", 1)[1].lower() in FILE_EXTENSIONS


def looks_like_identifier(term: str) -> bool:
    """True for code-looking terms: snake_case, camelCase, Dotted.name, `backticked`, ``name()``.

    Plain English words (``where``, ``handled``) are not identifiers; a single lowercase word is
    one only when backticked or followed by ``()``. File names (``core.py``) are not symbols.
    """
    t = term.strip()
    backticked = len(t) >= 2 and t[0] == "`" and t[-1] == "`"
    if backticked:
        t = t[1:-1].strip()
    called = t.endswith("()")
    if called:
        t = t[:-2].rstrip()
    if not t or not _DOTTED.fullmatch(t) or _is_file_name(t):
        return False
    if backticked or called:
        return True
    if t.lower() in _PRODUCT_NAMES:
        return False
    segments = re.split(r"\.|::", t)
    if len(segments) > 1:
        return any(len(s) > 1 for s in segments) and segments[-1].lower() not in _DOMAINS
    if "_" in t:
        return bool(t.strip("_"))
    return bool(_CAMEL.search(t))


def query_identifiers(query: str) -> list[str]:
    """Identifier-looking terms of a question, in order, de-duplicated.

    ``::`` is normalised to ``.`` and a trailing ``()`` dropped: "`resolve_command`" ->
    ``resolve_command``, "Foo::bar()" -> ``Foo.bar``.
    """
    found: list[tuple[int, str]] = []
    for m in _BACKTICK.finditer(query):
        inner = m.group(1).strip()
        if inner.endswith("()"):
            inner = inner[:-2].rstrip()
        if _DOTTED.fullmatch(inner) and not _is_file_name(inner):
            found.append((m.start(), inner))
    for m in _CALLED.finditer(query):
        if not _is_file_name(m.group(1)):
            found.append((m.start(), m.group(1)))
    for m in _DOTTED.finditer(query):
        if looks_like_identifier(m.group(0)):
            found.append((m.start(), m.group(0)))
    found.sort(key=lambda p: p[0])
    out: dict[str, None] = {}
    for _pos, name in found:
        name = name.replace("::", ".")
        if name.startswith(_RECEIVERS) and "." in name:
            name = name.split(".", 1)[1]
        out[name] = None
    return list(out)


def _terms_for(token: str) -> list[str]:
    """FTS terms for one query token (dotted tokens are split into identifiers first)."""
    out: list[str] = []
    for ident in _IDENT.findall(token):
        low = ident.lower()
        if not low.strip("_"):
            continue
        parts = split_identifier(ident)
        if len(parts) >= 2:
            out.append("".join(parts))
            out.extend(parts)
        else:
            out.extend(parts)
    return out


def _stem(file_name: str) -> str:
    """core.py -> core; pkg.mod.py -> mod."""
    return file_name.replace("::", ".").rsplit(".", 2)[-2]


def _keep(term: str) -> bool:
    return len(term) > 1 and term not in STOP_WORDS and term not in _NOISE and not term.isdigit()


def fts_query(query: str, max_terms: int = 32) -> str:
    """The FTS query string: informative, de-duplicated lowercase terms, at most ``max_terms``.

    Order: code identifiers (``_``, camel humps, dots, backticks), file names (``core.py`` ->
    ``core``), words of quoted error text, then other words. English stop words, numbers and
    punctuation are dropped, so the result is safe for any FTS query parser. Never raises.
    """
    if max_terms <= 0 or not query:
        return ""
    buckets: list[list[str]] = [[], [], [], []]
    for m in _BACKTICK.finditer(query):
        buckets[0].extend(_terms_for(m.group(1)))
    for m in _CALLED.finditer(query):
        if not _is_file_name(m.group(1)):
            buckets[0].extend(_terms_for(m.group(1)))
    for m in _DOTTED.finditer(query):
        tok = m.group(0)
        if _is_file_name(tok):
            buckets[1].extend(_terms_for(_stem(tok)))
        elif looks_like_identifier(tok):
            buckets[0].extend(_terms_for(tok))
    for m in _QUOTED.finditer(query):
        for tok in _DOTTED.findall(m.group(1) or m.group(2) or ""):
            buckets[2].extend(_terms_for(_stem(tok) if _is_file_name(tok) else tok))
    for m in _WORD.finditer(query):
        word = m.group(0).lower()
        if m.start() > 0 and query[m.start() - 1] == "." and word in FILE_EXTENSIONS:
            continue  # the "py" of core.py
        buckets[3].append(word)
        variant = american(word)
        if variant:  # code spells "color": a question's "colour" finds it too
            buckets[3].append(variant)
    out: dict[str, None] = {}
    for bucket in buckets:
        for term in bucket:
            if term not in out and _keep(term):
                out[term] = None
                if len(out) >= max_terms:
                    return " ".join(out)
    return " ".join(out)


# British spellings whose American form is what code is written in (``color``, ``normalize``,
# ``analyze``, ``center``, ``license``, ``catalog``): word stems and suffixes.
_OUR = re.compile(
    r"^(colo|behavio|favo|flavo|hono|labo|neighbo|rumo|humo|armo|vapo|harbo|savo|endeavo"
    r"|parlo|vigo|odo|rigo|cando|valo|fervo|savio)ur"
)
_ISE = re.compile(r"^([a-z]{3,}[^aeious])is(e|es|ed|ing|ation|ations|er|ers|able)$")
_ISE_KEEP = frozenset(
    "advise advised advises advising exercise exercised exercises exercising promise promised "
    "promises promising premise premises expertise enterprise enterprises franchise "
    "merchandise compromise compromised compromises surprise surprised surprises surprising "
    "supervise supervised supervisor revise revised revises revising devise devised improvise "
    "improvised comprise comprised comprises comprising televise disguise disguised paradise "
    "treatise demise despise excise incise chastise chastised precise concise otherwise "
    "likewise clockwise anticlockwise counterclockwise".split()
)
_YSE = re.compile(r"^([a-z]+)ys(e|es|ed|ing|er|ers)$")  # analyse, paralyse, catalyse
_TRE = re.compile(r"^(cen|me|li|thea|fib|calib|spec|sabre|lus)tre(s|d)?$")
_SPELLINGS = {
    "licence": "license",
    "licences": "licenses",
    "defence": "defense",
    "offence": "offense",
    "pretence": "pretense",
    "catalogue": "catalog",
    "catalogues": "catalogs",
    "dialogue": "dialog",
    "dialogues": "dialogs",
    "analogue": "analog",
    "grey": "gray",
    "programme": "program",
    "programmes": "programs",
    "judgement": "judgment",
    "acknowledgement": "acknowledgment",
    "artefact": "artifact",
    "artefacts": "artifacts",
    "aluminium": "aluminum",
    "plough": "plow",
    "sceptical": "skeptical",
    "whilst": "while",
}


def american(word: str) -> str | None:
    """The American spelling of a lower-case British one (``colour`` -> ``color``,
    ``normalised`` -> ``normalized``, ``analyse`` -> ``analyze``, ``centre`` -> ``center``,
    ``licence`` -> ``license``), or None. Only ever added beside the word (``fts_query``,
    ``query.content_words``): a form no code uses matches nothing. None too when ``stem``
    already joins the two spellings: a second copy would only weigh the word twice.

    >>> [american(w) for w in ("colours", "initialise", "serialisation", "analysed", "centre")]
    ['colors', 'initialize', 'serialization', 'analyzed', 'center']
    >>> [american(w) for w in ("raise", "promise", "otherwise", "color", "hour", "four")]
    [None, None, None, None, None, None]
    """
    variant = _american(word)
    return variant if variant and stem(variant) != stem(word) else None


def _american(word: str) -> str | None:
    """``american`` before the stem check."""
    if word in _SPELLINGS:
        return _SPELLINGS[word]
    m = _OUR.match(word)
    if m:
        return m.group(1) + "r" + word[m.end() :]
    if word not in _ISE_KEEP:
        m = _ISE.match(word)
        if m:
            return f"{m.group(1)}iz{m.group(2)}"
    m = _YSE.match(word)
    if m and len(m.group(1)) >= 3:
        return f"{m.group(1)}yz{m.group(2)}"
    m = _TRE.match(word)
    if m:
        return f"{m.group(1)}ter{m.group(2) or ''}"
    return None


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude, stable stem: lower case, one common English suffix removed (the stem keeps at
    least 3 letters), then a final ``e`` and a doubled final consonant dropped, so that
    "merged", "merge" and "merges" meet, and so do "overlapping" and "overlaps".

    >>> [stem(w) for w in ("interrupted", "Indexes", "runs", "running", "merge", "merged")]
    ['interrupt', 'index', 'run', 'run', 'merg', 'merg']
    """
    w = word.lower()
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    return w
