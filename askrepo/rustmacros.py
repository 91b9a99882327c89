"""Rust items written inside a macro call, opened up for the parser (chunking only).

Crates gate whole blocks of items behind item-position macros: hyper's ``cfg_server! { impl
Server { … } }``, tokio's ``cfg_rt! { … }``, FFI wrappers such as ``ffi_fn! { fn hyper_x() … }``.
Tree-sitter reads a macro's body as an opaque token tree, so every function in it became part
of a line window that no one can look up by name.

:func:`unwrap_item_macros` takes the parsed tree and returns the source with the
``name! {`` opener and the matching ``}`` of each such call replaced by spaces (same length:
offsets, lines and the chunk text are unchanged), so a second parse sees the items. Only calls
in item position (at the top of a file, or in a ``mod`` / ``impl`` / ``trait`` body) whose body
starts like an item (``fn``, ``impl``, ``pub``, ``struct``, ``#[…]`` …) are opened;
``macro_rules!`` definitions, macros inside function bodies (``quote! { … }``,
``json!({…})``) and bodies that do not parse as items on their own are not.
"""

from __future__ import annotations

from typing import Any

ITEM_PARENTS = frozenset({"source_file", "declaration_list"})
ITEM_STARTS = frozenset(
    {
        "fn",
        "pub",
        "impl",
        "struct",
        "enum",
        "trait",
        "mod",
        "type",
        "const",
        "static",
        "use",
        "unsafe",
        "async",
        "extern",
        "#",
    }
)


def _item_macros(node: Any, out: list[Any]) -> None:
    for child in node.children:
        if child.type == "macro_invocation" and node.type in ITEM_PARENTS:
            out.append(child)
        elif child.type in ("mod_item", "impl_item", "trait_item", "declaration_list"):
            _item_macros(child, out)


def _opens(call: Any) -> tuple[int, int] | None:
    """(start, end) byte spans of ``name! {`` and of its closing ``}``; None if the call is not
    a braced call whose body starts like an item."""
    tree = next((c for c in call.children if c.type == "token_tree"), None)
    if tree is None or tree.child_count < 3:
        return None
    first, last = tree.children[0], tree.children[-1]
    if first.type != "{" or last.type != "}":
        return None
    body = [c for c in tree.children[1:-1] if "comment" not in c.type]
    if not body or body[0].type not in ITEM_STARTS:
        return None  # an expression or custom syntax, not items
    return first.end_byte, last.start_byte


def unwrap_item_macros(data: bytes, root: Any, parse: Any) -> bytes | None:
    """``data`` with each item-position macro call's ``name! {`` and ``}`` blanked, or None
    when the file has none to open. ``parse(bytes) -> tree``: a body that does not parse
    cleanly on its own (custom syntax such as ``ffi_fn! { fn f() { … } ?= default }``) stays
    closed, since error recovery would glue its items together."""
    calls: list[Any] = []
    _item_macros(root, calls)
    spans = []
    for call in calls:
        got = _opens(call)
        if got is not None and not parse(data[got[0] : got[1]]).root_node.has_error:
            spans.append((call.start_byte, got[0]))  # "cfg_server! {"
            spans.append((got[1], call.end_byte))  # "}" (and a trailing ";" if any)
    if not spans:
        return None
    buf = bytearray(data)
    for a, b in spans:
        for i in range(a, b):
            if buf[i] not in (0x0A, 0x0D):
                buf[i] = 0x20
    return bytes(buf)
