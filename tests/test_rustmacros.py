"""Rust items inside item-position macro calls (askrepo.rustmacros), with real tree-sitter."""

from askrepo.chunker import chunk_text

SRC = """\
cfg_server! {
    impl<S> Server<S> {
        pub(crate) fn new(service: S) -> Server<S> {
            Server { service }
        }
    }
}

mod conn {
    cfg_client! {
        /// Builds a client connection.
        pub fn handshake() -> Builder {
            Builder::new()
        }
    }
}

ffi_fn! {
    fn hyper_request_new() -> *mut hyper_request {
        Box::into_raw(Box::new(hyper_request::new()))
    } ?= std::ptr::null_mut()
}

macro_rules! forward {
    ($($f:ident)*) => { $(fn $f() {})* };
}

fn render() -> String {
    quote! { fn generated() {} }.to_string()
}
"""


def _table(text):
    return [
        (c.start_line, c.end_line, c.kind, c.symbol) for c in chunk_text("src/x.rs", text, "rust")
    ]


def test_items_inside_cfg_macros_are_definitions():
    got = _table(SRC)
    assert (3, 7, "method", "Server.new") in got  # closing braces glued on
    assert (11, 16, "function", "conn.handshake") in got  # with its doc comment
    # the chunk text is the original, macro call included
    chunk = next(c for c in chunk_text("src/x.rs", SRC, "rust") if c.symbol == "Server.new")
    assert chunk.text.splitlines()[0].strip().startswith("pub(crate) fn new")
    lines = SRC.splitlines()
    for start, end, _kind, _sym in got:
        assert 1 <= start <= end <= len(lines)


def test_custom_syntax_expressions_and_macro_rules_stay_closed():
    got = _table(SRC)
    names = {sym for _s, _e, kind, sym in got if kind != "window"}
    assert "hyper_request_new" not in names  # "?= default" is not Rust: left as a window
    assert "generated" not in names  # quote! inside a function body
    assert "forward" in names  # the macro_rules! definition itself, as before
    assert "render" in names
