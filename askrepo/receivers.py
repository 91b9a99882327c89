"""The declared type of the object a call goes through, read from the calling chunk alone.

``ctx.invoke(f)`` may call any ``invoke``; in ``def invoke(self, ctx: Context)`` it calls
``Context.invoke``. A variable's type is read where the same chunk declares it:

- a parameter or variable annotation: ``ctx: Context``, ``ctx: t.Optional[Context]``,
  ``req: &mut Request<B>`` (Python, TypeScript, Rust, Kotlin, Swift, Scala);
- a Go parameter or ``var``: ``c *gin.Context``, ``var b Builder``;
- a Java / C# / C++ / Dart declaration: ``Context ctx``, ``final Context ctx =``,
  ``const Context& ctx``;
- a construction assigned to it: ``runner = CliRunner()``, ``const c = new Client(``,
  ``b := &Builder{``, ``let mut p = Parser::new(``, ``val p = Parser(``, ``$p = new Parser(``.

Only a capitalised type name counts (a class, struct, interface), and only when every
declaration of the variable in the chunk agrees. Nothing here is a type checker: an unknown
type is ``None`` and the caller stays "possible" (``askrepo.callers``).
"""

from __future__ import annotations

import re
from functools import lru_cache

_TYPE = r"([A-Z][A-Za-z0-9_]*)"
_QUAL = r"(?:[A-Za-z_][\w]*(?:\.|::))*"  # pkg. / crate:: / t. qualifiers before the type name
_SELVES = frozenset({"self", "this", "cls", "super", "Self", "$this"})


@lru_cache(maxsize=1024)
def _patterns(var: str) -> tuple[re.Pattern[str], ...]:
    v = re.escape(var)
    wrapper = r"(?:[\w.]+\[)?"  # t.Optional[ / Optional[ / list[ are read through
    return (
        # annotation: ctx: Context / ctx: t.Optional[Context] / req: &mut Request<B>
        re.compile(
            rf"(?<![\w$.]){v}\s*\??\s*:\s*(?!:){wrapper}&?\s*(?:mut\s+)?(?:'\w+\s+)?{_QUAL}{_TYPE}"
        ),
        # Go parameter / var: c *gin.Context, var b Builder (a type right after the name)
        re.compile(rf"(?:[(,]\s*|\bvar\s+){v}\s+\*?{_QUAL}{_TYPE}\b"),
        # C-family declaration: Context ctx, final Context ctx =, const Context& ctx
        re.compile(rf"(?<![\w.]){_TYPE}(?:<[^<>()]*>)?\s*[*&]?\s+[*&]?{v}\s*[=,;)]"),
        # construction: runner = CliRunner(), c = new Client(, b := &Builder{, Parser::new(
        re.compile(
            rf"(?<![\w$.]){v}\s*(?::=|=(?!=))\s*(?:new\s+|&\s*)?{_QUAL}{_TYPE}\s*(?:<[^<>]*>)?"
            rf"\s*(?:[({{]|::\s*(?:new|default|builder|with_\w+)\b)"
        ),
    )


def variable_type(text: str, var: str) -> str | None:
    """The type name ``var`` is declared with in ``text``, when every declaration agrees.

    >>> variable_type("def invoke(self, ctx: Context) -> t.Any:\\n    ctx.invoke(f)", "ctx")
    'Context'
    >>> variable_type("def f(ctx: t.Optional[Context] = None):", "ctx")
    'Context'
    >>> variable_type("func H(c *gin.Context) {\\n\\tc.JSON(200, x)", "c")
    'Context'
    >>> variable_type("fn poll(req: &mut Request<B>) {", "req")
    'Request'
    >>> variable_type("public void run(final Context ctx, int n) {", "ctx")
    'Context'
    >>> variable_type("    runner = CliRunner()\\n    runner.invoke(cli)", "runner")
    'CliRunner'
    >>> variable_type("let mut p = Parser::new(src);", "p")
    'Parser'
    >>> variable_type("const c = new http.Client({})", "c")
    'Client'
    >>> variable_type("def test(runner):\\n    runner.invoke(cli)", "runner") is None
    True
    >>> variable_type("x: Foo = make()\\nx = Bar()", "x") is None  # two declarations disagree
    True
    """
    if var in _SELVES:
        return None
    found = {m.group(1) for p in _patterns(var) for m in p.finditer(text)}
    return found.pop() if len(found) == 1 else None


def call_receivers(calls: str, name: str) -> list[str]:
    """The variables ``name`` is called through in ``calls``: ``ctx`` of ``ctx.invoke(``,
    ``c`` of ``c->send(``, ``p`` of ``p?.parse(``; not ``self``/``this`` and not a chain
    (``a.b.invoke(`` has no single variable).

    >>> call_receivers("return ctx.invoke(f)\\nrv = self.invoke(c)\\nx = a.b.invoke(1)", "invoke")
    ['ctx']
    """
    n = re.escape(name)
    out = re.findall(rf"(?<![\w$.>])([A-Za-z_$][\w$]*)\s*(?:\.|->|\?\.)\s*{n}\s*[(<!]", calls)
    return list(dict.fromkeys(v for v in out if v not in _SELVES))


def receiver_types(text: str, calls: str, name: str) -> set[str | None]:
    """The declared type of each variable ``name`` is called through (``None``: not known).

    >>> text = "def f(ctx: Context, r):\\n    ctx.invoke(g)\\n    r.invoke(h)"
    >>> sorted(receiver_types(text, "ctx.invoke(g)\\nr.invoke(h)", "invoke"), key=str)
    ['Context', None]
    """
    return {variable_type(text, v) for v in call_receivers(calls, name)}
