"""Methods a type declares without a body: a Rust trait's ``fn retry(&self, …) -> …;``, a Java
or TypeScript interface's ``boolean retry(Request r);``, a Go interface's ``Retry(r) bool``, a
Swift protocol's ``func retry()``, an ``abstract`` or C++ pure ``virtual`` method.

The chunker makes a definition of every method *with* a body; a declaration stays inside its
type's chunk (in Rust, Go, Java and TypeScript it is a method chunk of its own since chunker 6:
``store.declarations`` reads both, ``is_bodyless`` tells it from a definition). So
when the index holds one definition named ``retry`` (``ServiceBuilder.retry``), a call
``policy.retry(…)`` may still mean a trait's ``retry``, implemented outside the index or by
types whose impls are elsewhere. The evidence card states a call edge by name only for a
name that cannot mean anything else (``evidence.gather_graph`` counts these declarations as
namesakes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

# a type whose methods are declared without bodies, on the header line of a class chunk
_INTERFACE = re.compile(r"^[^\n{]*?\b(?:trait|interface|protocol)\b[^\n]*$", re.M)
# a method that says it has no body on its own line
_ABSTRACT = re.compile(r"\b(?:abstract|virtual)\b")
# a comment line (a ``*`` before a name starts a generator method, ``*items() {``: code)
_COMMENT = re.compile(r"^\s*(?://|#|\*(?![A-Za-z_$\[])|/\*|--)")


_BODYLESS_SUFFIXES = (".rs", ".go", ".java", ".ts", ".tsx", ".mts", ".cts")
# lines that are not code in those languages: a comment (a ``*`` that starts a generator method,
# ``*gen() {`` or ``*[Symbol.iterator]() {``, is code), a Rust attribute, a Java / TS annotation
_NOT_CODE = re.compile(r"^\s*(?://|/\*|\*(?![A-Za-z_$\[])|#!?\[|@[A-Za-z])")
_CLOSER = re.compile(r"^\s*[)\]}>;,]+\s*$")


def is_bodyless(chunk: Any) -> bool:
    """A method chunk declared without a body: a Rust trait's required method, a Go / Java /
    TypeScript interface method, an abstract method (chunks of their own since chunker 6). Its
    doc comment says what the method does; the code that does it is in the implementations.

    >>> from types import SimpleNamespace as C
    >>> is_bodyless(C(path="a.rs", kind="method", text="/// Docs.\\nfn chunk(&self) -> &[u8];"))
    True
    >>> is_bodyless(C(path="a.ts", kind="method", text="#secret(): number {\\n  return 1;\\n}"))
    False
    """
    if chunk.kind != "method" or not chunk.path.endswith(_BODYLESS_SUFFIXES):
        return False
    last = None  # the last code line that is not a closer (the type's brace glued on)
    for ln in chunk.text.split("\n"):
        if not ln.strip() or _NOT_CODE.match(ln):
            continue
        if "{" in ln or "=>" in ln:
            return False  # a body, or a TypeScript class field's arrow function (``f = (x) => x``)
        if not _CLOSER.match(ln):
            last = ln
    if last is None:
        return False
    return last.rstrip().endswith(";") or not chunk.path.endswith((".rs", ".java"))


# the first statement of a body that only says it is not implemented (in any language)
_NOT_IMPLEMENTED = re.compile(
    r"^\s*(?:raise\s+NotImplementedError\b|(?:unimplemented|todo)!\s*\(|TODO\s*\("
    r"|throw\s+(?:new\s+)?(?:UnsupportedOperationException|NotImplementedError"
    r"|NotImplementedException)\b|fatalError\s*\(|panic\s*\(\s*\"not implemented"
    r"|throw\s+new\s+Error\s*\(\s*[\"'`][^\"'`]*not implemented)",
    re.I,
)
# after it: the rest of its message, and the closers of the call and the body
_STUB_TAIL = re.compile(r"""^\s*(?:[rbfu]{0,2}["'`].*|[)\]}]+[;,]?|end)\s*$""")
# before it, a line that does something: the body is more than the stub
_STATEMENT = re.compile(r"^\s*(?:return|if|for|while|let|val|var|const|self\.|this\.)\b")
_DOCSTRING = re.compile(r"""(?s)(\"\"\"|''').*?\1""")
_PYTHON_SOURCES = (".py", ".pyi")
# in the end (the last _STUB_TAIL_CHARS) of every chunk that _NOT_IMPLEMENTED matches, but for
# a message in capitals or a longer one: a few substring tests decide most chunks
_STUB_TAIL_CHARS = 300
_STUB_HINTS = (
    "NotImplemented",
    "unimplemented!",
    "ot implemented",
    "ot Implemented",
    "todo!",
    "TODO(",
    "UnsupportedOperation",
    "fatalError",
)
# a Python signature (to the colon after its parameters and return type) and what follows it
_PYTHON_SIGNATURE = re.compile(
    r"(?s)\s*(?:async\s+)?def\s+\w+\s*(?:\[[^\]]*\])?\s*\(.*?\)\s*(?:->\s*[^\n]+?)?:(.*)$"
)


def not_implemented(chunk: Any) -> bool:
    """A function or method whose body only says it is not implemented: Python's ``raise
    NotImplementedError``, Rust's ``unimplemented!()`` / ``todo!()``, Kotlin's ``TODO()``,
    Java's ``throw new UnsupportedOperationException()``, Swift's ``fatalError()``, Go's
    ``panic("not implemented")``, or a Python body of only ``...`` (a protocol's or an
    abstract method's signature). Like a declaration without a body (``is_bodyless``), it
    names a behaviour that subclasses or other platforms implement.

    >>> from types import SimpleNamespace as C
    >>> py = "def read(self, n):\\n    '''Read n bytes.'''\\n    raise NotImplementedError(\\n"
    >>> not_implemented(C(kind="method", path="io.py", text=py + '        "subclasses"\\n    )'))
    True
    >>> rs = "fn select(&self) -> io::Result<()> {\\n    os_required!();\\n    unimplemented!()\\n}"
    >>> not_implemented(C(kind="method", path="sel.rs", text=rs))
    False
    >>> not_implemented(C(kind="method", path="A.kt", text='fun close() {\\n  TODO("later")\\n}'))
    True
    >>> body = "def read(self, n):\\n    if n < 0:\\n        raise NotImplementedError"
    >>> not_implemented(C(kind="method", path="io.py", text=body))
    False
    >>> not_implemented(C(kind="method", path="p.py", text="def size(self) -> int: ..."))
    True
    >>> not_implemented(C(kind="method", path="p.py", text="def size(self) -> int:\\n    ..."))
    True
    >>> not_implemented(C(kind="function", path="p.py", text="def f(x):\\n    if x:\\n        ..."))
    False
    """
    if chunk.kind not in ("function", "method"):
        return False
    tail = chunk.text[-_STUB_TAIL_CHARS:]  # the marker is the body's last statement
    python = chunk.path.endswith(_PYTHON_SOURCES)
    ellipsis = python and tail.rstrip().endswith("...")
    if not ellipsis and not any(h in tail for h in _STUB_HINTS):
        return False  # most chunks: no marker at all, no line to read
    text = _DOCSTRING.sub("", chunk.text) if python else chunk.text
    lines = [
        ln
        for ln in text.split("\n")
        if ln.strip() and not _COMMENT.match(ln) and not ln.lstrip().startswith("@")
    ]
    if not lines:
        return False
    if ellipsis:
        signature = _PYTHON_SIGNATURE.match("\n".join(lines))
        return bool(signature) and signature.group(1).strip() == "..."
    at = next((i for i, ln in enumerate(lines) if _NOT_IMPLEMENTED.match(ln)), None)
    if not at:  # None, or 0: no signature before it
        return False
    if any(_STATEMENT.match(ln) or ln.rstrip().endswith(";") for ln in lines[1:at]):
        return False
    return all(_STUB_TAIL.match(ln) for ln in lines[at + 1 :])


@lru_cache(maxsize=512)
def _declaration(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    # at a declaration's place on its line: only modifiers, keywords, a return type before it
    # (no "=", ".", "(" or "return": those are calls), then the name and its parameter list
    return re.compile(
        rf"^[ \t]*(?:[\w@<>\[\],?*&:]+[ \t]+)*?(?:fn|func|fun|def|function)?[ \t]*{n}[ \t]*"
        rf"(?:<[^>\n]*>)?[ \t]*\(",
        re.M,
    )


def _bodiless(text: str, start: int) -> bool:
    """Whether the signature whose parameter list opens at ``text[start]`` ends without a body:
    at a ``;`` (Rust, Java, TypeScript, C++ ``= 0;``), or at the end of its line when the next
    line does not open a body (Go, Swift, Kotlin), rather than at a ``{``."""
    depth = 0
    i = start
    while i < len(text):
        ch = text[i]
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth = max(0, depth - 1)
        elif depth == 0:
            if ch == "{":
                return False
            if ch == ";":
                return True
            if ch == "\n":
                rest = text[i + 1 :].lstrip(" \t")
                if rest.startswith("{"):  # a brace on the next line (Allman style)
                    return False
                if not re.match(r"(?:where\b|->|:|throws\b|[A-Za-z_][\w<>, ]*[,:]\s*$)", rest):
                    return True  # the next line is another member, a "}" or blank
        i += 1
    return True


def _code(text: str) -> str:
    """``text`` with its comment lines blanked (same offsets): a doc example's braces and
    signatures do not count."""
    return "".join(
        " " * (len(line) - 1) + "\n" if _COMMENT.match(line) else line
        for line in (text + "\n").splitlines(keepends=True)
    )


_RECEIVER = re.compile(r"^(?:&\s*(?:'\w+\s+)?(?:mut\s+)?|mut\s+)?(?:self|this)\b")


def _arity(code: str, start: int) -> int:
    """How many parameters the list opening at ``code[start]`` has, a ``self`` / ``this``
    receiver not counted."""
    depth, i, parts, cur = 0, start + 1, [], []
    while i < len(code):
        ch = code[i]
        if ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            if depth == 0 and ch == ")":
                break
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
        i += 1
    parts.append("".join(cur))
    params = [p.strip() for p in parts if p.strip()]
    return sum(1 for p in params if not _RECEIVER.match(p))


def declared_arities(text: str, name: str) -> list[int]:
    """The parameter counts of the methods ``name`` the class chunk ``text`` declares without
    a body (see the module docstring): inside a trait / interface / protocol, or marked
    ``abstract`` / ``virtual`` on its line; comment lines do not count.

    >>> declared_arities("pub trait Policy<Req> {\\n    fn retry(&self, req: &Req, r: R) -> O;\\n}",
    ...                  "retry")
    [2]
    >>> declared_arities("impl Policy for A {\\n    fn retry(&self) -> Option<F> {\\n", "retry")
    []
    >>> declared_arities("type Store interface {\\n\\tRetry(r *Req) bool\\n\\tClose() error\\n}",
    ...                  "Retry")
    [1]
    >>> declared_arities("interface Policy {\\n  /// fn retry(&self) {\\n  boolean other();\\n}",
    ...                  "retry")
    []
    >>> doc = "/// impl Policy for A {\\n///   fn x() {}\\n"
    >>> declared_arities(doc + "pub trait Policy {\\n  fn retry(&self);\\n}", "retry")
    [0]
    >>> declared_arities("abstract class Base {\\n  protected abstract void retry(Req r);\\n",
    ...                  "retry")
    [1]
    >>> declared_arities("class Runner {\\n  void run() {\\n    retry(x);\\n  }\\n}", "retry")
    []
    >>> declared_arities("interface Job {\\n  default void run() {\\n    retry(x);\\n  }\\n}",
    ...                  "retry")
    []
    """
    if name not in text:
        return []
    code = _code(text)
    interface = _INTERFACE.search(code.split("{", 1)[0] + "{") is not None
    out = []
    for m in _declaration(name).finditer(code):
        line_start = code.rfind("\n", 0, m.start()) + 1
        line_end = code.find("\n", m.start())
        if not (interface or _ABSTRACT.search(code[line_start:line_end])):
            continue
        before = code[:line_start]
        if before.count("{") - before.count("}") != 1:
            continue  # not a member of the type (a statement in a default method's body)
        if _bodiless(code, m.end() - 1):
            out.append(_arity(code, m.end() - 1))
    return out


def arity(text: str, name: str) -> int | None:
    """The parameter count of the definition of ``name`` in its chunk ``text`` (its first
    signature there), None if the name is not followed by a parameter list.

    >>> arity("    pub fn retry<P>(self, policy: P) -> ServiceBuilder<L> {", "retry")
    1
    >>> arity("func (c *context) QueryParams() url.Values {", "QueryParams")
    0
    >>> arity("  *items(from, to) {", "items")  # a TypeScript generator method
    2
    """
    code = _code(text)
    m = re.search(rf"\b{re.escape(name)}[ \t]*(?:<[^>\n]*>)?[ \t]*\(", code)
    return _arity(code, m.end() - 1) if m else None


def other_declarations(declared: Iterable[int], definitions: Iterable[str], name: str) -> list[int]:
    """Of the parameter counts of ``name``'s bodiless declarations (``declared``), those whose
    count no definition of ``name`` (their chunk texts) has: each is another namesake. One
    that agrees is taken for the interface the definition implements (Go's
    ``Context.QueryParams()`` and ``context.QueryParams()``).

    >>> other_declarations([2, 0], ["pub fn retry<P>(self, policy: P) -> Self {"], "retry")
    [2, 0]
    >>> other_declarations([0], ["func (c *context) QueryParams() url.Values {"], "QueryParams")
    []
    """
    own = {arity(text, name) for text in definitions}
    return [a for a in declared if a not in own]
