"""Which names a file binds by importing them from outside the repository (Python,
JavaScript / TypeScript).

The evidence card states "A calls B" for a name defined once in the index. That is wrong when
A's file imports the name from a module the repository does not hold (``from html import
escape`` beside the project's own ``escape``; ``import { merge } from 'lodash'``). Reading the
file's imports settles those cases for certain; anything the rules below cannot read (a
re-export, a path alias) is left as it was.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

PY_SUFFIXES = (".py", ".pyi")
JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")

_PY_FROM_PAREN = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*\(([^)]*)\)", re.M)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+([^(\n#][^\n#]*)", re.M)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#]+)", re.M)
_JS_IMPORT = re.compile(
    r"\bimport\s+(?:type\s+)?([\w$]+\s*,?\s*)?(?:\*\s+as\s+([\w$]+)\s*)?(?:\{([^}]*)\}\s*)?"
    r"from\s*['\"]([^'\"]+)['\"]"
)
_JS_REQUIRE = re.compile(
    r"\b(?:const|let|var)\s+(?:\{([^}]*)\}|([\w$]+))\s*=\s*require\(\s*['\"]([^'\"]+)['\"]\s*\)"
)


def _names(spec: str, sep: str) -> list[tuple[str, str]]:
    """``a, b as c`` -> [(a, a), (b, c)]: (imported name, bound name)."""
    out = []
    for part in spec.split(","):
        words = part.replace("\n", " ").split()
        if not words or words[0] in ("type", "typeof") and len(words) == 1:
            continue
        if words[0] in ("type", "typeof"):
            words = words[1:]
        if len(words) == 3 and words[1] == sep:
            out.append((words[0], words[2]))
        elif len(words) == 1:
            out.append((words[0], words[0]))
    return out


def bindings(text: str, path: str) -> dict[str, str]:
    """Names the file's imports bind -> the module they come from (as written: ``html``,
    ``.markup``, ``lodash``, ``./utils``); a module bound whole (``import html``) maps its
    own name. Python and JavaScript / TypeScript files only; others bind nothing.

    >>> bindings("from html import escape\\nimport os.path as osp\\n", "a.py")
    {'escape': 'html', 'osp': 'os.path'}
    >>> bindings("import merge, { pick as p } from 'lodash'", "a.ts")
    {'merge': 'lodash', 'p': 'lodash'}
    """
    out: dict[str, str] = {}
    if path.endswith(PY_SUFFIXES):
        for m in _PY_FROM_PAREN.finditer(text):
            for _, bound in _names(m.group(2), "as"):
                out[bound] = m.group(1)
        for m in _PY_FROM.finditer(text):
            for _, bound in _names(m.group(2), "as"):
                out[bound] = m.group(1)
        for m in _PY_IMPORT.finditer(text):
            for name, bound in _names(m.group(1), "as"):
                out[bound.split(".")[0] if bound == name else bound] = name
    elif path.endswith(JS_SUFFIXES):
        for m in _JS_IMPORT.finditer(text):
            default, star, named, module = m.groups()
            if default:
                out[default.strip(" ,")] = module
            if star:
                out[star] = module
            for _, bound in _names(named or "", "as"):
                out[bound] = module
        for m in _JS_REQUIRE.finditer(text):
            named, whole, module = m.groups()
            if whole:
                out[whole] = module
            for _, bound in _names((named or "").replace(":", " as "), "as"):
                out[bound] = module
    return out


def is_external(module: str, importer: str, indexed: Iterable[str]) -> bool:
    """Whether ``module`` (imported by the file ``importer``) is certainly not a file of the
    repository: no indexed path can be it. Relative imports never are external here (they
    name a file of the repository, whether or not it was indexed).

    >>> is_external("html", "rich/console.py", ["rich/markup.py"])
    True
    >>> is_external("rich.markup", "rich/console.py", ["src/rich/markup.py"])
    False
    >>> is_external("lodash", "lib/a.js", ["lib/b.js"])
    True
    """
    if module.startswith("."):
        return False
    paths = list(indexed)
    if importer.endswith(PY_SUFFIXES):
        tail = module.replace(".", "/")
        top = tail.split("/")[0]
        ends = tuple(f"/{tail}{s}" for s in (".py", ".pyi", "/__init__.py"))
        return not any(f"/{p}".endswith(ends) or f"/{top}/" in f"/{p}" or p == top for p in paths)
    if importer.endswith(JS_SUFFIXES):
        first = module.split("/")[0].lstrip("@~#")
        if not first:  # a path alias ("@/utils", "~/lib"): may be the repository's own
            return False
        return not any(f"/{first}" in f"/{p}" for p in paths)
    return False


def external_names(text: str, path: str, indexed: Iterable[str]) -> frozenset[str]:
    """The names ``text`` (the file ``path``) binds by importing them, or the module they name,
    from outside the repository (``is_external`` over the paths in ``indexed``).

    >>> sorted(external_names("import re\\nfrom html import escape\\nfrom .markup import render",
    ...                       "rich/console.py", ["rich/markup.py"]))
    ['escape', 're']
    """
    paths = list(indexed)
    bound = bindings(text, path)
    return frozenset(n for n, module in bound.items() if is_external(module, path, paths))


def external_call(text: str, name: str, external: Collection[str]) -> bool:
    """Whether every call of ``name`` in ``text`` reaches a module outside the repository: a
    bare ``name(`` whose name is in ``external`` (``external_names`` of the file), or
    ``alias.name(`` through an external module bound whole. A call through anything else
    (``obj.name(``) might be the repository's, so then False.

    >>> external_call("return escape(s)", "escape", {"escape"})
    True
    >>> external_call("markup.escape(s)", "escape", {"escape"})
    False
    """
    calls = re.findall(rf"([\w$]+\s*\.\s*)?(?<![\w$]){re.escape(name)}\s*\(", text)
    return bool(calls) and all((q.rstrip(". \t") if q else name) in external for q in calls)


def external_by_file(store: Any, paths: Iterable[str]) -> dict[str, frozenset[str]]:
    """``external_names`` of each Python and JavaScript / TypeScript file among ``paths``, from
    its indexed chunks (files that import nothing from outside are left out). Best effort: an
    empty dict when the store cannot list its files or chunks."""
    files = getattr(store, "files", None)
    file_chunks = getattr(store, "file_chunks", None)
    if files is None or file_chunks is None:
        return {}
    wanted = [p for p in dict.fromkeys(paths) if p.endswith(PY_SUFFIXES + JS_SUFFIXES)]
    if not wanted:
        return {}
    try:
        indexed = list(files())
        rows = file_chunks(wanted, limit=100_000)
    except Exception:  # best effort: a caller states less, it does not fail
        return {}
    texts: dict[str, list[str]] = {}
    for _, chunk, _ in rows:
        texts.setdefault(chunk.path, []).append(chunk.text)
    out: dict[str, frozenset[str]] = {}
    for path, parts in texts.items():
        names = external_names("\n".join(parts), path, indexed)
        if names:
            out[path] = names
    return out
