"""Who calls a name: the index's call edges, with the lines of each call.

A chunk's ``calls`` are the callee names tree-sitter found in its lines (``askrepo.chunker``,
``@call``), so a caller is code that calls the name — not a comment, a string or a definition
that merely mentions it, as a text search would also find. ``find_callers`` backs
``askrepo callers NAME`` and the MCP tool ``find_callers``.

A call is matched by the callee's last name (``store.callers``). When other definitions share
that last name (``Hasher.create`` and ``HmacSha512.create``), a caller counts as ``certain``
only when its code shows the call is the asked-for one: through the owner's name
(``Hasher.create(``, ``Hasher::create(``), or from another method of the same class; the rest
are listed as possible calls of it. A name a Python / JavaScript file imports from outside the
repository (``from html import escape``) is not a call of the repository's ``escape``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from .datatypes import CODE, TEST, is_definition, last_part
from .declarations import is_bodyless, other_declarations
from .errors import UsageError
from .receivers import receiver_types

MAX_CALLERS = 200  # callers read from the index for one name
MAX_CALL_LINES = 5  # call lines quoted per caller
MAX_LINE_CHARS = 200
MAX_NAME_CHARS = 300


@dataclass(frozen=True)
class CallSite:
    line: int  # 1-based, in the file
    text: str  # the line, stripped and cut to MAX_LINE_CHARS


@dataclass(frozen=True)
class Caller:
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    language: str | None
    file_class: str
    certain: bool  # the call can only be of the asked-for definition(s)
    calls: list[CallSite] = field(default_factory=list)

    @property
    def location(self) -> str:
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True)
class Definition:
    path: str
    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    language: str | None = None  # as MCP find_symbol gives them
    signature: str | None = None


@dataclass
class CallersResult:
    name: str
    definitions: list[Definition]  # what the name means in the index (may be empty)
    callers: list[Caller]  # certain first; code before tests; then by path and line
    # other definitions sharing the last name, and methods a trait or interface declares
    # under it without a body (``askrepo.declarations``): their calls look alike
    others: int = 0
    truncated: bool = False
    note: str = ""
    # callers left out: every call goes through a variable declared with the type of another
    # class that defines the name (``runner = CliRunner()``; ``runner.invoke(``)
    elsewhere: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "definitions": [asdict(d) for d in self.definitions],
            "callers": [asdict(c) for c in self.callers],
            "others": self.others,
            "truncated": self.truncated,
            "note": self.note,
            "elsewhere": self.elsewhere,
        }


def call_lines(
    text: str, start_line: int, name: str, symbol: str | None = None, limit: int = MAX_CALL_LINES
) -> list[CallSite]:
    """The lines of ``text`` (a chunk of ``symbol`` starting at ``start_line``) that call
    ``name``: the name followed by ``(``, a generic ``<…>(`` or Rust's ``!``; else (Ruby, Lua
    call without brackets) any line naming it. The chunk's own definition line is not a call
    when the chunk is itself a ``name`` (``func (v *T) Set(s string)`` calling ``v.inner.Set``).

    >>> [c.line for c in call_lines("def f():\\n    x = g(1)\\n    return g\\n", 10, "g")]
    [11]
    >>> [c.line for c in call_lines("def g(self):\\n    return self.inner.g()", 1, "g", "A.g")]
    [2]
    """
    from .ranking import code_line_indices, definition_line

    word = rf"(?<![\w$]){re.escape(name)}"
    call = re.compile(rf"{word}\s*(?:[(!]|<[^<>]*>\s*\()")
    bare = re.compile(rf"{word}(?![\w$])")
    lines = text.split("\n")
    own = -1
    if symbol and symbol.rpartition(".")[2] == name:
        own = definition_line(lines, symbol)
    code = [(i, ln) for i, ln in code_line_indices(lines) if i != own]  # no comment, docstring
    hits = [i for i, ln in code if call.search(ln)]
    if not hits:
        hits = [i for i, ln in enumerate(lines) if i != own and call.search(ln)]
    if not hits:
        hits = [i for i, ln in enumerate(lines) if i != own and bare.search(ln)]
    return [CallSite(start_line + i, lines[i].strip()[:MAX_LINE_CHARS]) for i in hits[:limit]]


def shows_owner(
    text: str, owner: str, name: str, nearby: bool = True, owner_unique: bool = True
) -> bool:
    """Whether ``text`` calls ``name`` through ``owner``: ``Owner.name(``, ``Owner::name(``,
    Lua's ``owner:name(``, or a nested owner's whole path (``Kramdown::Options.parse(``).
    Outside the owner's file (not ``nearby``) its bare name counts only when no other
    definition has it (``owner_unique``): each of zig-crypto's argon2, bcrypt and scrypt
    defines a ``PhcFormatHasher``, and ``PhcFormatHasher.create(`` in ``argon2.zig`` is
    argon2's.

    >>> shows_owner("return Hasher.create(pw)", "crypto.Hasher", "create")
    True
    >>> shows_owner("Hmac.create(&out)", "Hasher", "create")
    False
    >>> shows_owner("PhcFormatHasher.create(p)", "PhcFormatHasher", "create", False, False)
    False
    >>> shows_owner("Kramdown::Options.parse(k)", "Kramdown.Options", "parse", False, False)
    True
    """
    parts = owner.split(".")
    if len(parts) > 1:
        whole = r"\s*(?:\.|::)\s*".join(map(re.escape, parts))
        if _qualified_call(text, whole, name):
            return True
    if not nearby and not owner_unique:
        return False
    return _qualified_call(text, re.escape(parts[-1]), name)


def _qualified_call(text: str, qualifier: str, name: str) -> bool:
    """Whether ``text`` calls ``name`` through ``qualifier`` (a regular expression):
    ``Q.name(``, ``Q::name(``, ``Q:name(``, ``Q.name<T>(``, ``Q::name!(``."""
    call = rf"(?<![\w.]){qualifier}\s*(?:\.|::|:)\s*{re.escape(name)}\s*[(<!]"
    return re.search(call, text) is not None


def bare_call(text: str, name: str) -> bool:
    """Whether ``text`` calls ``name`` unqualified (``Set(x)``, not ``f.Set(x)``).

    >>> bare_call('Set("a", "1")', "Set"), bare_call("f.Set(a)", "Set")
    (True, False)
    """
    return re.search(rf"(?<![\w.$@>:]){re.escape(name)}\s*[(<!]", text) is not None


_GO_RECEIVER = re.compile(r"^\s*func\s*\(\s*(\w+)\s+\*?[\w.\[\]]+\s*\)", re.M)


def own_call(text: str, calls: str, name: str) -> bool:
    """Whether ``calls`` (call lines of the method ``text``) call ``name`` on the method's own
    object: ``self.name(``, ``this.name(``, ``cls.``, Ruby's ``@``/bare, Go's receiver
    (``func (f *FlagSet)`` → ``f.name(``), or a bare ``name(`` (Java, C#, C++, Swift, Kotlin).
    ``auth_flow.send(response)`` in a method of ``Client`` is not ``Client.send``.

    >>> own_call("def a(self):\\n    self.send(r)", "self.send(r)", "send")
    True
    >>> own_call("def a(self):\\n    flow.send(r)", "flow.send(r)", "send")
    False
    >>> own_call("func (f *FlagSet) A() {\\n  f.Set(x)", "f.Set(x)", "Set")
    True
    """
    selves = ["self", "this", "cls", "super\\(\\)", "Self"]
    m = _GO_RECEIVER.search(text)
    if m:
        selves.append(re.escape(m.group(1)))
    through = rf"(?<![\w.])(?:{'|'.join(selves)})\s*(?:\.|->|::)\s*{re.escape(name)}\s*[(<!]"
    return re.search(through, calls) is not None or bare_call(calls, name)


def visibly_calls(caller: Any, definition: Any, owner_unique: bool = False) -> bool:
    """Whether ``caller``'s code shows that its call of ``definition``'s name is that
    definition's — needed when other definitions share the name: through the owner's name
    (``Hasher.create(``; from another file only when ``owner_unique``: no other definition
    is named like the owner), or on its own object from a method of the same class
    (``self.create(``). A function among namesakes cannot be told apart this way (False).
    The evidence card states "D calls B" for a name defined more than once only then."""
    name = (definition.symbol or "").rpartition(".")[2]
    if not name:
        return False
    sites = call_lines(caller.text, caller.start_line, name, caller.symbol, limit=len(caller.text))
    return _through_owner(caller, "\n".join(s.text for s in sites), definition, owner_unique)


def _through_owner(
    caller: Any,
    calls: str,
    definition: Any,
    owner_unique: bool,
    typed: set[str | None] | None = None,
) -> bool:
    """``typed``: ``receiver_types(caller.text, calls, name)`` when the caller has it."""
    owner, _, name = (definition.symbol or "").rpartition(".")
    if not owner:
        return False
    nearby = caller.path == definition.path
    if shows_owner(calls, owner, name, nearby, owner_unique):
        return True
    # a method of the same class, on its own object: the class itself when it is in this file
    # or is the only one so named (a platform variant of the class in another file is not)
    same_class = (caller.symbol or "").rpartition(".")[0] == owner and (nearby or owner_unique)
    if same_class and own_call(caller.text, calls, name):
        return True
    # through a variable the caller declares with the owner's type (``ctx: Context`` and
    # ``ctx.invoke(``), the class being this file's or the only one so named
    if typed is None:
        typed = receiver_types(caller.text, calls, name)
    return (nearby or owner_unique) and owner.rpartition(".")[2] in typed


def find_callers(
    store: Any, name: str, *, include_tests: bool = True, limit: int = MAX_CALLERS
) -> CallersResult:
    """The chunks that call ``name`` (``Owner.method`` or a bare name), certain ones first."""
    from .imports import external_by_file, external_call
    from .query import qualified_name

    name = re.sub(r"\s*\(\s*\)$", "", (name or "").strip().strip("`").strip())  # `send()`
    if not name:
        raise UsageError("The name is empty — pass e.g. 'parse_args' or 'Command.main'")
    if len(name) > MAX_NAME_CHARS:
        raise UsageError(
            f"The name is {len(name)} characters long — pass one function or method name, "
            "e.g. 'parse_args' or 'Command.main'"
        )
    wanted = qualified_name(name)
    last = last_part(wanted)
    # a method declared without a body (a trait's or interface's, chunker 6) is counted with
    # the declarations below, not as a definition — unless it is all the name has
    targets = store.find_symbol(wanted)
    targets = [d for d in targets if not is_bodyless(d)] or targets
    keys = {(d.path, d.start_line) for d in targets}
    namesakes = [
        c
        for _, c, _ in store.by_symbol([last], limit=200)
        if is_definition(c.kind) and (c.path, c.start_line) not in keys and not is_bodyless(c)
    ]
    # a trait's bodiless `fn retry(&self, req, result);` whose parameters differ from every
    # target's: `policy.retry(…)` may be a call of it (an implementation outside the index)
    declared_fn = getattr(store, "declarations", None)
    found = declared_fn([last]).get(last, []) if declared_fn else []
    declared = other_declarations(found, [d.text for d in targets], last)
    classes = (CODE, TEST) if include_tests else (CODE,)
    rows = [c for _, c, _ in store.callers(last, classes=classes, limit=limit + 1)]
    truncated = len(rows) > limit
    rows = [c for c in rows[:limit] if (c.path, c.start_line) not in keys]  # not recursion
    external = external_by_file(store, [c.path for c in rows])

    def unique_owner(d: Any) -> bool:
        owner = (d.symbol or "").rpartition(".")[0].rpartition(".")[2]
        if not owner:
            return False
        found = [c for _, c, _ in store.by_symbol([owner], limit=50) if is_definition(c.kind)]
        return len(found) <= 1

    owner_unique = [unique_owner(d) for d in targets] if namesakes or declared else []  # per target

    # a bare ``name(`` call is the function's when every namesake is a method (``Set`` and
    # ``FlagSet.Set``): a method is called through its object
    bare_ok = any(d.kind == "function" for d in targets) and not any(
        n.kind == "function" for n in namesakes
    )
    owners = {_owner_name(d) for d in targets} - {""}
    other_owners = {_owner_name(n) for n in namesakes} - {""} - owners
    derives: dict[tuple[str, str], bool] = {}  # (owner, type) -> _extends, read once per pair

    def related(owner: str, other: str) -> bool:
        if (owner, other) not in derives:
            derives[owner, other] = _extends(store, owner, other)
        return derives[owner, other]

    callers: list[Caller] = []
    elsewhere = 0
    for c in rows:
        if c.path in external and external_call(c.text, last, external[c.path]):
            continue  # ``from html import escape``: another module's function
        sites = call_lines(c.text, c.start_line, last, c.symbol, limit=len(c.text))
        shown = "\n".join(s.text for s in sites)  # the calls, not the caller's own header
        # the declared types of what it calls through: read only when a namesake makes it matter
        typed = receiver_types(c.text, shown, last) if namesakes or declared else set()
        certain = bool(targets) and (
            not (namesakes or declared)
            or any(
                _through_owner(c, shown, d, u, typed)
                for d, u in zip(targets, owner_unique, strict=True)
            )
            or (bare_ok and bare_call(shown, last))
        )
        if not certain and other_owners:
            if (
                typed
                and typed <= other_owners  # None (a type not known) is never in it
                and not any(related(o, t) for o in owners for t in typed)
            ):
                elsewhere += 1
                continue  # ``runner = CliRunner()``: calls ``CliRunner.invoke``
        callers.append(
            Caller(
                path=c.path,
                start_line=c.start_line,
                end_line=c.end_line,
                symbol=c.symbol,
                kind=c.kind,
                language=c.language,
                file_class=getattr(c, "file_class", CODE),
                certain=certain,
                calls=sites[:MAX_CALL_LINES],
            )
        )
    callers.sort(key=lambda c: (not c.certain, c.file_class == TEST, c.path, c.start_line))
    defs = [
        Definition(d.path, d.start_line, d.end_line, d.symbol, d.kind, d.language, d.signature)
        for d in targets
    ]
    note = ""
    if not targets:
        note = (
            f"No definition named {name!r} in the index: these chunks call a function of that "
            "name defined elsewhere (a dependency, a built-in)"
            if callers
            else f"Nothing in the index defines or calls {name!r} — try `grep` for the text"
        )
    elif not callers:
        note = f"No indexed code calls {name!r} (an entry point, a callback, or called by name)"
    elif namesakes or declared:
        what = f"{len(namesakes)} other definition(s)" if namesakes else ""
        if declared:
            what += (" and " if what else "") + (
                f"{len(declared)} method declaration(s) of a trait or interface"
            )
        note = f"{what} are named {last!r}: callers marked certain=false may call one of them"
    if elsewhere:
        note += (
            f"{'; ' if note else ''}{elsewhere} caller(s) left out: they call {last!r} through "
            "an object declared as another class that defines it"
        )
    others = len(namesakes) + len(declared)
    return CallersResult(wanted, defs, callers, others, truncated, note, elsewhere)


def _owner_name(d: Any) -> str:
    """The last part of a method's class: ``Context`` of ``click.core.Context.invoke``."""
    return (d.symbol or "").rpartition(".")[0].rpartition(".")[2]


def _extends(store: Any, owner: str, other: str, depth: int = 4) -> bool:
    """Whether a class named ``owner`` derives from ``other``, as far as the headers of the
    indexed classes show (``class Group(MultiCommand)``, ``class MultiCommand(Command)``;
    ``class A extends B implements C``; ``struct S: P``): then a call through an ``other``
    may reach ``owner``'s method. An ``owner`` not found counts as related (nothing is left
    out), and so does a chain deeper than ``depth``."""
    seen = {owner}
    level = [owner]
    for i in range(depth):
        bases: list[str] = []
        for name in level:
            found = [c for _, c, _ in store.by_symbol([name], limit=50) if c.kind == "class"]
            if not found and i == 0:
                return True
            for c in found:
                words = re.findall(r"(?<![\w$])[A-Z][\w$]*", class_header(c.text))
                if other in words:
                    return True
                bases += [w for w in words if w not in seen]
        level = list(dict.fromkeys(bases))
        seen.update(level)
        if not level:
            return False
    return True


_CLASS_LINE = re.compile(
    r"\b(?:class|struct|interface|trait|object|enum|record|protocol|extension|impl|type)\b"
)


def class_header(text: str, limit: int = 3) -> str:
    """A class chunk's header: from the line that names it (past a leading doc comment or
    decorators) to the one that opens the body (``{``, ``:``), at most ``limit`` lines.

    >>> class_header("class Group(MultiCommand):\\n    # A Group.\\n")
    'class Group(MultiCommand):'
    >>> class_header("/**\\n * A Hasher.\\n */\\npublic class A\\n    extends B {\\n  int x;")
    'public class A\\n    extends B {'
    """
    from .ranking import LEAD_COMMENT

    lines = text.split("\n")
    at = next(
        (
            i
            for i, ln in enumerate(lines[:40])
            if _CLASS_LINE.search(ln) and not LEAD_COMMENT.match(ln)
        ),
        0,
    )
    out = []
    for line in lines[at : at + limit]:
        out.append(line)
        if line.rstrip().endswith(("{", ":")):
            break
    return "\n".join(out)
