"""Golden and property tests for askrepo.chunker (real tree-sitter grammars)."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from askrepo.chunker import (
    CHUNKER_VERSION,
    _compiled,
    chunk_text,
    default_export_name,
    split_lines,
    supported_languages,
)


def src(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def table(chunks):
    """(start, end, kind, symbol) of every chunk, in order."""
    return [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks]


def by_symbol(chunks, symbol):
    found = [c for c in chunks if c.symbol == symbol and c.kind != "window"]
    assert len(found) == 1, (symbol, table(chunks))
    return found[0]


def check_invariants(text: str, chunks, *, code: bool) -> None:
    lines = split_lines(text)
    covered: set[int] = set()
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines), c.location
        assert c.text == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.text.strip(), "blank-only chunk"
        covered.update(range(c.start_line, c.end_line + 1))
    if code:
        missing = [i for i, line in enumerate(lines, 1) if line.strip() and i not in covered]
        assert not missing, missing


# --------------------------------------------------------------------------------------------
# Python

PY = src('''
    """Module docstring."""
    import os

    DEFAULT = os.environ.get("X")


    # Attached comment
    @decorator(
        flag=True,
    )
    def greet(name, *, loud=False):
        """Say hello."""
        text = format_name(name).upper()
        return shout(text) if loud else text


    class Greeter(Base):
        """A greeter."""

        greeting = "hi"

        def __init__(self, name):
            self.name = name

        # Attached to run.
        @property
        def run(self):
            return self.helper.call_me()

        class Inner:
            def deep(self):
                pass

        trailing = 1


    if __name__ == "__main__":
        greet("x")
''')


def test_python_golden():
    chunks = chunk_text("pkg/greet.py", PY, "python")
    assert table(chunks) == [
        (1, 4, "window", None),
        (7, 14, "function", "greet"),
        (17, 20, "class", "Greeter"),
        (22, 23, "method", "Greeter.__init__"),
        (25, 28, "method", "Greeter.run"),
        (30, 30, "class", "Greeter.Inner"),
        (31, 32, "method", "Greeter.Inner.deep"),
        (34, 34, "window", "Greeter"),
        (37, 38, "window", None),
    ]
    check_invariants(PY, chunks, code=True)
    greet = by_symbol(chunks, "greet")
    assert greet.text.startswith("# Attached comment\n@decorator(")
    assert greet.signature == "def greet(name, *, loud=False)"
    assert greet.calls == ["decorator", "format_name", "upper", "shout"]
    assert greet.language == "python" and greet.path == "pkg/greet.py"
    run = by_symbol(chunks, "Greeter.run")
    assert run.text.splitlines()[:2] == ["    # Attached to run.", "    @property"]
    assert run.calls == ["call_me"]
    assert by_symbol(chunks, "Greeter").signature == "class Greeter(Base)"
    # The caller sets these.
    assert greet.file_class == "code" and greet.file_sha == ""


def test_python_overload_stubs_are_separate_functions():
    text = src("""
        @overload
        def f(x: int) -> int: ...
        @overload
        def f(x: str) -> str: ...
        def f(x):
            def inner():
                return helper()
            return inner()
    """)
    chunks = chunk_text("m.py", text, "python")
    assert table(chunks) == [
        (1, 2, "function", "f"),
        (3, 4, "function", "f"),
        (5, 8, "function", "f"),  # the nested function stays inside its parent
    ]
    assert [c.signature for c in chunks] == [
        "def f(x: int) -> int",
        "def f(x: str) -> str",
        "def f(x)",
    ]
    assert chunks[2].calls == ["helper", "inner"]


def test_comment_separated_by_blank_line_is_not_attached():
    text = "# license header\n\ndef f():\n    pass\n"
    assert table(chunk_text("m.py", text, "python")) == [
        (1, 1, "window", None),
        (3, 4, "function", "f"),
    ]


def test_a_doc_block_one_blank_line_above_is_attached_but_not_other_comments():
    """commander's style: a JSDoc block, a blank line, the method. Only a ``/** … */`` block
    crosses one blank line; a plain comment, or a doc block two blank lines up, does not."""
    text = src("""
        class A {
          /**
           * Parse options.
           */

          parse(argv) {
            return argv;
          }

          // a section banner

          run() {}

          /** Two lines away. */


          stop() {}
        }
    """)
    rows = table(chunk_text("a.js", text, "javascript"))
    assert rows == [
        (1, 1, "class", "A"),
        (2, 8, "method", "A.parse"),  # the JSDoc, the blank line and the method
        (10, 10, "window", "A"),  # the banner
        (12, 12, "method", "A.run"),
        (14, 14, "window", "A"),  # the doc block two blank lines up
        (17, 18, "method", "A.stop"),
    ]
    # nothing attaches above the enclosing class's first line
    text = "/** the file */\n\nfunction f() {}\n"
    assert table(chunk_text("f.js", text, "javascript")) == [(1, 3, "function", "f")]


def test_trailing_comment_of_code_line_is_not_attached():
    text = "x = 1  # not a doc comment\ndef f():\n    pass\n"
    assert table(chunk_text("m.py", text, "python")) == [
        (1, 1, "window", None),
        (2, 3, "function", "f"),
    ]


def test_class_lines_between_methods_become_class_windows():
    text = src("""
        class A:
            def a(self):
                pass

            b = compute()

            def c(self):
                pass
    """)
    chunks = chunk_text("m.py", text, "python")
    assert table(chunks) == [
        (1, 1, "class", "A"),
        (2, 3, "method", "A.a"),
        (5, 5, "window", "A"),
        (7, 8, "method", "A.c"),
    ]
    assert chunks[2].calls == ["compute"]


def test_class_without_methods_is_one_chunk():
    text = src("""
        @dataclass
        class Point:
            x: int
            y: int
    """)
    assert table(chunk_text("m.py", text, "python")) == [(1, 4, "class", "Point")]


# --------------------------------------------------------------------------------------------
# JavaScript / TypeScript

JS = src("""
    import { x } from "./x";

    // Adds numbers.
    const add = (a, b) => {
      return sum(a, b);
    };

    export function main() {
      add(1, 2);
    }

    exports.handler = function (req) {
      return api.send(req);
    };

    class Widget extends Base {
      count = 0;

      onClick = () => {
        this.update();
      };

      render() {
        return h("div");
      }
    }

    const api = {
      fetch() {
        return get();
      },
      post: async (url) => request(url),
    };
""")


def test_javascript_golden():
    chunks = chunk_text("src/app.js", JS, "javascript")
    assert table(chunks) == [
        (1, 1, "window", None),
        (3, 6, "function", "add"),
        (8, 10, "function", "main"),
        (12, 14, "function", "handler"),
        (16, 17, "class", "Widget"),
        (19, 21, "method", "Widget.onClick"),
        (23, 26, "method", "Widget.render"),  # the class's closing brace is glued on
        (28, 28, "window", "api"),  # an object of functions qualifies them
        (29, 31, "function", "api.fetch"),
        (32, 33, "function", "api.post"),
    ]
    check_invariants(JS, chunks, code=True)
    assert by_symbol(chunks, "add").signature == "const add = (a, b) =>"
    assert by_symbol(chunks, "add").calls == ["sum"]
    assert by_symbol(chunks, "handler").calls == ["send"]
    assert by_symbol(chunks, "Widget.onClick").calls == ["update"]
    assert by_symbol(chunks, "main").signature == "export function main()"


TSX = src("""
    import React from "react";

    interface Props {
      title: string;
    }

    /** The app. */
    export const App = ({ title }: Props) => {
      const [n, setN] = useState(0);
      return <h1 onClick={() => setN(n + 1)}>{title}</h1>;
    };

    @Injectable()
    export class Store<T> {
      private items: T[] = [];

      @Log()
      add(item: T): void {
        this.items.push(item);
      }
    }
""")


def test_tsx_golden():
    chunks = chunk_text("src/App.tsx", TSX, "tsx")
    assert table(chunks) == [
        (1, 1, "window", None),
        (3, 5, "class", "Props"),
        (7, 11, "function", "App"),
        (13, 15, "class", "Store"),
        (17, 21, "method", "Store.add"),
    ]
    check_invariants(TSX, chunks, code=True)
    assert by_symbol(chunks, "App").calls == ["useState", "setN"]
    assert by_symbol(chunks, "Store.add").signature == "add(item: T): void"
    assert by_symbol(chunks, "Store").text.startswith("@Injectable()\nexport class Store<T> {")


def test_typescript_namespace_and_class_field_arrow():
    text = src("""
        namespace Api {
          export function call(): void {}
        }
        class C {
          handler = (e: Event): void => {
            this.run(e);
          };
        }
    """)
    chunks = chunk_text("a.ts", text, "typescript")
    assert table(chunks) == [
        (1, 1, "window", "Api"),
        (2, 3, "function", "Api.call"),
        (4, 4, "class", "C"),
        (5, 8, "method", "C.handler"),
    ]


# --------------------------------------------------------------------------------------------
# Go, Rust, Java

GO = src("""
    package server

    import "fmt"

    // Server serves.
    type Server struct {
        Addr string
    }

    // Run starts the server.
    func (s *Server) Run(port int) error {
        return fmt.Errorf("port %d", port)
    }

    func New(addr string) *Server {
        return &Server{Addr: addr}
    }
""")


def test_go_golden():
    chunks = chunk_text("server.go", GO, "go")
    assert table(chunks) == [
        (1, 3, "window", None),
        (5, 8, "class", "Server"),
        (10, 13, "method", "Server.Run"),
        (15, 17, "function", "New"),
    ]
    check_invariants(GO, chunks, code=True)
    run = by_symbol(chunks, "Server.Run")
    assert run.signature == "func (s *Server) Run(port int) error"
    assert run.calls == ["Errorf"]


RUST = src("""
    use std::fmt;

    /// A point.
    #[derive(Debug, Clone)]
    pub struct Point {
        x: i32,
    }

    impl Point {
        /// Makes a point.
        pub fn new(x: i32) -> Self {
            Point { x }
        }

        fn norm(&self) -> i32 {
            self.x.abs()
        }
    }

    impl fmt::Display for Point {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "{}", self.x)
        }
    }

    fn main() {
        let p = Point::new(1);
        println!("{}", p.norm());
    }
""")


def test_rust_golden():
    chunks = chunk_text("src/point.rs", RUST, "rust")
    assert table(chunks) == [
        (1, 1, "window", None),
        (3, 7, "class", "Point"),  # doc comment + attribute attached
        (9, 9, "window", "Point"),  # impl header
        (10, 13, "method", "Point.new"),
        (15, 18, "method", "Point.norm"),
        (20, 20, "window", "Point"),
        (21, 24, "method", "Point.fmt"),
        (26, 29, "function", "main"),
    ]
    check_invariants(RUST, chunks, code=True)
    assert by_symbol(chunks, "Point.new").signature == "pub fn new(x: i32) -> Self"
    assert by_symbol(chunks, "main").calls == ["new"]
    assert by_symbol(chunks, "Point.norm").calls == ["abs"]


def test_rust_impl_for_a_primitive_qualifies_its_methods():
    text = src("""
        impl<'de> Deserialize<'de> for bool {
            fn deserialize<D>(d: D) -> Result<bool, D::Error> {
                d.deserialize_bool(BoolVisitor)
            }
        }
    """)
    chunks = chunk_text("src/de/impls.rs", text, "rust")
    assert (2, 5, "method", "bool.deserialize") in table(chunks)  # with the closing "}"
    check_invariants(text, chunks, code=True)


def test_rust_trait_required_methods_and_impls_for_references():
    # bytes's Buf: `Buf::chunk` is the required method's declaration and its docs, not the
    # `fn chunk` of `impl Buf for &[u8]` (which had no qualifier and answered as bare `chunk`)
    text = src("""
        /// Read bytes from a buffer.
        pub trait Buf {
            /// Returns the number of bytes.
            fn remaining(&self) -> usize;

            /// Returns a slice.
            fn chunk(&self) -> &[u8];

            fn has_remaining(&self) -> bool {
                self.remaining() > 0
            }
        }

        impl Buf for &[u8] {
            fn chunk(&self) -> &[u8] {
                self
            }
        }

        impl<T: Buf + ?Sized> Buf for &mut T {
            fn chunk(&self) -> &[u8] {
                (**self).chunk()
            }
        }
    """)
    chunks = chunk_text("src/buf.rs", text, "rust")
    assert table(chunks) == [
        (1, 2, "class", "Buf"),
        (3, 4, "method", "Buf.remaining"),
        (6, 7, "method", "Buf.chunk"),
        (9, 12, "method", "Buf.has_remaining"),  # the trait's closing brace glued on
        (14, 14, "window", "[u8]"),
        (15, 18, "method", "[u8].chunk"),
        (20, 20, "window", "T"),
        (21, 24, "method", "T.chunk"),
    ]
    check_invariants(text, chunks, code=True)
    # a foreign function declaration is no trait method: it stays in its window
    ffi = src("""
        extern "C" {
            fn abs(x: i32) -> i32;
        }
    """)
    assert [c.kind for c in chunk_text("src/ffi.rs", ffi, "rust")] == ["window"]


@pytest.mark.parametrize(
    ("path", "language", "text", "expected"),
    [
        (
            "router.go",
            "go",
            """
            package chi

            // Router routes.
            type Router interface {
            \t// Use appends a middleware.
            \tUse(middlewares ...func(Handler) Handler)

            \tGet(pattern string, h HandlerFunc)
            }
            """,
            [
                (3, 4, "class", "Router"),
                (5, 6, "method", "Router.Use"),
                (8, 9, "method", "Router.Get"),
            ],
        ),
        (
            "TypeAdapterFactory.java",
            "java",
            """
            /** Creates type adapters. */
            public interface TypeAdapterFactory {
              /** Returns an adapter, or null. */
              <T> TypeAdapter<T> create(Gson gson, TypeToken<T> type);
            }
            """,
            [(1, 2, "class", "TypeAdapterFactory"), (3, 5, "method", "TypeAdapterFactory.create")],
        ),
        (
            "handler.ts",
            "typescript",
            """
            export interface Handler {
              /** Handles a request. */
              handle(req: Request): Response;
            }
            export abstract class Base {
              abstract run(): void;
            }
            """,
            [
                (1, 1, "class", "Handler"),
                (2, 4, "method", "Handler.handle"),
                (5, 5, "class", "Base"),
                (6, 7, "method", "Base.run"),
            ],
        ),
    ],
)
def test_interface_methods_are_definitions_of_their_own(path, language, text, expected):
    text = src(text)
    chunks = chunk_text(path, text, language)
    assert [t for t in table(chunks) if t[2] != "window"] == expected
    check_invariants(text, chunks, code=True)


def test_javascript_functions_set_on_an_object_are_qualified_by_it():
    text = src("""
        res.send = function send(body) {
          return this;
        };

        Router.prototype.route = function (path) {
          return path;
        };

        exports.handler = function (req) {
          return req;
        };

        module.exports.other = () => 1;

        const DEFAULTS = { timeout: 0 };
    """)
    chunks = chunk_text("lib/response.js", text, "javascript")
    assert [(c.kind, c.symbol) for c in chunks if c.kind == "function"] == [
        ("function", "res.send"),
        ("function", "Router.route"),
        ("function", "handler"),  # exports and module.exports qualify nothing
        ("function", "other"),
    ]
    assert chunks[-1].symbol is None  # an object with no function in it is no definition
    check_invariants(text, chunks, code=True)


JAVA = src("""
    package demo;

    import java.util.List;

    /**
     * Greets people.
     */
    @Service
    public class Greeter {
        private final String name;

        public Greeter(String name) {
            this.name = name;
        }

        // Builds the greeting.
        @Override
        public String greet(List<String> who) {
            return String.join(",", who);
        }
    }
""")


def test_java_golden():
    chunks = chunk_text("Greeter.java", JAVA, "java")
    assert table(chunks) == [
        (1, 3, "window", None),
        (5, 10, "class", "Greeter"),
        (12, 14, "method", "Greeter.Greeter"),
        (16, 21, "method", "Greeter.greet"),
    ]
    check_invariants(JAVA, chunks, code=True)
    greet = by_symbol(chunks, "Greeter.greet")
    assert greet.signature == "public String greet(List<String> who)"
    assert greet.calls == ["join"]
    assert by_symbol(chunks, "Greeter").signature == "public class Greeter"


# --------------------------------------------------------------------------------------------
# Other languages


def test_ruby_golden():
    text = src("""
        require "json"

        module Shop
          # A cart.
          class Cart < Base
            attr_reader :items

            def add(item)
              @items.push(item)
              save!
            end

            def self.build
              new
            end
          end
        end
    """)
    chunks = chunk_text("cart.rb", text, "ruby")
    assert table(chunks) == [
        (1, 1, "window", None),
        (3, 3, "class", "Shop"),
        (4, 6, "class", "Shop.Cart"),
        (8, 11, "method", "Shop.Cart.add"),
        (13, 17, "method", "Shop.Cart.build"),  # the two `end`s are glued on
    ]
    check_invariants(text, chunks, code=True)
    assert chunks[3].calls == ["push", "save!"]


def test_cpp_golden():
    text = src("""
        #include <vector>

        namespace geo {
        template <typename T>
        T clamp(T v) { return v; }

        class Shape {
         public:
          virtual ~Shape();
          double area() const { return compute(1); }
        };

        double Shape::scale(double f) { return std::max(f, 1.0); }
        }
    """)
    chunks = chunk_text("geo.cpp", text, "cpp")
    assert table(chunks) == [
        (1, 1, "window", None),
        (3, 3, "window", "geo"),
        (4, 5, "function", "geo.clamp"),  # template line included
        (7, 9, "class", "geo.Shape"),
        (10, 11, "method", "geo.Shape.area"),
        (13, 14, "method", "geo.Shape.scale"),
    ]
    assert chunks[4].calls == ["compute"]
    assert chunks[5].calls == ["max"]


def test_csharp_kotlin_php_bash_c_symbols():
    cs = src("""
        namespace App.Core {
            [Serializable]
            public class Foo {
                public Foo() { Init(); }
                public int Run(int a) => helper(a);
            }
        }
    """)
    assert [(c.kind, c.symbol) for c in chunk_text("Foo.cs", cs, "csharp")] == [
        ("window", "App.Core"),
        ("class", "App.Core.Foo"),
        ("method", "App.Core.Foo.Foo"),
        ("method", "App.Core.Foo.Run"),
    ]
    kt = src("""
        class Repo(val db: Db) {
            fun load(id: Int): Item = db.find(id)
            companion object {
                fun create() = Repo(Db())
            }
        }
        fun String.shout() = uppercase()
    """)
    assert [(c.kind, c.symbol) for c in chunk_text("Repo.kt", kt, "kotlin")] == [
        ("class", "Repo"),
        ("method", "Repo.load"),
        ("window", "Repo"),
        ("method", "Repo.create"),
        ("method", "String.shout"),  # an extension function, qualified by its receiver
    ]
    php = "<?php\nclass User {\n    public function save() { $this->store(); }\n}\n"
    assert table(chunk_text("User.php", php, "php")) == [
        (1, 1, "window", None),
        (2, 2, "class", "User"),
        (3, 4, "method", "User.save"),
    ]
    sh = "#!/bin/sh\n\nbuild() {\n  make all\n}\nbuild\n"
    sh_chunks = chunk_text("build.sh", sh, "bash")
    assert table(sh_chunks) == [
        (1, 1, "window", None),
        (3, 5, "function", "build"),
        (6, 6, "window", None),
    ]
    assert sh_chunks[1].calls == ["make"]
    c = "/* Adds. */\nstatic int\nadd(int a, int b)\n{\n  return sum(a, b);\n}\n"
    c_chunks = chunk_text("add.c", c, "c")
    assert table(c_chunks) == [(1, 6, "function", "add")]
    assert c_chunks[0].signature == "static int add(int a, int b)"


def test_all_required_languages_have_compiling_queries():
    required = {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp",
                "csharp", "ruby", "php", "kotlin", "bash"}  # fmt: skip
    assert required <= set(supported_languages())
    for lang in supported_languages():
        assert _compiled(lang) is not None, lang  # raises on a bad query


# --------------------------------------------------------------------------------------------
# Sizes, lines, markdown, text


def test_oversized_function_is_windowed_with_overlap():
    body = "".join(f"    x{i} = step({i})\n" for i in range(200))
    text = "import os\n\ndef big():\n" + body + "\nTAIL = 1\n"
    chunks = chunk_text("big.py", text, "python", max_lines=150, window=60, overlap=10)
    # big() spans lines 3..203 (the def line + 200 body lines); 204 is blank
    assert table(chunks) == [
        (1, 1, "window", None),
        (3, 62, "function", "big"),
        (53, 112, "function", "big"),
        (103, 162, "function", "big"),
        (153, 203, "function", "big"),
        (205, 205, "window", None),
    ]
    assert {c.signature for c in chunks if c.symbol == "big"} == {"def big()"}
    assert chunks[2].calls == ["step"]
    check_invariants(text, chunks, code=True)


def test_long_module_level_code_is_windowed():
    text = "".join(f"CONST_{i} = {i}\n" for i in range(130))
    chunks = chunk_text("consts.py", text, "python", window=60, overlap=10)
    assert table(chunks) == [
        (1, 60, "window", None),
        (51, 110, "window", None),
        (101, 130, "window", None),
    ]


def test_crlf_line_numbers_are_exact():
    text = "import os\r\n\r\n# doc\r\ndef f():\r\n    return g()\r\n\r\nclass A:\r\n    pass\r\n"
    chunks = chunk_text("crlf.py", text, "python")
    assert table(chunks) == [
        (1, 1, "window", None),
        (3, 5, "function", "f"),
        (7, 8, "class", "A"),
    ]
    assert chunks[1].text == "# doc\r\ndef f():\r\n    return g()\r"
    assert chunks[1].calls == ["g"]
    check_invariants(text, chunks, code=True)


def test_only_newline_splits_lines():
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\n") == ["a"]
    assert split_lines("a\n\n") == ["a", ""]
    assert split_lines("a\rb\x0cc\u2028d\x1ce\n") == ["a\rb\x0cc\u2028d\x1ce"]
    # Form feeds and Unicode line separators do not shift tree-sitter rows either.
    text = "x = '\x0c\u2028'\ny = 2\r\ndef f():\n    pass"
    assert table(chunk_text("m.py", text, "python")) == [
        (1, 2, "window", None),
        (3, 4, "function", "f"),
    ]


def test_markdown_sections():
    text = src("""
        Intro line.

        # Title

        Some text.

        ## Install

        ```bash
        # not a heading
        pip install x
        ```

        Usage
        -----

        Run it.
        ### Empty ###
    """)
    chunks = chunk_text("README.md", text, "markdown")
    assert table(chunks) == [
        (1, 1, "section", None),
        (3, 5, "section", "Title"),
        (7, 12, "section", "Install"),
        (14, 17, "section", "Usage"),
        (18, 18, "section", "Empty"),
    ]
    check_invariants(text, chunks, code=True)


def test_oversized_markdown_section_is_windowed():
    text = "# Big\n" + "".join(f"line {i}\n" for i in range(99))
    chunks = chunk_text("doc.md", text, "markdown", max_lines=50, window=40, overlap=5)
    assert table(chunks) == [
        (1, 40, "section", "Big"),
        (36, 75, "section", "Big"),
        (71, 100, "section", "Big"),
    ]


def test_unknown_language_gives_text_windows():
    text = "".join(f"key{i} = {i}\n" for i in range(70))
    chunks = chunk_text("conf.ini", text, None, window=30, overlap=5)
    assert table(chunks) == [(1, 30, "text", None), (26, 55, "text", None), (51, 70, "text", None)]
    assert table(chunk_text("x.weird", "a\nb\n", "no-such-language")) == [(1, 2, "text", None)]
    # A grammar without a query file is chunked as text too.
    assert table(chunk_text("x.json", '{"a": 1}\n', "json")) == [(1, 1, "text", None)]


def test_blank_text_gives_nothing():
    for lang in ("python", "markdown", None):
        assert chunk_text("x", "", lang) == []
        assert chunk_text("x", "\n  \n\t\n", lang) == []


def test_blank_windows_are_skipped():
    text = "a = 1\n" + "\n" * 100 + "b = 2\n"
    chunks = chunk_text("x.txt", text, None, window=30, overlap=5)
    assert table(chunks) == [(1, 1, "text", None), (102, 102, "text", None)]


def test_garbage_and_unbalanced_code_do_not_raise():
    samples = [
        "\x00\x01\x02 def ( class {{{ \n\n\x00",
        "def f(:\n  return )\nclass\n" * 50,
        "function ( { [ \n" * 30,
        "x" * 200_000,
        "\ufeffdef f(): pass\n",
        "\ud800 lone surrogate\n",
    ]
    for text in samples:
        for lang in ("python", "javascript", "typescript", "rust", "cpp", "markdown", None):
            check_invariants(text, chunk_text("g", text, lang), code=lang != "markdown")


def test_chunker_version_is_a_string():
    assert isinstance(CHUNKER_VERSION, str) and CHUNKER_VERSION


# --------------------------------------------------------------------------------------------
# Properties

_code_alphabet = st.sampled_from(
    list("abcxyz_ ():{}[];,.=+'\"#/*\\@\t\r\n\x00\x0c")
    + [
        "\n",
        "def ",
        "class ",
        "function ",
        "=> ",
        "    ",
        "return ",
        "\u2028",
        "é",
        "\r\n",
        "```",
        "# ",
        "\n---\n",
    ]  # fmt: skip
)
code_text = st.lists(_code_alphabet, max_size=120).map("".join)
any_text = st.one_of(st.text(max_size=300), code_text)
binaryish = st.binary(max_size=400).map(lambda b: b.decode("utf-8", errors="replace"))
LANGS = ["python", "javascript", "markdown", None]
FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(text=any_text, lang=st.sampled_from(LANGS), window=st.integers(1, 20))
def test_property_any_text(text, lang, window):
    chunks = chunk_text("p", text, lang, max_lines=window + 3, window=window, overlap=window // 3)
    check_invariants(text, chunks, code=True)


@FAST
@given(text=binaryish, lang=st.sampled_from(LANGS))
def test_property_binary_bytes(text, lang):
    check_invariants(text, chunk_text("p", text, lang), code=True)


@pytest.mark.parametrize("lang", ["python", "javascript", "markdown", None])
def test_coverage_on_golden_sources(lang):
    for text in (PY, JS, TSX, GO, RUST, JAVA):
        check_invariants(text, chunk_text("p", text, lang, window=7, overlap=2), code=True)


@pytest.mark.parametrize(
    "path, name",
    [
        ("lib/adapters/xhr.js", "xhr"),
        ("src/use-thing.ts", "use_thing"),
        ("src/router/index.ts", "router"),
        ("index.js", "index"),
        ("Button.test.tsx", "Button"),
        ("1x.js", None),
    ],
)
def test_default_export_name(path, name):
    assert default_export_name(path) == name


def test_anonymous_default_exports_are_named_after_the_file():
    js = src("""
        const supported = typeof XMLHttpRequest !== 'undefined';

        export default supported && function (config) {
          return new Promise((resolve) => resolve(config));
        }
    """)
    chunks = chunk_text("lib/adapters/xhr.js", js, "javascript")
    assert (3, 5, "function", "xhr") in table(chunks)
    check_invariants(js, chunks, code=True)
    cls = "export default class extends Base {\n  run() {\n    return 1;\n  }\n}\n"
    assert table(chunk_text("src/widget/index.js", cls, "javascript")) == [
        (1, 1, "class", "widget"),
        (2, 5, "method", "widget.run"),
    ]
    ts = "export default (options: Options): Plugin => {\n  return { name: options.name };\n};\n"
    assert table(chunk_text("src/plugin.ts", ts, "typescript")) == [(1, 3, "function", "plugin")]
    # exporting a value is not a definition
    assert table(chunk_text("src/r.js", "export default router;\n", "javascript")) == [
        (1, 1, "window", None)
    ]


def test_go_named_types_are_definitions():
    go = src("""
        package gin

        // HandlerFunc defines the handler used by gin middleware.
        type HandlerFunc func(*Context)

        type (
            Params []Param
            Alias = Params
        )

        func (p Params) Get(name string) string {
            return ""
        }
    """)
    got = table(chunk_text("gin.go", go, "go"))
    assert (3, 4, "class", "HandlerFunc") in got  # with its doc comment
    assert (7, 7, "class", "Params") in got
    assert (8, 9, "class", "Alias") in got  # the closing ")" glued on
    assert (11, 13, "method", "Params.Get") in got
    # a TypeScript alias has "=": search finds it by its value line (ranking.defining_lines)
    ts = "export type Id = string;\n"
    assert table(chunk_text("types.ts", ts, "typescript")) == [(1, 1, "window", None)]


def test_java_anonymous_class_methods_are_qualified_by_their_field():
    text = src("""
        public final class TypeAdapters {
          public static final TypeAdapter<Boolean> BOOLEAN = new TypeAdapter<Boolean>() {
            @Override
            public Boolean read(JsonReader in) throws IOException {
              return in.nextBoolean();
            }
          };
        }
    """)
    chunks = chunk_text("TypeAdapters.java", text, "java")
    assert (3, 8, "method", "TypeAdapters.BOOLEAN.read") in table(chunks)  # @Override … "};" "}"
    check_invariants(text, chunks, code=True)


def test_kotlin_top_level_extension_functions_are_qualified_by_their_receiver():
    text = src("""
        infix fun <T> Column<T>.eq(other: T): Op<Boolean> = EqOp(this, other)

        fun FunSpec.Builder.addCheck(name: String) {
            addStatement(name)
        }

        class Generator {
            private fun TypeSpec.rule(): String = name
        }
    """)
    got = table(chunk_text("Ops.kt", text, "kotlin"))
    assert (1, 1, "method", "Column.eq") in got
    assert (3, 5, "method", "FunSpec.Builder.addCheck") in got
    assert (8, 9, "method", "Generator.rule") in got  # a member extension stays the class's


def test_a_name_escaped_in_backticks_is_the_name_itself():
    """Swift, Kotlin and Scala escape a keyword used as a name in backticks; the symbol is the
    name (``Store.set``), so a symbol query for ``set`` finds it."""
    swift = src("""
        public class Store {
            public func `set`(_ key: String, value: Int) {
                print(key)
            }
        }
    """)
    kotlin = src("""
        class Matcher {
            fun `is`(other: Any): Boolean {
                return other == this
            }
        }
    """)
    scala = src("""
        object Ops {
          def `type`(x: Int): Int = {
            x + 1
          }
        }
    """)
    for name, text, language, symbol in (
        ("Store.swift", swift, "swift", "Store.set"),
        ("Matcher.kt", kotlin, "kotlin", "Matcher.is"),
        ("Ops.scala", scala, "scala", "Ops.type"),
    ):
        chunks = chunk_text(name, text, language)
        got = {(start, kind, sym) for start, _, kind, sym in table(chunks)}
        assert (2, "method", symbol) in got, (language, got)


def test_kotlin_type_aliases_and_an_annotation_after_an_expression_body():
    text = src("""
        inline fun <T> trace(tag: String, block: () -> T) =
          androidx.tracing.trace(tag, block)

        /**
         * Marks the start of a traced section.
         */
        @Suppress("NOTHING_TO_INLINE")
        inline fun beginTraceBlock(tag: String) {
          Trace.beginSection(tag)
        }

        internal typealias AddViewAction = (parent: ViewGroup, child: View) -> Unit
    """)
    chunks = chunk_text("ExpoTrace.kt", text, "kotlin")
    got = table(chunks)
    # The grammar reads the @Suppress line as an annotated expression after `= …`; it is
    # still part of the function below it, with the KDoc above it.
    assert (4, 10, "function", "beginTraceBlock") in got
    assert (12, 12, "class", "AddViewAction") in got
    assert all(c.kind != "window" for c in chunks)
    check_invariants(text, chunks, code=True)
