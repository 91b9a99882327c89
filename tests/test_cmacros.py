"""C/C++ decoration macros hidden from the parser (askrepo.cmacros), and what the chunker
makes of real-looking headers with them (real tree-sitter)."""

import pytest

from askrepo.chunker import chunk_text
from askrepo.cmacros import is_decoration, mask_macros


@pytest.mark.parametrize(
    "token, expected",
    [
        ("FMT_API", True),
        ("UV_EXTERN", True),
        ("SPDLOG_INLINE", True),
        ("FMT_CONSTEXPR20", True),
        ("GTEST_API_", True),
        ("LUAI_FUNC", True),
        ("Q_DECL_EXPORT", True),
        ("DWORD_PTR", False),  # a type: masking it would leave a declaration without one
        ("SIZE_T", False),
        ("MAX_PATH", False),
    ],
)
def test_is_decoration(token, expected):
    assert is_decoration(token) is expected


@pytest.mark.parametrize(
    "line, masked",
    [
        # a decoration before a declaration
        (
            "UV_EXTERN int uv_run(uv_loop_t*, uv_run_mode mode);",
            "          int uv_run(uv_loop_t*, uv_run_mode mode);",
        ),
        ("FMT_EXPORT template <typename T>", "           template <typename T>"),
        ('FMT_DEPRECATED_ALIAS("x") int f();', "                          int f();"),
        # ... but not a type-like macro
        ("DWORD_PTR get_handle(void) {", "DWORD_PTR get_handle(void) {"),
        # between class and its name, any ALL-CAPS token
        ("class SPDLOG_API logger : public base {", "class            logger : public base {"),
        ("struct MY_LIB_THING point {", "struct              point {"),
        (
            'class FMT_SO_VISIBILITY("default") format_error {',
            "class                              format_error {",
        ),
        # after the parameter list
        ("int f(int a) SPDLOG_NOEXCEPT {", "int f(int a)                 {"),
        ("int f(int a) MAX_SIZE;", "int f(int a) MAX_SIZE;"),
        # a wrapper around the header
        ("UV_UNUSED(static int f(const h* x)) {", "          static int f(const h* x)  {"),
        # a line that is only a macro, at the start or after a statement
        ("FMT_BEGIN_NAMESPACE", "                   "),
        ("  Q_OBJECT", "          "),
        # preprocessor lines stay
        (
            '#define FMT_API __attribute__((visibility("default")))',
            '#define FMT_API __attribute__((visibility("default")))',
        ),
    ],
)
def test_mask_one_line(line, masked):
    assert mask_macros(line) == masked


def test_mask_keeps_every_offset_and_context_rules():
    text = (
        "#define X(a) \\\n"
        "  FMT_API a\n"  # a #define continuation: untouched
        "enum e {\n"
        "  A_ONE,\n"
        "  A_TWO\n"  # last enumerator after a "," line: not a standalone macro
        "};\n"
        "int x = a +\n"
        "  B_FLAG\n"  # an expression continued on the next line: untouched
        "  ;\n"
        "G_BEGIN_DECLS\n"  # after "};"-ending line: masked
    )
    out = mask_macros(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert [len(x) for x in out.split("\n")] == [len(x) for x in text.split("\n")]
    lines = out.split("\n")
    assert lines[1] == "  FMT_API a" and lines[4] == "  A_TWO" and lines[7] == "  B_FLAG"
    assert lines[9].strip() == ""
    assert mask_macros("int lowercase_only(void);") == "int lowercase_only(void);"


CPP = """\
FMT_BEGIN_NAMESPACE
class FMT_API format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename Char> class basic_string_view {
 public:
  FMT_CONSTEXPR basic_string_view(const Char* s, size_t count) noexcept
      : data_(s), size_(count) {}
  FMT_CONSTEXPR20 auto size() const noexcept -> size_t { return size_; }
};

FMT_EXPORT template <typename... T>
FMT_INLINE auto format(format_string<T...> fmt, T&&... args) -> std::string {
  return vformat(fmt, fmt::make_format_args(args...));
}

SPDLOG_INLINE spdlog_ex::spdlog_ex(std::string msg) SPDLOG_NOEXCEPT
    : msg_(std::move(msg))
{}
template <typename T>
struct formatter<T, char, enable_if_t<is_thing<T>::value>> : formatter<int, char> {
  auto format(const T& val, format_context& ctx) const -> decltype(ctx.out()) {
    return ctx.out();
  }
};
FMT_END_NAMESPACE
"""

C = """\
typedef enum {
  UV_RUN_DEFAULT = 0,
  UV_RUN_NOWAIT
} uv_run_mode;

UV_UNUSED(static int uv__is_active(const uv_handle_t* h)) {
  return (h->flags & UV_HANDLE_ACTIVE) != 0;
}

LUA_API int (lua_gettop) (lua_State *L) {
  return cast_int(L->top.p - (L->ci->func.p + 1));
}
"""


def _defs(path, text, language):
    return {
        (c.symbol, c.kind, c.start_line, c.end_line)
        for c in chunk_text(path, text, language)
        if c.kind != "window"
    }


def test_cpp_definitions_behind_decoration_macros():
    got = _defs("format.h", CPP, "cpp")
    assert ("format_error", "class", 2, 5) in got
    assert ("basic_string_view.basic_string_view", "method", 9, 10) in got
    assert ("basic_string_view.size", "method", 11, 12) in got
    assert ("format", "function", 14, 17) in got  # with its template line
    assert ("spdlog_ex.spdlog_ex", "method", 19, 21) in got
    assert ("formatter", "class", 22, 23) in got  # a specialisation, named by its template
    assert ("formatter.format", "method", 24, 27) in got
    chunk = next(c for c in chunk_text("format.h", CPP, "cpp") if c.symbol == "format_error")
    assert chunk.text.startswith("class FMT_API format_error")  # the text is the original


def test_c_definitions_behind_wrappers_and_anonymous_typedefs():
    got = _defs("uv.h", C, "c")
    assert ("uv_run_mode", "class", 1, 4) in got
    assert ("uv__is_active", "function", 6, 8) in got
    assert ("lua_gettop", "function", 10, 12) in got


def test_long_lines_are_left_alone():
    # generated or minified code: no masking (and no regex work) on lines over MAX_LINE
    line = "UV_UNUSED(" + "(x)" * 300 + ") {"
    assert mask_macros(line) == line
    assert mask_macros("FMT_API int f(void);") != "FMT_API int f(void);"


COMMON_INL = """\
namespace spdlog {
namespace level {

#if __cplusplus >= 201703L
constexpr
#endif
    static string_view_t level_string_views[] SPDLOG_LEVEL_NAMES;

SPDLOG_INLINE const char *to_short_c_str(level_enum l) SPDLOG_NOEXCEPT
{
    return short_level_names[l];
}
} // namespace level

SPDLOG_INLINE const char *spdlog_ex::what() const SPDLOG_NOEXCEPT
{
    return msg_.c_str();
}
} // namespace spdlog
"""


def test_a_conditional_decoration_does_not_swallow_the_namespace_after_it():
    """spdlog's common-inl.h: `constexpr` alone between `#if` and `#endif` made tree-sitter read
    the rest of namespace `level` — and of `spdlog` — into the `#if`, so `spdlog_ex::what` was
    named `spdlog.level.spdlog_ex.what`."""
    got = {(s, k) for s, k, _, _ in _defs("common-inl.h", COMMON_INL, "cpp")}
    assert ("spdlog.level.to_short_c_str", "function") in got
    assert ("spdlog.spdlog_ex.what", "method") in got
    assert not any(s.startswith("spdlog.level.spdlog_ex") for s, _ in got)
