"""Hide C/C++ decoration macros from the parser (chunking only; the chunk text is untouched).

Real C and C++ headers wrap their declarations in macros that expand to attributes, export
specifiers or namespace braces: ``class FMT_API format_error : public std::runtime_error``,
``UV_EXTERN int uv_run(…)``, ``SPDLOG_INLINE logger::logger(…)``, ``LUA_API int (lua_gettop)
(lua_State *L)``, ``UV_UNUSED(static int uv__is_active(const uv_handle_t* h)) {``, or a line
holding only ``FMT_BEGIN_NAMESPACE``. Tree-sitter does not expand macros, so it reads such a
class as a broken declaration and the definition becomes a line window nobody can look up by
name.

:func:`mask_macros` replaces those macro tokens by spaces — same length, so every byte offset,
line and column of the parse still matches the original text — before the file is parsed.
A token is masked only where it cannot be a type the declaration needs:

* **decorations**: an ALL-CAPS identifier with an ``_`` part from :data:`DECORATION_PARTS`
  (``API``, ``EXPORT``, ``EXTERN``, ``INLINE``, ``CONSTEXPR20``, ``NODISCARD``, ``FUNC``, …)
  at the start of a line, before another token (optionally with a ``(…)`` argument list
  without nested parentheses: ``FMT_DEPRECATED_ALIAS("x")``);
* **wrapper macros** of that kind around a whole header: ``UV_UNUSED(static int f(…)) {``
  → ``static int f(…)  {``;
* **after a parameter list**: ``f(const std::string &name) SPDLOG_NOEXCEPT {``, a decoration
  as above;
* **between ``class``/``struct``/``union`` and the name**: any ALL-CAPS token, with or without
  arguments, followed by the class name (``class SPDLOG_API logger``,
  ``class FMT_SO_VISIBILITY("default") format_error``): nothing else can stand there;
* **a line that is only a macro** (``FMT_BEGIN_NAMESPACE``, ``G_BEGIN_DECLS``, ``Q_OBJECT``,
  ``NLOHMANN_JSON_NAMESPACE_END``) after a line ending a statement or block (``;``, ``{``,
  ``}``, a preprocessor or comment line, or the start of the file), so enumerator lists and
  continued expressions are never touched.

Preprocessor lines (and their ``\\`` continuations) are left alone.
"""

from __future__ import annotations

import re

LANGUAGES = frozenset({"c", "cpp"})

# "_"-separated parts that mark a macro as an attribute / export / linkage decoration.
DECORATION_PARTS = frozenset(
    {
        "API",
        "APICALL",
        "ATTR",
        "ATTRIBUTE",
        "CDECL",
        "CONSTEVAL",
        "CONSTEXPR",
        "CONSTEXPR14",
        "CONSTEXPR17",
        "CONSTEXPR20",
        "DECL",
        "DECLSPEC",
        "DEPRECATED",
        "DLL",
        "EXPORT",
        "EXPORTS",
        "EXTERN",
        "FORCEINLINE",
        "FUNC",
        "HIDDEN",
        "IMPORT",
        "INLINE",
        "LINKAGE",
        "LOCAL",
        "MAYBE",
        "NODISCARD",
        "NOEXCEPT",
        "NOINLINE",
        "NORETURN",
        "PUBLIC",
        "STDCALL",
        "UNUSED",
        "VISIBILITY",
        "VISIBLE",
    }
)

_TOKEN = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_?"  # FMT_API, UV_EXTERN, GTEST_API_, LUAI_FUNC
_ARGS = r"(?:\s*\([^()\n]*\))?"
_PREFIX = re.compile(rf"^([ \t]*)((?:{_TOKEN}{_ARGS}[ \t]+)+)(?=[A-Za-z_~])")
_ONE = re.compile(rf"{_TOKEN}{_ARGS}")
_WRAPPER = re.compile(rf"^([ \t]*)({_TOKEN})\((.*\(.*\).*)\)([ \t]*\{{?[ \t]*)$")
_CLASS_MACRO = re.compile(
    rf"\b(?:class|struct|union)[ \t]+((?:{_TOKEN}{_ARGS}[ \t]+)+)(?=[A-Za-z_])"
)
_SUFFIX = re.compile(rf"(?<=\))[ \t]+({_TOKEN}){_ARGS}(?=[ \t]*(?:$|[{{;:]|->|//|/\*|[a-z]))")
_ALONE = re.compile(rf"^[ \t]*(?=[A-Z][A-Z0-9_]*_)[A-Z][A-Z0-9_]*{_ARGS}[ \t]*$")
MAX_LINE = 400  # longer lines (generated or minified code) are left alone
_ENDS_STATEMENT = (";", "{", "}", "*/", ":")


def is_decoration(token: str) -> bool:
    """``FMT_API`` / ``UV_EXTERN`` / ``SPDLOG_INLINE`` → True; ``DWORD_PTR``, ``SIZE_T`` → False."""
    return any(part in DECORATION_PARTS for part in token.strip("_").split("_"))


def _blank(s: str) -> str:
    return " " * len(s)


def _mask_prefix(line: str) -> str:
    m = _PREFIX.match(line)
    if not m:
        return line
    tokens = m.group(2)
    names = [t.group(0) for t in _ONE.finditer(tokens)]
    if not names or not all(is_decoration(n.split("(")[0].strip()) for n in names):
        return line
    return m.group(1) + _blank(tokens) + line[m.end() :]


def _mask_wrapper(line: str) -> str:
    m = _WRAPPER.match(line)
    if not m or not is_decoration(m.group(2)):
        return line
    inner = m.group(3)
    if inner.count("(") != inner.count(")"):
        return line
    return m.group(1) + _blank(m.group(2) + "(") + inner + " " + m.group(4)


def _mask_suffix(line: str) -> str:
    def sub(m: re.Match[str]) -> str:
        return _blank(m.group(0)) if is_decoration(m.group(1)) else m.group(0)

    return _SUFFIX.sub(sub, line)


def _mask_class(line: str) -> str:
    return _CLASS_MACRO.sub(lambda m: m.group(0).replace(m.group(1), _blank(m.group(1))), line)


_COND_OPEN = re.compile(r"\s*#\s*if(?:n?def)?\b")
_COND_END = re.compile(r"\s*#\s*endif\b")


def _unwrap_conditional_decorations(lines: list[str]) -> list[str]:
    """Blank the ``#if`` and ``#endif`` lines around a conditional that holds only part of a
    declaration — a keyword or decoration with no ``;``, brace or directive, such as
    spdlog's ``#if __cplusplus >= 201703L`` / ``constexpr`` / ``#endif`` before ``static
    string_view_t level_string_views[]``. Tree-sitter takes such an ``#if`` for a block of
    declarations and reads the rest of the namespace into it, so every function after it is
    misplaced; the declaration with the decoration is what either branch compiles to.

    >>> _unwrap_conditional_decorations(["#if X", "constexpr", "#endif", "int a;"])
    ['     ', 'constexpr', '      ', 'int a;']
    >>> _unwrap_conditional_decorations(["#if X", "int a;", "#endif"])  # a whole statement
    ['#if X', 'int a;', '#endif']
    """
    out = list(lines)
    for i, line in enumerate(lines):
        if not _COND_OPEN.match(line) or line.rstrip().endswith("\\"):
            continue
        for j in range(i + 1, min(i + 4, len(lines))):
            if _COND_END.match(lines[j]):
                body = [b for b in lines[i + 1 : j] if b.strip()]
                if body and not any(ch in b for b in body for ch in ";{}#"):
                    out[i], out[j] = _blank(lines[i]), _blank(lines[j])
                break
            if lines[j].lstrip().startswith("#"):
                break
    return out


def mask_macros(text: str) -> str:
    """``text`` with decoration macros replaced by spaces (see the module docstring)."""
    if "_" not in text:
        return text
    lines = _unwrap_conditional_decorations(text.split("\n"))
    out: list[str] = []
    prev_ends = True  # the previous meaningful line ended a statement / block
    continued = False  # inside a multi-line preprocessor directive
    for line in lines:
        stripped = line.strip()
        if len(line) > MAX_LINE:
            out.append(line)
            prev_ends = False
            continue
        if continued or stripped.startswith("#"):
            continued = line.rstrip().endswith("\\")
            out.append(line)
            prev_ends = True
            continue
        new = line
        if prev_ends and _ALONE.match(line):
            out.append(_blank(line))
            continue
        if stripped[:1].isupper():
            new = _mask_wrapper(new)
            new = _mask_prefix(new)
        if ")" in new:
            new = _mask_suffix(new)
        if "class" in new or "struct" in new or "union" in new:
            new = _mask_class(new)
        out.append(new)
        if stripped:
            prev_ends = stripped.endswith(_ENDS_STATEMENT) or stripped.startswith(("//", "/*", "*"))
    return "\n".join(out)
