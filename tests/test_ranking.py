"""Ranking stages (askrepo.ranking), with hand-worked numbers."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from askrepo import ranking
from askrepo.datatypes import Chunk, Hit
from askrepo.declarations import is_bodyless
from askrepo.query import TRACE, parse_query
from askrepo.retriever import rrf


def hit(path, score, kind="function", text="x = compute()", symbol=None, start=1, end=5):
    return Hit(0, path, start, end, symbol, kind, "python", score, {}, None, text)


def paths(hits):
    return [h.path for h in hits]


# --- adaptive fusion ------------------------------------------------------------------------


def test_fusion_weights_by_kind():
    assert ranking.fusion_weights(parse_query("HttpClient")) == (0.5, 1.0, 1.0, 1.0, 10.0)
    how = ranking.fusion_weights(parse_query("how are options parsed?"))
    assert how == (1.0, 1.0, 1.0, 1.0, 10.0)
    assert ranking.fusion_weights(parse_query("y " * 300)) == (0.5, 1.0, 1.0, 2.0, 1.0)
    assert ranking.fusion_weights(parse_query("HttpClient"), enabled=False) == (1, 1, 1, 0, 10)


def test_a_pasted_report_names_definitions_without_pinning_them():
    # Worked RRF (k=60): the chunk dense and FTS both rank first, "fix", against the
    # definition of a name the text uses, "option" (in no other list).
    # A question: fix 1/61 + 1/61 = .0328 < option 10/61 = .1639 -> the definition leads.
    # A pasted report (dense 0.5, definitions 1): fix .5/61 + 1/61 = .0246 > option 1/61 = .0164.
    for text, first in (("where is option used?", "option"), ("y " * 300, "fix")):
        w_dense, w_fts, _, _, w_defs = ranking.fusion_weights(parse_query(text))
        fused = rrf([["fix"], ["fix"], ["option"]], weights=[w_dense, w_fts, w_defs])
        assert fused[0][0] == first


# --- path words -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("config", "config", True),
        ("configs", "config", True),
        ("dependency", "dependencies", True),
        ("configuration", "config", True),  # "config" (6 letters) is a prefix
        ("format", "form", False),  # "form" is too short for a prefix match
        ("class", "classes", True),
        ("status", "stat", False),
    ],
)
def test_words_match(a, b, same):
    assert ranking.words_match(a, b) is same


def test_path_word_factor():
    words = parse_query("model configuration and settings").words
    assert ranking.path_word_factor("pkg/config.py", words) == ranking.PATH_STEM_BOOST
    assert ranking.path_word_factor("pkg/settings/base.py", words) == ranking.PATH_DIR_BOOST
    assert ranking.path_word_factor("pkg/v1/mypy.py", words) == 1.0
    # a compound stem needs all its parts: "api router" names api_router.py, "router" does not
    stem = ranking.PATH_STEM_BOOST
    assert ranking.path_word_factor("pkg/api_router.py", ["api", "router"]) == stem
    assert ranking.path_word_factor("pkg/api_router.py", ["router"]) == 1.0
    status = parse_query("decide whether a status code counts as success").words
    assert ranking.path_word_factor("lib/HttpStatusCode.js", status) == 1.0
    assert ranking.path_word_factor("mw/rate_limiter.go", ["limit", "rate"]) == stem  # a prefix
    assert ranking.path_word_factor("pkg/index.ts", ["index"]) == 1.0  # generic stems never
    merged = parse_query("where are hits from the same file merged").words
    assert ranking.path_word_factor("askrepo/files.py", merged) == 1.0  # "file" is no domain


# --- path priors ----------------------------------------------------------------------------


def test_path_prior():
    q = parse_query("model configuration")
    assert ranking.path_prior("pkg/v1/config.py", "", q) == ranking.PRIOR_LEGACY
    assert ranking.path_prior("pkg/_compat/x.py", "", q) == ranking.PRIOR_LEGACY
    assert ranking.path_prior("examples/app.py", "", q) == ranking.PRIOR_LEGACY
    assert ranking.path_prior("pkg/__init__.py", "", q) == ranking.PRIOR_REEXPORT
    assert ranking.path_prior("types/index.d.ts", "", q) == ranking.PRIOR_REEXPORT
    # legacy dir and re-export file: both factors, 0.7 * 0.8 = 0.56
    assert ranking.path_prior("v1/__init__.py", "", q) == pytest.approx(0.56)
    assert ranking.path_prior("pkg/config.py", "", q) == 1.0
    # a query that names the directory keeps it
    assert ranking.path_prior("pkg/v1/config.py", "", parse_query("the v1 config")) == 1.0


def test_vendored_copies_and_declaration_stubs_yield():
    """Measured on full repositories (docs/eval.md, session 36): spdlog's bundled copy of fmt
    and axios's CommonJS declaration file ``index.d.cts`` held top-10 places of the library's
    own code."""
    q = parse_query("skip repeated identical messages within a time window")
    for path in (
        "include/spdlog/fmt/bundled/chrono.h",
        "src/third-party/json.hpp",
        "lib/3rdparty/zlib/inflate.c",
        "include/cereal/external/rapidxml/rapidxml.hpp",  # first for an XML question (s. 39)
        "extern/pybind11/include/pybind11/cast.h",
        "deps/hiredis/sds.c",
    ):
        assert ranking.path_prior(path, "", q) == ranking.PRIOR_LEGACY, path
    for path in ("index.d.cts", "types/index.d.mts", "pkg/_core.pyi", "types/index.d.ts"):
        assert ranking.path_prior(path, "", q) == ranking.PRIOR_REEXPORT, path
    # the code itself, and names that only contain the words, keep their place
    for path in (
        "include/spdlog/details/backtracer.h",
        "lib/bundler.js",
        "src/dts.ts",
        "src/externals.rs",
        "pkg/deps.py",
    ):
        assert ranking.path_prior(path, "", q) == 1.0, path


def test_python_package_modules_named_like_vendored_directories_keep_their_place():
    """``sympy/external/gmpy.py`` is sympy's own module (imported as ``sympy.external``):
    Python projects vendor into ``_vendor/``; in C and C++ trees, and at the top of any
    repository, ``external/`` and its kin still hold other projects' code."""
    q = parse_query("which gmpy version is used for integers")
    for path in (
        "sympy/external/gmpy.py",
        "setuptools/extern/__init__.py",  # also an __init__: the re-export prior only
        "src/pkg/deps/resolve.py",
        "lib/pkg/_bundled/core.pyi",
    ):
        want = ranking.PRIOR_REEXPORT if path.endswith(("__init__.py", ".pyi")) else 1.0
        assert ranking.path_prior(path, "", q) == want, path
    for path in (
        "external/pybind11/setup.py",  # a submodule at the top: another project
        "pip/_vendor/six.py",
        "pkg/third_party/external/x.py",  # vendored by its other directory
        "include/cereal/external/base64.hpp",
        "src/deps/lua/lua.c",
    ):
        assert ranking.path_prior(path, "", q) == ranking.PRIOR_LEGACY, path


@pytest.mark.parametrize(
    ("question", "yields", "keeps", "asking"),
    [
        pytest.param(
            "constant time software aes",
            [
                "std/crypto/benchmark.zig",
                "benches/decode.rs",
                "asv_bench/benchmarks/indexing.py",
                "pkg/bench_parser.py",
                "lib/parse-bench.js",
            ],
            ["src/verifybench.rs", "ui/workbench.py", "pkg/benchmarking_utils.py"],
            "how are the aes benchmarks run",
            id="a benchmark yields to the code it measures",
        ),
        # react-native-ble-plx's example app lives in example-expo/ (37 top-10 places of the
        # library's Android code on the whole repository, docs/eval.md session 36)
        pytest.param(
            "map a failed GATT status to an error code",
            [
                "example-expo/src/services/BLEService.ts",
                "internal/example-cli/example-cli.go",
                "ui/basic_demo/app.py",
                "samples-v2/main.kt",
            ],
            ["src/exemplary/x.ts", "pkg/sampler/draw.py", "src/demographics/x.py"],
            "how does the expo example app scan for devices",
            id="an example app named so yields",
        ),
    ],
)
def test_harnesses_and_examples_yield(question, yields, keeps, asking):
    q = parse_query(question)
    for path in yields:
        assert ranking.path_prior(path, "", q) == ranking.PRIOR_LEGACY, path
    for path in keeps:
        assert ranking.path_prior(path, "", q) == 1.0, path
    # a question about them keeps them
    assert ranking.path_prior(yields[0], "", parse_query(asking)) == 1.0


def test_the_repositorys_config_yields_to_code_for_a_pasted_report():
    report = parse_query(
        "factor conditions ignored for commands\n\nWith this tox.ini the py39 env runs the "
        "coverage command too:\n\n```ini\n[testenv]\ncommands =\n    pytest\n"
        "    py38: coverage xml\n```\n\nExpected: only py38 runs it. tox 4.0.9, Linux."
    )
    assert report.kind == TRACE
    config = hit("tox.toml", 0.030, kind="window", text="[env_run_base]\ncommands = [...]")
    config.file_class = "config"
    assert ranking.config_prior(config, report) == ranking.PRIOR_CONFIG == 0.7
    code = hit("src/tox/config/loader/ini/parse.py", 0.025)
    assert ranking.config_prior(code, report) == 1.0
    # scored: the config window 0.030 x 0.7 = 0.021 falls below the code's 0.025
    ranked = ranking.rescore([config, code], report)
    assert [(h.path, round(h.score, 4)) for h in ranked] == [
        ("src/tox/config/loader/ini/parse.py", 0.025),
        ("tox.toml", 0.021),
    ]
    # a question in words or a symbol query: config files keep their place
    assert ranking.config_prior(config, parse_query("where are commands configured")) == 1.0
    assert ranking.config_prior(config, parse_query("env_run_base")) == 1.0
    # off with the other priors
    off = ranking.rescore([config, code], report, disabled={"priors"})
    assert [h.path for h in off] == ["tox.toml", "src/tox/config/loader/ini/parse.py"]


def test_an_issue_template_yields_to_code_for_a_pasted_report():
    report = parse_query(
        "Crash when installing from a local wheel\n\n### Description\n\n"
        "pip install ./pkg.whl fails with a KeyError.\n\n### Expected behavior\n\n"
        "It installs.\n\n### pip version\n\n24.0\n\n### Python version\n\n3.12\n"
    )
    assert report.kind == TRACE
    form = ".github/ISSUE_TEMPLATE/bug-report.yml"
    assert ranking.path_prior(form, "", report) == ranking.PRIOR_FORM == 0.5
    # an example directory's template: both factors, 0.7 * 0.5 = 0.35
    assert ranking.path_prior("examples/.github/ISSUE_TEMPLATE/x.md", "", report) == pytest.approx(
        0.35
    )
    assert ranking.path_prior(".github/PULL_REQUEST_TEMPLATE.md", "", report) == 0.5
    assert ranking.path_prior(".github/bug_report.md", "", report) == 0.5
    # a workflow, a project file named like a form, and code are no forms
    for path in (".github/workflows/ci.yml", "src/report/bug_report.py", "src/pip/req_file.py"):
        assert ranking.path_prior(path, "", report) == 1.0
    # a question in words is not a filled-in form: the template keeps its place
    assert ranking.path_prior(form, "", parse_query("what does the bug report form ask for")) == 1.0
    # scored: the template 0.030 x 0.5 = 0.015 falls below the code's 0.020
    hits = [
        hit(form, 0.030, kind="window", text="name: Bug report"),
        hit("src/pip/req_file.py", 0.020),
    ]
    ranked = ranking.rescore(hits, report)
    assert [(h.path, round(h.score, 4)) for h in ranked] == [
        ("src/pip/req_file.py", 0.02),
        (form, 0.015),
    ]


def test_code_under_a_docs_directory_is_the_docs_examples():
    q = parse_query("how are command line options parsed")
    # typer / sqlmodel / FastAPI keep hundreds of example programs in docs_src/
    assert ranking.path_prior("docs_src/options/tutorial001.py", "", q) == ranking.PRIOR_DOC_CODE
    assert ranking.path_prior("docs/conf.py", "", q) == ranking.PRIOR_DOC_CODE
    assert ranking.path_prior("typer/core.py", "", q) == 1.0
    # docker/ and doctest/ are not docs; examples/ under docs/ counts once, as an example
    assert ranking.path_prior("docker/build.py", "", q) == 1.0
    assert ranking.path_prior("src/doctest/run.py", "", q) == 1.0
    assert ranking.path_prior("docs/examples/app.py", "", q) == ranking.PRIOR_LEGACY
    # a question about the docs or their examples keeps them
    about = parse_query("the tutorial example of an option with a default")
    assert ranking.path_prior("docs_src/options/tutorial001.py", "", about) == 1.0
    assert [ranking.is_doc_dir(d) for d in ("docs", "doc-examples", "_docs", "documentation")] == [
        True
    ] * 4


def test_index_files_are_demoted_only_when_they_re_export():
    q = parse_query("router")
    barrel = "export * from './router';\nexport { Route } from './route';\n"
    code = "export function route(a) {\n  return a + 1;\n}\n"
    assert ranking.path_prior("src/index.ts", barrel, q) == ranking.PRIOR_REEXPORT
    assert ranking.path_prior("src/index.ts", code, q) == 1.0


SIGNATURE_WINDOW = """    callback: Annotated[
        Callable[..., Any] | None,
        Doc(
            \"\"\"
            A function called with the value of the option,
            before the command runs.
            \"\"\"
        ),
    ] = None,
    min: Annotated[
        int | None,
        Doc(
            \"\"\"
            The smallest number allowed.
            \"\"\"
        ),
    ] = None,"""


def test_documentation_written_into_arguments():
    # 17 non-blank lines; the two Doc strings cover lines 4-7 and 13-15: 7 of 17
    assert ranking.argument_doc_share(SIGNATURE_WINDOW) == pytest.approx(7 / 17)
    # the same window cut inside the first string (it starts at "A function called"):
    # read with a string open before it, lines 1-3 and 9-11 are documentation: 6 of 13
    cut = SIGNATURE_WINDOW.split("\n", 4)[4]
    assert ranking.argument_doc_share(cut) == pytest.approx(6 / 13)
    # a docstring and a constant's value are not arguments
    func = 'def f(x):\n    """\n    Add one.\n    """\n    return x + 1'
    assert ranking.argument_doc_share(func) == 0.0
    const = 'SCRIPT = """\ncomplete -F _f prog\n"""\n'
    assert ranking.argument_doc_share(const) == 0.0
    # a deprecation notice given to a decorator is
    dep = '@deprecated(\n    """\n    Use exec() instead.\n    """\n)\ndef query(self):\n    pass'
    assert ranking.argument_doc_share(dep) == pytest.approx(3 / 7)


def test_a_window_of_signature_docs_yields_to_code():
    q = parse_query("force a number into the allowed range")
    docs = hit("typer/params.py", 0.04, text=SIGNATURE_WINDOW)
    longer = SIGNATURE_WINDOW.replace("The smallest number allowed.", "a\nb\nc\nd\ne")
    heavy = replace(docs, text=longer)
    # 7 / 17 = 0.41 < SIGNATURE_DOC_SHARE: kept; with 4 more doc lines 11 / 21 = 0.52: demoted
    assert ranking.signature_docs_prior(docs, q) == 1.0
    assert ranking.signature_docs_prior(heavy, q) == ranking.PRIOR_SIGNATURE_DOCS
    # a symbol query keeps its definition; other languages are not read
    assert ranking.signature_docs_prior(heavy, parse_query("Option")) == 1.0
    assert ranking.signature_docs_prior(replace(heavy, path="lib/params.rb"), q) == 1.0


def test_a_platform_variant_yields_to_the_default_implementation():
    # c-ares: "sleep until the next deadline" fused the Windows event loop first
    q = parse_query("how long should the event loop sleep before the next deadline")
    win = hit("src/lib/event/ares_event_win32.c", 0.0473, text="static size_t wait(void) {}")
    qnx = hit("src/lib/ares_sysconfig.c", 0.0450, symbol="ares_init_sysconfig_qnx")
    unix = hit("src/lib/ares_timeout.c", 0.0420, text="static int timeout(void) {}")
    off = ("coherence", "pathwords", "length", "header", "mentions", "classes", "trivial")
    out = ranking.rescore([win, qnx, unix], q, disabled=off)
    # 0.0473 * 0.8 = 0.03784, 0.0450 * 0.8 = 0.0360 < 0.0420
    assert [h.path for h in out] == [
        "src/lib/ares_timeout.c",
        "src/lib/event/ares_event_win32.c",
        "src/lib/ares_sysconfig.c",
    ]
    assert out[1].score == pytest.approx(0.0473 * ranking.PRIOR_PLATFORM)
    # a question that names a platform keeps the fused order
    asked = parse_query("how long does the event loop sleep on Windows")
    assert [h.path for h in ranking.rescore([win, qnx, unix], asked, off)][0].endswith("win32.c")


# --- trivial chunks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, trivial",
    [
        ("# --- redaction ---\n", True),
        ("\n\n   \n", True),
        ("import os\nfrom x import (\n    a,\n    b,\n)\n", True),
        ('import (\n\t"fmt"\n\t"os"\n)\n', True),
        ("/*\n * Copyright 2020\n * License\n */\npackage foo;\n", True),
        ("use std::io;\nuse crate::{a, b};\n", True),
        ("-- a Lua comment\nlocal json = require 'json'\n", True),
        ("}\n\n// end\n", True),
        ("# comment\nx = 1\n", False),
        ("#include <stdio.h>\n#define N 3\n", False),  # a macro is code
        ('"""Module docstring."""\n', False),  # docstrings may describe the module
        # a Rust impl block's head before its first method: the trait, the type, the bounds
        (
            "impl<P, S, Request> Service<Request> for Retry<P, S>\nwhere\n"
            "    P: Policy<Request, S::Response, S::Error> + Clone,\n{\n"
            "    type Response = S::Response;\n    type Future = ResponseFuture<P, S, Request>;\n",
            True,
        ),
        ('/// # Optional\n#[cfg(feature = "stream")]\nimpl Stream for Body {\n', True),
        ("impl Body {\n    pub fn empty() -> Body {\n        Body::new()\n", False),
        # Rust: a multi-line `use` with nested braces, crate attributes, pub(crate) modules
        (
            "#![deny(missing_docs)]\nuse std::{\n    fmt,\n    sync::{\n        Mutex,\n    },\n"
            '    time::Duration,\n};\n#[cfg(feature = "x")]\npub(crate) mod h1;\n',
            True,
        ),
        ('import (\n\t"fmt"\n)\nfunc main() {}\n', False),
        # C/C++ scaffolding: a namespace opened or closed, extern "C", forward declarations
        ("namespace spdlog {\n", True),
        ("} // namespace spdlog\n", True),
        ("namespace spdlog {\nclass logger;\nnamespace details {\n", True),
        ('#ifdef __cplusplus\nextern "C" {\n#endif\n', False),  # #ifdef is code (as #define)
        ('extern "C" {\n', True),
        ("namespace spdlog {\n\nusing default_factory = synchronous_factory;\n", False),
        ("struct point { int x; };\n", False),
    ],
)
def test_is_trivial(text, trivial):
    assert ranking.is_trivial(text) is trivial


def test_trivial_windows_rank_below_every_other_candidate():
    q = parse_query("where are secrets redacted")
    hits = [
        hit("a/secrets.py", 0.030, kind="window", text="# --- redaction ---"),
        hit("a/secrets.py", 0.020, kind="function", text="def redact(s):\n    return s"),
        hit("a/other.py", 0.010, kind="window", text="x = redact(y)"),
    ]
    out = ranking.rescore(
        hits, q, disabled=("coherence", "pathwords", "length", "header", "priors", "windows")
    )
    # trivial: min(0.030 * 0.5, 0.010 * 0.999) = 0.00999
    assert [h.kind for h in out] == ["function", "window", "window"]
    assert out[-1].score == pytest.approx(0.00999)
    assert hits[0].score == 0.030  # inputs are not mutated
    kept = ranking.rescore(hits, q, disabled=ranking.STAGES)
    assert [h.score for h in kept] == [0.030, 0.020, 0.010]


# --- coherence ------------------------------------------------------------------------------


def test_coherence_factors_hand_worked():
    # best = 0.04; a.py: others of the first a-chunk = 0.02 -> 1 + 0.15 * 0.5 = 1.075
    # second a-chunk: others = 0.04 -> 1 + 0.15 * 1 = 1.15; b.py alone -> 1.0
    hits = [hit("a.py", 0.04), hit("b.py", 0.03), hit("a.py", 0.02)]
    f = ranking.coherence_factors(hits)
    assert f == pytest.approx([1.075, 1.0, 1.15])
    # beyond the pool a hit gets the support of its file's pooled candidates
    f = ranking.coherence_factors(hits, pool=2)
    assert f == pytest.approx([1.0, 1.0, 1.15])


def test_coherence_lifts_a_file_with_several_strong_chunks():
    q = parse_query("how are options parsed")
    hits = [hit("one.py", 0.0330), hit("many.py", 0.0320), hit("many.py", 0.0300)]
    out = ranking.rescore(hits, q, disabled=("pathwords", "length", "priors", "trivial"))
    # one.py: 0.0330; many.py #1: 0.0320 * (1 + 0.15 * 0.0300/0.0330) = 0.034364
    assert paths(out)[0] == "many.py"
    assert out[0].score == pytest.approx(0.0320 * (1 + 0.15 * 0.03 / 0.033))


# --- rescoring: path words and priors together ----------------------------------------------


def test_config_file_beats_a_legacy_copy():
    # "model configuration and settings" answered from v1/mypy.py instead of config.py
    q = parse_query("model configuration and settings")
    hits = [hit("pkg/v1/mypy.py", 0.0330), hit("pkg/config.py", 0.0300)]
    out = ranking.rescore(hits, q, disabled=("coherence", "length", "trivial"))
    # v1/mypy.py: 0.0330 * 0.7 = 0.0231; config.py: 0.0300 * 1.08 = 0.0324
    assert paths(out) == ["pkg/config.py", "pkg/v1/mypy.py"]
    assert [h.score for h in out] == pytest.approx([0.0324, 0.0231])


def test_path_words_apply_to_natural_language_only():
    q = parse_query("ConfigLoader")  # a symbol query
    hits = [hit("a/loader.py", 0.02), hit("a/config.py", 0.019)]
    out = ranking.rescore(hits, q, disabled=("coherence", "length", "priors", "trivial"))
    assert paths(out) == ["a/loader.py", "a/config.py"]


def test_path_words_of_a_pasted_reports_title():
    """A report (kind trace) is matched by its title's words only: the body's many words would
    name half the files. Worked numbers: the title says "lists", so ``src/req/lists.py`` gets
    PATH_STEM_BOOST: 0.019 * 1.08 = 0.02052 overtakes ``install.py``'s 0.02, which only the
    body names."""
    body = "\n".join(f"line {i}: pip install -r requirements.txt failed again" for i in range(8))
    q = parse_query("Recursive loops in requirement file lists not detected\n\n" + body)
    assert q.kind == "trace" and "recursive" in q.title_words and "install" not in q.title_words
    off = ("coherence", "length", "priors", "trivial", "mentions")
    hits = [hit("src/cli/install.py", 0.02), hit("src/req/lists.py", 0.019)]
    out = ranking.rescore(hits, q, disabled=off)
    assert paths(out) == ["src/req/lists.py", "src/cli/install.py"]
    assert round(out[0].score, 5) == round(0.019 * ranking.PATH_STEM_BOOST, 5)
    # without a title (a bare trace) nothing moves
    bare = parse_query("Traceback (most recent call last):\n" + body)
    assert bare.title_words == ()
    assert paths(ranking.rescore(hits, bare, disabled=off)) == [
        "src/cli/install.py",
        "src/req/lists.py",
    ]
    # the stage's ablation switch turns it off
    assert paths(ranking.rescore(hits, q, disabled=(*off, "pathwords")))[0] == "src/cli/install.py"


# --- saturation -----------------------------------------------------------------------------


def test_saturate_hand_worked():
    hits = [hit("a.py", 1.0), hit("a.py", 0.9), hit("a.py", 0.85), hit("b.py", 0.7)]
    out = ranking.saturate(hits, decay=0.8)
    # a: 1.0, 0.72, 0.85 * 0.64 = 0.544; b: 0.7
    assert [(h.path, round(h.score, 3)) for h in out] == [
        ("a.py", 1.0),
        ("a.py", 0.72),
        ("b.py", 0.7),
        ("a.py", 0.544),
    ]


def test_saturate_spreads_the_head_over_files_then_follows_the_score():
    hits = [
        hit("a.py", 1.0),
        hit("a.py", 0.9),
        hit("b.py", 0.7),
        hit("a.py", 0.65),
        hit("c.py", 0.6),
        hit("a.py", 0.5),
    ]
    # decayed throughout (head None): a 1.0, 0.72, 0.65 * 0.64 = 0.416, 0.5 * 0.512 = 0.256
    everywhere = ranking.saturate(hits, decay=0.8, head=None)
    assert [(h.path, round(h.score, 3)) for h in everywhere] == [
        ("a.py", 1.0),
        ("a.py", 0.72),
        ("b.py", 0.7),
        ("c.py", 0.6),
        ("a.py", 0.416),
        ("a.py", 0.256),
    ]
    # head 2: the first two places as above, then the rest by their own scores
    spread = ranking.saturate(hits, decay=0.8, head=2)
    assert [(h.path, round(h.score, 3)) for h in spread] == [
        ("a.py", 1.0),
        ("a.py", 0.72),
        ("b.py", 0.7),
        ("a.py", 0.65),  # a.py's third chunk before c.py's only one
        ("c.py", 0.6),
        ("a.py", 0.5),
    ]
    # a tail hit never scores above the hit before it: a.py 0.9 and 0.85 below b.py's 0.6
    close = [hit("a.py", 1.0), hit("a.py", 0.9), hit("a.py", 0.85), hit("b.py", 0.6)]
    out = ranking.saturate(close, decay=0.5, head=2)  # head: a 1.0, b 0.6 (a 0.45 < 0.6)
    assert [(h.path, round(h.score, 3)) for h in out] == [
        ("a.py", 1.0),
        ("b.py", 0.6),
        ("a.py", 0.6),
        ("a.py", 0.6),
    ]
    assert [round(h.score, 3) for h in hits] == [1.0, 0.9, 0.7, 0.65, 0.6, 0.5]  # not mutated


def test_saturation_head_by_query_kind():
    assert ranking.saturation_head(parse_query("how are options parsed?")) == 5
    assert ranking.saturation_head(parse_query("y " * 300)) == 5  # a pasted report
    assert ranking.saturation_head(parse_query("HttpClient")) is None  # decays throughout
    assert ranking.saturation_head(parse_query("how are options parsed?"), enabled=False) is None
    assert "tail" in ranking.STAGES and ranking.FILE_RANKING_OFF == ("tail",)


def test_file_pool_is_the_search_a_file_ranking_aggregates():
    from askrepo.retriever import SearchOptions, file_pool

    opts = SearchOptions(k=5, expand=True, max_per_file=2, disabled=("priors", "tail"))
    pool = file_pool(opts, 20)
    assert (pool.k, pool.max_per_file, pool.expand) == (20, 0, False)
    assert pool.disabled == ("priors", "tail")  # the tail once, the caller's stages kept
    assert file_pool(SearchOptions(), 40).disabled == ("tail",)
    assert opts.k == 5 and opts.expand  # a new value; the caller's options are unchanged


# --- definitions ----------------------------------------------------------------------------


def chunk(path, symbol, kind="class", start=1, text="class X: ..."):
    return Chunk(path, start, start + 10, text, "python", kind, symbol)


def test_order_definitions_for_a_symbol_query():
    q = parse_query("Field")
    found = [
        ("legacy", chunk("pkg/v1/fields.py", "Field")),
        ("method", chunk("pkg/main.py", "Model.Field", kind="method")),
        ("func", chunk("pkg/params.py", "Field", kind="function")),
        ("cls", chunk("pkg/fields.py", "Field")),
        ("cls2", chunk("pkg/fields.py", "Field", start=40)),  # a later window of the class
    ]
    base = {"func": 0.05, "method": 0.04}  # fused dense/FTS scores
    order = ranking.order_definitions(found, q, base)
    # file stem matches first (current before v1/, first window before later one), then the
    # type-level definition, then the function over the method despite a lower fused score
    assert order == ["cls", "cls2", "legacy", "func", "method"]
    # off (-defs) or a natural-language query: by fused score only
    assert ranking.order_definitions(found, q, base, smart=False)[:2] == ["func", "method"]


def test_definition_key_prefers_the_trait_over_impl_methods():
    q = parse_query("Deserialize")
    found = [
        ("impl", chunk("src/de/impls.rs", "Foo.Deserialize", kind="method")),
        ("trait", chunk("src/de/mod.rs", "Deserialize", kind="class")),
    ]
    assert ranking.order_definitions(found, q, {"impl": 0.1}) == ["trait", "impl"]


STUB = "@overload\ndef Field(default: Any, *, primary_key: bool = False) -> Any: ..."
IMPL = "def Field(default: Any = Undefined, *, primary_key: bool = False) -> Any:\n    return info"


def test_an_overload_stub_yields_to_the_implementation():
    # sqlmodel: three @overload stubs of Field before the implementation
    found = [
        ("stub1", chunk("sqlmodel/main.py", "Field", "function", 241, STUB)),
        ("stub2", chunk("sqlmodel/main.py", "Field", "function", 289, STUB)),
        ("impl", chunk("sqlmodel/main.py", "Field", "function", 389, IMPL)),
    ]
    base = {"stub1": 0.05, "stub2": 0.04, "impl": 0.03}
    # a symbol query: the implementation first though its fused score is the lowest
    assert ranking.order_definitions(found, parse_query("Field"), base) == [
        "impl",
        "stub1",
        "stub2",
    ]
    # a question in words: a stub scores PRIOR_OVERLOAD (0.05 * 0.5 = 0.025 < 0.03)
    q = parse_query("which column options can a field set")
    assert ranking.overload_prior(found[0][1], q) == ranking.PRIOR_OVERLOAD == 0.5
    assert ranking.overload_prior(found[2][1], q) == 1.0
    assert ranking.overload_prior(found[0][1], parse_query("Field")) == 1.0
    # typing.overload spelled out counts; a name that only starts with "overload" does not
    assert ranking.is_overload_stub(chunk("a.py", "f", "function", text="@typing.overload\ndef f"))
    assert not ranking.is_overload_stub(
        chunk("a.py", "f", "function", text="@overloaded\ndef f(): ...")
    )
    assert not ranking.is_overload_stub(chunk("a.ts", "f", "function", text=STUB))


def test_definition_key_follows_the_kind_word_of_a_symbol_query():
    found = [
        ("fn", chunk("src/lib/ares_query.c", "ares_query", kind="function")),
        ("struct", chunk("src/lib/ares_private.h", "ares_query", kind="class")),
    ]
    # no kind word: the function in the file named after it comes first
    assert ranking.order_definitions(found, parse_query("ares_query"), {}) == ["fn", "struct"]
    assert parse_query("struct ares_query").kind_hint == "type"
    assert ranking.order_definitions(found, parse_query("struct ares_query"), {}) == [
        "struct",
        "fn",
    ]
    assert ranking.order_definitions(found, parse_query("fn ares_query"), {}) == ["fn", "struct"]
    assert parse_query("where is the struct ares_query used?").kind_hint is None  # not a symbol


def test_symbol_prior_demotes_tests_inside_code_files():
    q = parse_query("read a chunked request body")
    assert ranking.symbol_prior("tests.test_decoder_request", q) == ranking.PRIOR_INLINE_TEST
    assert ranking.symbol_prior("test_parse", q) == ranking.PRIOR_INLINE_TEST
    assert ranking.symbol_prior("TestClient.get", q) == 1.0  # a library class named Test*
    assert ranking.symbol_prior("Decoder.decode", q) == 1.0
    assert ranking.symbol_prior("attestation", q) == 1.0 and ranking.symbol_prior(None, q) == 1.0
    about = parse_query("which tests cover the chunked decoder?")
    assert about.about_tests and ranking.symbol_prior("tests.test_decoder", about) == 1.0


def test_symbol_names_and_case():
    assert ranking.symbol_names(parse_query("logger")) == ["logger", "Logger"]
    assert ranking.symbol_names(parse_query("Foo::parse")) == ["Foo.parse", "Foo.Parse"]
    assert ranking.symbol_names(parse_query("Field"), smart=False) == []  # not code-looking
    q = parse_query("how does `HttpClient` retry?")
    assert ranking.symbol_names(q) == ["HttpClient"]
    found = [("cls", chunk("src/Logger.php", "Logger")), ("fn", chunk("src/x.php", "logger"))]
    # the exact spelling first, even though the class's file is named after it
    assert ranking.order_definitions(found, parse_query("logger"), {}) == ["fn", "cls"]


def test_pin_first_hand_worked():
    hits = [
        hit("a.py", 0.05, start=1, end=9),
        hit("b.py", 0.04, start=10, end=30),
        hit("c.py", 0.03, start=1, end=5),
        hit("b.py", 0.02, start=40, end=50),
    ]
    # definitions: b.py line 12 (inside the second hit), c.py line 3, b.py line 45, d.py
    out = ranking.pin_first(hits, [("b.py", 12), ("c.py", 3), ("b.py", 45), ("d.py", 1)], 2)
    assert [(h.path, h.start_line) for h in out] == [
        ("b.py", 10),
        ("c.py", 1),
        ("a.py", 1),
        ("b.py", 40),
    ]
    # pinned scores sit just above the best one: 0.05 + 2 * 5e-5, 0.05 + 5e-5
    assert [h.score for h in out[:3]] == pytest.approx([0.0501, 0.05005, 0.05])
    assert ranking.pin_first(hits, [("zzz.py", 1)]) == hits


# --- length ---------------------------------------------------------------------------------


def test_length_factor_hand_worked():
    # (lines / 20) ** 0.1, lines clamped to [1, 200]
    assert ranking.length_factor(20) == pytest.approx(1.0)
    assert ranking.length_factor(5) == pytest.approx(0.25**0.1)  # 0.8706
    assert ranking.length_factor(100) == pytest.approx(5**0.1)  # 1.1746
    assert ranking.length_factor(200) == pytest.approx(10**0.1)  # 1.2589
    assert ranking.length_factor(5000) == ranking.length_factor(200)
    assert ranking.length_factor(0) == ranking.length_factor(1) == pytest.approx(0.05**0.1)


def code(n, doc=0):
    """A chunk text of ``doc`` comment lines, a blank line and ``n`` lines of code."""
    return "\n".join(["// says what it does"] * doc + [""] + ["x = step()"] * n)


def test_code_lines_skip_blanks_comments_and_docstrings():
    assert ranking.code_lines(code(3, doc=10)) == 3
    py = 'def f(x):\n    """Doc.\n\n    More doc.\n    """\n    # note\n    return x\n'
    assert ranking.code_lines(py) == 2
    assert ranking.code_lines('def g():\n    """One line."""\n    pass') == 2
    assert ranking.code_lines("") == 0


def test_code_lines_end_a_docstring_that_closes_after_words():
    # PEP 257 style: the closing quotes end the last line of words. The docstring ends there;
    # the three statements after it are code (the old count was 1: everything after the
    # opening quotes was taken for docstring).
    py = 'def f(x):\n    """Doc line one\n    and two."""\n    a = 1\n    b = 2\n    return a + b\n'
    assert ranking.code_lines(py) == 4
    assert ranking.code_lines("def g():\n    r'''Raw doc\n    ends.'''\n    pass") == 2
    # the other quote style inside does not close it
    assert ranking.code_lines('def h():\n    """It says \'\'\'\n    then ends."""\n    pass') == 2


# --- neighbours: after a symbol query's definition, its file and its callees ----------------


def test_neighbours_hand_worked():
    first = hit("send.c", 1.0, symbol="send")
    first.calls = ["send_nolock", "send"]  # a recursive call is not a neighbour
    hits = [
        first,
        hit("other.c", 0.30, symbol="query"),
        hit("lock.c", 0.25, symbol="send_nolock"),
        hit("send.c", 0.18, symbol="apply", start=40, end=60),
        hit("x.c", 0.10, symbol=None),
    ]
    out = ranking.neighbours(hits, 1, factor=1.5)
    # send_nolock 0.25 x 1.5 = 0.375 and apply 0.18 x 1.5 = 0.27 (same file) around query 0.30
    assert [(h.symbol, round(h.score, 3)) for h in out] == [
        ("send", 1.0),
        ("send_nolock", 0.375),
        ("query", 0.3),
        ("apply", 0.27),
        (None, 0.1),
    ]
    # a boosted tail never passes the pinned head: 0.9 x 2 = 1.8 is scaled to 0.999
    out = ranking.neighbours([first, hit("lock.c", 0.9, symbol="send_nolock")], 1, factor=2.0)
    assert [round(h.score, 4) for h in out] == [1.0, 0.999]
    # two pinned: both keep their places, only the first one's neighbours rise
    second = hit("b.c", 0.99, symbol="send")
    out = ranking.neighbours([first, second, *hits[1:3]], 2, factor=1.5)
    assert [h.symbol for h in out] == ["send", "send", "send_nolock", "query"]
    # nothing pinned, or the factor 1: unchanged
    assert ranking.neighbours(hits, 0, factor=1.5) == hits
    assert ranking.neighbours(hits, 1, factor=1.0) == hits


# --- members: after a class a symbol query pinned, its largest members ----------------------


def test_member_lead_hand_worked():
    basic = hit("basic.rb", 1.0, kind="class", symbol="Shell.Basic", start=3, end=7)

    def member(symbol, code, start, kind="method"):
        body = "\n".join(f"  x{i} = {i}" for i in range(code - 2))
        text = f"# a comment\ndef {symbol.split('.')[-1]}\n{body}\nend" if code > 1 else "x"
        return hit("basic.rb", 0.0, kind=kind, text=text, symbol=symbol, start=start, end=start)

    quiet = member("Shell.Basic.quiet?", 1, 410)  # 1 line of code
    ask = member("Shell.Basic.ask", 12, 48)  # def + 10 + end = 12 (the comment does not count)
    table = member("Shell.Basic.print_table", 30, 176)
    say = member("Shell.Basic.say", 12, 89)  # ties with ask: file order, ask (48) first
    nested = member("Shell.Basic.Inner.run", 40, 500)  # a member of Inner, not of Basic
    other = member("Shell.Color.set_color", 50, 600)  # another class
    window = member("Shell.Basic", 60, 700, kind="window")  # not a function or method
    chunks = [quiet, ask, table, say, nested, other, window]
    assert [ranking.code_lines(c.text) for c in (quiet, ask, table)] == [1, 12, 30]
    lead = ranking.member_lead(basic, chunks, k=3)
    assert [c.symbol for c in lead] == [
        "Shell.Basic.print_table",
        "Shell.Basic.ask",
        "Shell.Basic.say",
    ]
    assert [c.symbol for c in ranking.member_lead(basic, chunks, k=9)][-1] == "Shell.Basic.quiet?"
    # one name, several chunks: a 2-line @overload stub (line 20), then a long method cut in
    # two parts of 40 and 50 code lines (30, 70). It is one member of size 50, shown by its
    # first chunk of at least 25 lines (30), and it leads; print_table (30) comes next
    stub = member("Shell.Basic.invoke", 2, 20)
    part1, part2 = member("Shell.Basic.invoke", 40, 30), member("Shell.Basic.invoke", 50, 70)
    lead = ranking.member_lead(basic, [*chunks, stub, part1, part2], k=2)
    assert [(c.symbol, c.start_line) for c in lead] == [
        ("Shell.Basic.invoke", 30),
        ("Shell.Basic.print_table", 176),
    ]
    # a function is not a class; k = 0 turns it off
    assert ranking.member_lead(hit("a.py", 1.0, symbol="Shell.Basic"), chunks, k=3) == []
    assert ranking.member_lead(basic, chunks, k=0) == []


def test_member_lead_puts_the_public_api_before_private_helpers():
    # HeaderMap (http): the three largest members are private helpers (no `pub`); what a
    # reader of the type wants next is its API, so the public ones lead whatever their size
    head = hit("map.rs", 1.0, kind="class", symbol="HeaderMap", text="pub struct HeaderMap<T> {}")

    def member(name, code, start, vis):
        body = "\n".join(f"        let x{i} = {i};" for i in range(code - 2))
        sig = f"    {vis}fn {name}(&self) {{"
        text = f"    /// {name} the map.\n    #[inline]\n{sig}\n{body}\n    }}"
        return hit("map.rs", 0.0, kind="method", text=text, symbol=f"HeaderMap.{name}", start=start)

    helper = member("remove_found", 40, 1371, "")  # private, largest
    entry2 = member("entry2", 30, 1067, "")
    insert = member("insert", 20, 1104, "pub ")
    get = member("get", 10, 655, "pub(crate) ")  # visible outside its module: public here
    fmt = member("fmt", 50, 1900, "")  # a trait impl: no `pub`, after the API too
    chunks = [helper, entry2, insert, get, fmt]
    # code lines: `#[inline]`, `fn`, the body and `}` (the doc comment does not count)
    assert [ranking.code_lines(c.text) for c in (helper, insert)] == [41, 21]
    lead = ranking.member_lead(head, chunks, k=4)
    assert [c.symbol for c in lead] == [
        "HeaderMap.insert",
        "HeaderMap.get",
        "HeaderMap.fmt",
        "HeaderMap.remove_found",
    ]
    # a trait's methods are its API without `pub`: size alone orders them
    trait = hit("map.rs", 1.0, kind="class", symbol="HeaderMap", text="pub trait HeaderMap {")
    assert [c.symbol for c in ranking.member_lead(trait, chunks, k=2)] == [
        "HeaderMap.fmt",
        "HeaderMap.remove_found",
    ]


def test_is_private_by_language():
    def m(path, symbol, text="x"):
        return hit(path, 0.0, kind="method", symbol=symbol, text=text)

    cases = [
        (m("a.py", "Client._send"), True),
        (m("a.py", "Client.__init__"), False),  # a dunder is protocol, not a helper
        (m("a.py", "Client.send"), False),
        (m("a.go", "DefaultBinder.bindData"), True),
        (m("a.go", "DefaultBinder.Bind"), False),
        (m("a.rs", "Map.insert", "/// inserts `insert`\npub fn insert(&mut self) {"), False),
        (m("a.rs", "Map.entry2", "/// `pub` helper\n#[inline]\nfn entry2(&mut self) {"), True),
        (m("A.java", "A.run", "@Override\nprivate void run() {"), True),
        (m("A.java", "A.go", "public void go() {"), False),
        (m("A.kt", "A.own", "internal fun own() {"), False),
        (m("A.swift", "A.hide", "fileprivate func hide() {"), True),
        (m("a.ts", "A.#secret", "#secret() {"), True),
        (m("a.ts", "A.load", "private load(): void {"), True),
        (m("a.js", "A._cache", "_cache() {"), True),
        (m("a.rb", "A.helper", "def helper"), False),  # Ruby's `private` sections: unknown
        (m("a.rs", "Map.fmt", "// no declaration here"), False),  # name not found: public
    ]
    assert [ranking.is_private(c) for c, _ in cases] == [want for _, want in cases]


def test_follow_first_hand_worked():
    a, b, c = hit("a.py", 1.0), hit("b.py", 0.8), hit("c.py", 0.5)
    out = ranking.follow_first([a, b, c], [c])
    # c moves up under a at 1.0 x (1 - 0.001) = 0.999; b (0.8 < 0.999) keeps its score
    assert [(h.path, round(h.score, 6)) for h in out] == [
        ("a.py", 1.0),
        ("c.py", 0.999),
        ("b.py", 0.8),
    ]
    # a lead hit that was not among the hits (score 0) enters at 0.999 and 0.998; the rest,
    # b 0.9995 >= 0.998, is scaled to 0.998 x 0.999 = 0.997002: scores stay monotone
    x, y = hit("x.py", 0.0), hit("y.py", 0.0)
    out = ranking.follow_first([a, hit("b.py", 0.9995)], [x, y])
    assert [(h.path, round(h.score, 6)) for h in out] == [
        ("a.py", 1.0),
        ("x.py", 0.999),
        ("y.py", 0.998),
        ("b.py", 0.997002),
    ]
    assert ranking.follow_first([a, b], []) == [a, b]
    assert ranking.follow_first([], [x]) == []


# --- delegate: a thin wrapper's callee ranks just above it ----------------------------------

LAUNCH = """def launch(url, wait=False):
    \"\"\"Open a URL in the default application.\"\"\"
    from ._impl import open_url

    return open_url(url, wait=wait)"""
OPEN_URL = """def open_url(url, wait=False):
    import subprocess

    if sys.platform == "darwin":
        args = ["open", url]
    else:
        args = ["xdg-open", url]
    return subprocess.call(args)"""


@pytest.mark.parametrize(
    "text, symbol, lines",
    [
        (LAUNCH, "launch", 1),  # docstring and local import do not count
        (OPEN_URL, "open_url", 5),
        ("def f(x): return g(x)", "f", 0),  # one line: no body
        ("def f(\n    a: int,\n    b: int,\n) -> int:\n    return g(a, b)", "f", 1),
        (
            "func Proxy(b Balancer) MiddlewareFunc {\n\tc := Default\n\treturn With(c)\n}",
            "Proxy",
            2,
        ),
        ("def strip(s)\n  _strip(s)\nend", "strip", 1),  # Ruby: no `:` or `{`, `end` skipped
        ("@cache\ndef f():\n    # why\n    return g()", "f", 1),
    ],
)
def test_body_lines_count_the_statements_after_the_signature(text, symbol, lines):
    assert ranking.body_lines(text, symbol) == lines


def wrapper(path, score, symbol, text, calls=(), file_class="code"):
    h = hit(path, score, text=text, symbol=symbol)
    return replace(h, calls=list(calls), file_class=file_class)


def test_delegate_moves_the_callee_just_above_the_thin_wrapper():
    # launch (body 1 line) calls open_url (body 5 lines) ranked 3rd: open_url moves to 1st
    # with launch's score, launch and the rest keep their order.
    hits = [
        wrapper("termui.py", 0.9, "launch", LAUNCH, calls=["open_url"]),
        hit("utils.py", 0.8, symbol="get_app_dir"),
        wrapper("_impl.py", 0.7, "open_url", OPEN_URL, calls=["call"]),
    ]
    out = ranking.delegate(hits)
    assert [h.symbol for h in out] == ["open_url", "launch", "get_app_dir"]
    assert [h.score for h in out] == [0.9, 0.9, 0.8]
    assert out[0].sources == {"delegate": 3}  # where it came from, for --explain
    assert [h.symbol for h in hits] == ["launch", "get_app_dir", "open_url"]  # input untouched


def test_delegate_leaves_a_wrapper_alone_when_the_callee_is_no_longer_or_not_provably_it():
    short = "def open_url(url):\n    return run(url)"
    cases = [
        # the callee's body is not longer than the wrapper's
        [
            wrapper("a.py", 0.9, "launch", LAUNCH, ["open_url"]),
            wrapper("b.py", 0.5, "open_url", short),
        ],
        # a test calling the code under test is not a wrapper of it
        [
            wrapper("test_a.py", 0.9, "test_launch", LAUNCH, ["open_url"], file_class="test"),
            wrapper("b.py", 0.5, "open_url", OPEN_URL),
        ],
        # two candidates named open_url in other files: the call does not say which
        [
            wrapper("a.py", 0.9, "launch", LAUNCH, ["open_url"]),
            wrapper("b.py", 0.5, "open_url", OPEN_URL),
            wrapper("c.py", 0.4, "B.open_url", OPEN_URL),
        ],
        # the callee is below the pool
        [wrapper("a.py", 0.9, "launch", LAUNCH, ["open_url"])]
        + [hit(f"f{i}.py", 0.8 - i / 100) for i in range(ranking.DELEGATE_POOL - 1)]
        + [wrapper("b.py", 0.1, "open_url", OPEN_URL)],
    ]
    for hits in cases:
        assert ranking.delegate(hits) == hits


def test_delegate_leaves_a_wrapper_named_by_a_callers_question_in_place():
    # "what calls launch?": launch is in ``named`` (callers_subject), so open_url stays 3rd;
    # with other names it moves up as above
    hits = [
        wrapper("termui.py", 0.9, "launch", LAUNCH, calls=["open_url"]),
        hit("utils.py", 0.8, symbol="get_app_dir"),
        wrapper("_impl.py", 0.7, "open_url", OPEN_URL, calls=["call"]),
    ]
    q = parse_query("what calls launch?")
    assert q.asks_callers
    assert ranking.delegate(hits, named=ranking.callers_subject(q)) == hits
    assert ranking.delegate(hits, named={"Other.launch"})[0].symbol == "open_url"


def test_delegate_resolves_a_repeated_name_inside_the_wrappers_file():
    hits = [
        wrapper("a.py", 0.9, "launch", LAUNCH, ["open_url"]),
        wrapper("b.py", 0.6, "open_url", OPEN_URL),
        wrapper("a.py", 0.5, "open_url", OPEN_URL),
    ]
    assert [h.path for h in ranking.delegate(hits)] == ["a.py", "a.py", "b.py"]


def test_length_lifts_the_implementation_over_a_short_namesake():
    # "format a record as a single line": a documented 5-line setter fused first, the
    # 52-line method next
    q = parse_query("format a record as a single line of text")
    short = hit("LineFormatter.php", 0.0330, text=code(5, doc=12), start=10, end=27)
    long = hit("LineFormatter.php", 0.0300, text=code(52), start=79, end=131)
    off = ("coherence", "pathwords", "priors", "trivial")
    out = ranking.rescore([short, long], q, disabled=off)
    # short: 0.0330 * (5/20)**0.1 = 0.028730; long: 0.0300 * (52/20)**0.1 = 0.031003
    assert [h.start_line for h in out] == [79, 10]
    assert out[0].score == pytest.approx(0.0300 * 2.6**0.1)
    assert out[1].score == pytest.approx(0.0330 * 0.25**0.1)
    # switched off, the fused order stands
    off_too = off + ("length",)
    assert [h.start_line for h in ranking.rescore([short, long], q, off_too)] == [10, 79]
    # a symbol query's definition is pinned first later (``pin_first``); among the rest, the
    # class's substantial method before its one-line getter, by the same numbers
    sym = parse_query("LineFormatter")
    assert [h.start_line for h in ranking.rescore([short, long], sym, off)] == [79, 10]
    report = parse_query("Traceback (most recent call last):\n" + "  line\n" * 8)
    assert [h.start_line for h in ranking.rescore([short, long], report, off)] == [10, 79]


# --- infile ---------------------------------------------------------------------------------


def test_best_files_hand_worked():
    order = ["a.py", "a.py", "b.py", "c.py", "b.py"]
    assert ranking.best_files(order) == ["a.py"]  # INFILE_FILES = 1
    assert ranking.best_files(order, 2) == ["a.py", "b.py"]
    assert ranking.best_files(order, 9) == ["a.py", "b.py", "c.py"]
    assert ranking.best_files(order, 0) == [] and ranking.best_files([], 3) == []


def test_infile_and_length_are_ablatable_stages():
    from askrepo.evaluate import parse_config

    assert {"infile", "length"} <= set(ranking.STAGES)
    assert parse_config("hybrid+scope-infile").disabled == ("infile",)
    assert set(parse_config("hybrid+scope-ranking").disabled) >= {"infile", "length"}


def test_length_never_demotes_a_definition_the_question_names():
    assert ranking.names_definition(["session", "expire"], "SessionStore.expire")
    assert ranking.names_definition(["expired"], "Store::expire")  # words_match: expire(d)
    assert not ranking.names_definition(["session", "expire"], "SessionStore.get")
    assert not ranking.names_definition(["expire"], None)
    assert ranking.length_factor(3, named=True) == 1.0  # would be 0.15**0.1 = 0.827
    assert ranking.length_factor(100, named=True) == pytest.approx(5**0.1)  # never lowered
    q = parse_query("how does a user session get logged out or expire?")
    short = hit("auth.py", 0.0300, text=code(3), symbol="SessionStore.expire", start=40, end=43)
    other = hit("auth.py", 0.0290, text=code(11), symbol="SessionStore.get", start=20, end=31)
    off = ("coherence", "pathwords", "priors", "trivial")
    out = ranking.rescore([short, other], q, disabled=off)
    # expire: 0.0300 * 1.0; get (11 lines): 0.0290 * 0.55**0.1 = 0.027327
    assert [h.symbol for h in out] == ["SessionStore.expire", "SessionStore.get"]
    assert out[1].score == pytest.approx(0.0290 * 0.55**0.1)


def test_names_definition_stems_the_question_words():
    assert ranking.names_definition(["passwords", "hashed", "storing"], "hash_password")
    assert ranking.names_definition(["parses", "options"], "OptionParser.parse")
    assert not ranking.names_definition(["passwords", "stored"], "hash_password")  # no "hash"
    assert not ranking.names_definition(["format"], "form")  # form !~ format


def test_length_never_lifts_a_line_window():
    # a 60-line module header (docstring + constants) vs a 12-line function
    q = parse_query("how is the language of a file detected")
    header = hit("ingest.py", 0.0300, kind="window", text=code(60), start=1, end=61)
    func = hit("ingest.py", 0.0290, text=code(12), symbol="detect_language", start=90, end=102)
    off = ("coherence", "pathwords", "header", "priors", "trivial", "windows")
    out = ranking.rescore([header, func], q, disabled=off)
    # header: 0.0300 * min(1, 3**0.1) = 0.0300; detect_language named -> 0.0290 * 1.0
    assert [h.start_line for h in out] == [1, 90]
    assert [h.score for h in out] == pytest.approx([0.0300, 0.0290])
    short = hit("ingest.py", 0.0300, kind="window", text=code(5), start=1, end=6)
    assert ranking.rescore([short], q, off)[0].score == pytest.approx(0.0300 * 0.25**0.1)


# --- header ---------------------------------------------------------------------------------


def test_header_window_yields_to_the_code_for_a_natural_language_question():
    q = parse_query("how are the dense and full-text rankings combined")
    header = hit("multirepo.py", 0.0378, kind="window", text=code(20), start=1, end=33)
    func = hit("retriever.py", 0.0351, text=code(20), symbol="rrf", start=41, end=62)
    later = hit("retriever.py", 0.0340, kind="window", text=code(20), start=40, end=60)
    off = ("coherence", "pathwords", "length", "priors", "trivial", "windows")
    out = ranking.rescore([header, func, later], q, disabled=off)
    # header: 0.0378 * 0.8 = 0.03024 < rrf 0.0351; a window further down the file is kept
    assert [(h.path, h.start_line) for h in out] == [
        ("retriever.py", 41),
        ("retriever.py", 40),
        ("multirepo.py", 1),
    ]
    assert out[2].score == pytest.approx(0.0378 * 0.8)
    assert ranking.is_header(header) and not ranking.is_header(later)
    assert not ranking.is_header(hit("a.py", 1.0, start=1, end=9))  # a definition at line 1
    config = replace(hit("app.toml", 1.0, kind="window", start=1, end=9), file_class="config")
    assert not ranking.is_header(config)  # a config file's first window is its content
    # switched off, or for a symbol query, the header keeps its place
    assert ranking.rescore([header, func], q, off + ("header",))[0].path == "multirepo.py"
    sym = parse_query("MultiRepo")
    assert ranking.rescore([header, func], sym, off)[0].path == "multirepo.py"


# --- qualified names no symbol spells out (package / module / crate / namespace paths) ---------


def test_project_words_drop_versions_and_split_names():
    assert ranking.project_words("click-8.4.1") == ("click",)
    assert ranking.project_words("zig-crypto") == ("zig", "crypto")
    assert ranking.project_words("echo") == ("echo",)


@pytest.mark.parametrize(
    ("qualifiers", "path", "symbol", "project", "count"),
    [
        # Python module = file: rich.console.Console
        (["rich", "console"], "rich/console.py", "Console", (), 2),
        # Java package = directories: com.getcapacitor.Bridge
        (["com", "getcapacitor"], "src/main/java/com/getcapacitor/Bridge.java", "Bridge", (), 2),
        # Go package at the repository root: echo.Context
        (["echo"], "context.go", "Context", ("echo",), 1),
        # Rust crate + modules: the server's Builder shows 3, the client's 2
        (["hyper", "server", "conn"], "src/server/conn.rs", "Builder", ("hyper",), 3),
        (["hyper", "server", "conn"], "src/client/conn.rs", "Builder", ("hyper",), 2),
        # C++ inline namespace in the symbol: fmt::format is fmt.v10.format
        (["fmt"], "include/fmt/format.h", "fmt.v10.format", (), 1),
        # case and separators do not matter: Monolog\Handler\StreamHandler
        (["monolog", "handler"], "src/Monolog/Handler/StreamHandler.php", "StreamHandler", (), 2),
        # a receiver is not a location
        (["self"], "shop/cart.py", "Cart.total", ("shop",), 0),
    ],
)
def test_qualifier_matches(qualifiers, path, symbol, project, count):
    assert ranking.qualifier_matches(qualifiers, path, symbol, project) == count


def _def(path, symbol):
    return SimpleNamespace(path=path, symbol=symbol)


def test_named_definitions_by_symbol_suffix_last_part_and_qualifiers():
    defs = [
        _def("src/server/conn.rs", "Builder"),
        _def("src/client/conn.rs", "Builder"),
        _def("src/server/conn.rs", "Builder.http2_only"),
        _def("src/common/exec.rs", "conn.Exec.execute"),
        _def("src/common/other.rs", "Unrelated"),
    ]
    # "Exec.execute" ends conn.Exec.execute; "http2_only" is a last part; hyper.server.conn.Builder
    # is spelled by no symbol: the server's Builder shows 3 of its 3 qualifiers, the client's 2
    found, shown = ranking.named_definitions(
        defs, ["hyper.server.conn.Builder", "Exec.execute", "http2_only"], ("hyper",)
    )
    assert [(c.path, c.symbol) for c in found] == [
        ("src/server/conn.rs", "Builder.http2_only"),
        ("src/common/exec.rs", "conn.Exec.execute"),
        ("src/server/conn.rs", "Builder"),
    ]
    assert shown == [("Builder", 3, 3)]
    # the qualifier search is only for the names given in ``qualified``
    found, shown = ranking.named_definitions(defs, ["hyper.server.conn.Builder"], ("hyper",), set())
    assert found == [] and shown == []
    # without the project word: the directory and the file stem still tell the two apart
    found, shown = ranking.named_definitions(defs, ["server.conn.Builder"], ())
    assert [c.path for c in found] == ["src/server/conn.rs"] and shown == [("Builder", 2, 2)]


# --- names given a value: constants, variables, type aliases, macros ---------------------------


@pytest.mark.parametrize(
    ("text", "name", "found"),
    [
        ("export const EMPTY = new Observable<never>(noop);", "EMPTY", [(0, 0)]),
        ("pub(crate) type RequestHead = MessageHead<RequestLine>;", "RequestHead", [(0, 0)]),
        ("using filename_t = std::string;", "filename_t", [(0, 0)]),
        ("#  define LUA_MAXINTEGER\t\tINT_MAX", "LUA_MAXINTEGER", [(0, 0)]),
        ("typedef struct lua_State lua_State;", "lua_State", [(0, 0)]),
        ("local _DEBUG = rawget(_G,'_DEBUG')", "_DEBUG", [(0, 0)]),
        ("class A {\n  public static EMPTY = (() => 1)();\n}", "EMPTY", [(1, 2)]),
        # aliases and imports of a name defined elsewhere, comparisons and uses: not values
        ("const Sha256 = std.crypto.hash.sha2.Sha256;", "Sha256", []),
        ("const EMPTY = require('./empty');", "EMPTY", []),
        ("if (x == EMPTY) return;", "EMPTY", []),
        ("return EMPTY_SUBSCRIPTION;", "EMPTY", []),
    ],
)
def test_defining_lines(text, name, found):
    assert ranking.defining_lines(text, name) == found


def test_value_definition_prefers_a_top_level_one():
    from types import SimpleNamespace as C

    nested = C(path="src/Subscription.ts", start_line=10, text="class S {\n  static EMPTY = 1;\n}")
    top = C(path="src/empty.ts", start_line=60, text="import x;\nexport const EMPTY = 2;")
    use = C(path="src/use.ts", start_line=1, text="f(EMPTY);")
    assert ranking.value_definition([use, nested, top], "EMPTY") == ("src/empty.ts", 61)
    assert ranking.value_definition([use, nested], "rxjs.EMPTY") == ("src/Subscription.ts", 11)
    assert ranking.value_definition([use], "EMPTY") is None


def _h(path, symbol, file_class):
    return replace(hit(path, 1.0, symbol=symbol), file_class=file_class)


def test_mention_factors_hold_tests_back_when_only_mentioned():
    hits = [
        _h("tests/test_query.py", "test_detect_scope", "test"),
        _h("docs/eval.md", "Scope", "doc"),
        _h("askrepo/query.py", "detect_scope", "code"),
    ]
    q = parse_query("how does search decide that a question is about tests or documentation?")
    assert ranking.mention_factors(hits, q) == [0.5, 0.5, 1.0]
    # asked for: untouched
    assert (
        ranking.mention_factors(hits, parse_query("which tests check detect_scope?")) == [1.0] * 3
    )
    # the words around the mention spell a candidate's name: the mention names code
    sched = [_h("src/testing/TestScheduler.ts", "TestScheduler.run", "test"), hits[2]]
    q = parse_query("how does the virtual time test scheduler compare results?")
    assert ranking.mention_factors(sched, q) == [1.0, 1.0]
    # ... but a test case named after the phrase (test_scheduler) does not count as that name
    case = [_h("tests/test_x.py", "test_scheduler", "test"), hits[2]]
    assert ranking.mention_factors(case, q) == [0.5, 1.0]


def test_rescore_mentions_stage_switch():
    hits = [
        _h("tests/test_query.py", "test_detect_scope", "test"),
        replace(_h("askrepo/query.py", "detect_scope", "code"), score=0.8),
    ]
    q = parse_query("how is a question about tests detected?")
    assert [h.path for h in ranking.rescore(hits, q, disabled=STAGES_BUT("mentions"))] == [
        "askrepo/query.py",
        "tests/test_query.py",
    ]
    assert ranking.rescore(hits, q, disabled=ranking.STAGES)[0].path == "tests/test_query.py"


def STAGES_BUT(stage):  # noqa: N802 - reads like a constant at the call site
    return tuple(s for s in ranking.STAGES if s != stage)


@pytest.mark.parametrize(
    ("name", "variants"),
    [
        ("merge_config", ["merge_config", "mergeConfig", "MergeConfig"]),
        ("parseHeaders", ["parse_headers", "parseHeaders", "ParseHeaders"]),
        ("HashPassword", ["hash_password", "hashPassword", "HashPassword"]),
        ("Field", []),  # one word: nothing to restyle
    ],
)
def test_style_variants(name, variants):
    assert ranking.style_variants(name) == variants


def test_value_definition_without_nested_lines():
    from types import SimpleNamespace as C

    table = C(path="pl/import_into.lua", start_line=1, text="local t = {\n  List = 'pl.List',\n}")
    alias = C(path="pl/List.lua", start_line=1, text="local List = utils.stdmt.List")
    required = C(path="pl/MultiMap.lua", start_line=1, text="local List = require 'pl.List'")
    assert ranking.value_definition([table, alias, required], "List") == ("pl/import_into.lua", 2)
    assert ranking.value_definition([table, alias, required], "List", nested=False) is None


# --- evidence -------------------------------------------------------------------------------

REDACT_PEM = (
    'def _redact_pem(text):\n    """Replace private key blocks."""\n    return PEM.sub(mark, text)'
)
REDACT = (
    'def redact(text):\n    """Redact secrets in text before indexing."""\n'
    "    return _redact_pem(scan(text))"
)


def test_evidence_lead_lets_the_card_pick_the_chunk_within_the_first_file():
    # "How are secrets redacted before indexing?": terms secret, redact, index. Over the two
    # secrets.py candidates, IDF = ln(1 + 2/df): redact 0.693 (both), secret and index 1.099
    # (only redact()); total 2.890. Card score = 1.5·name + head + body + 1/rank:
    #   _redact_pem (rank 1): 1.5·0.240 + 0.240 + 0.240 + 1   = 1.84
    #   redact      (rank 2): 1.5·0.240 + 1.0   + 1.0   + 1/2 = 2.86  -> leads
    q = parse_query("How are secrets redacted before indexing?")
    hits = [
        hit("secrets.py", 0.9, symbol="_redact_pem", text=REDACT_PEM),
        hit("utils.py", 0.8, symbol="helper", text="def helper():\n    return 1"),
        hit("secrets.py", 0.7, symbol="redact", text=REDACT, start=20, end=23),
    ]
    out = ranking.evidence_lead(hits, q, "proj")
    assert [h.symbol for h in out] == ["redact", "_redact_pem", "helper"]
    assert [h.score for h in out] == [0.9, 0.9, 0.8]
    assert out[0].sources == {"evidence": 3}  # where it came from, for --explain
    assert [h.symbol for h in hits] == ["_redact_pem", "helper", "redact"]  # input untouched


def test_evidence_lead_never_changes_the_first_file_nor_a_symbol_query():
    q = parse_query("How are secrets redacted before indexing?")
    other_file = [
        hit("secrets.py", 0.9, symbol="_redact_pem", text=REDACT_PEM),
        hit("scrub.py", 0.7, symbol="redact", text=REDACT),  # better words, another file
    ]
    assert ranking.evidence_lead(other_file, q) == other_file
    same = [
        hit("secrets.py", 0.9, symbol="_redact_pem", text=REDACT_PEM),
        hit("secrets.py", 0.7, symbol="redact", text=REDACT, start=20, end=23),
    ]
    assert ranking.evidence_lead(same, parse_query("_redact_pem")) == same
    assert ranking.evidence_lead(same, parse_query("where is _redact_pem defined?")) == same
    # beyond the pool the card does not look
    far = [same[0]] + [hit(f"f{i}.py", 0.5) for i in range(ranking.EVIDENCE_POOL)] + [same[1]]
    assert ranking.evidence_lead(far, q) == far


@pytest.mark.parametrize(
    "named, path, expected",
    [
        ("core.py", "src/click/core.py", True),  # a bare name: any file of that name
        ("click/core.py", "src/click/core.py", True),
        ("/home/u/.venv/lib/python3.12/site-packages/click/core.py", "src/click/core.py", True),
        ("C:\\Users\\u\\site-packages\\click\\core.py", "src/click/core.py", True),
        ("../click/core.py", "src/click/core.py", True),
        ("./src/click/core.py", "src/click/core.py", True),
        # a trace's frame in another package, or another directory's file of the same name
        ("/x/site-packages/werkzeug/debug/__init__.py", "src/werkzeug/__init__.py", False),
        ("/x/site-packages/flask/app.py", "examples/shortly/app.py", False),
        ("core.py", "src/click/core.pyi", False),
        ("core.py", "src/click/score.py", False),
        ("setup.py", "setup.py", True),
        ("", "setup.py", False),
    ],
)
def test_named_paths_one_file(named, path, expected):
    assert (ranking.named_paths(named, [path]) == [path]) is expected


def test_named_files_leave_out_what_only_the_frames_name():
    report = (
        "Bytecode cache broken, see bccache.py\n\nTraceback (most recent call last):\n"
        '  File "/v/tmpl/environment.py", line 5, in __call__\n'
        '  File "/v/tmpl/bccache.py", line 9, in load_bytecode\n'
        "EOFError: marshal data too short\n"
    )
    q = parse_query(report)
    assert q.file_names == ("bccache.py", "/v/tmpl/environment.py", "/v/tmpl/bccache.py")
    # the stage on: the frames' files are out (bccache.py stays: the prose names it)
    assert ranking.named_files(q) == ("bccache.py",)
    # off (-frames): every name, as before the stage
    assert ranking.named_files(q, frames=False) == q.file_names
    # a question has no frames: its names are all named files
    q = parse_query("what does environment.py do with bccache.py?")
    assert ranking.named_files(q) == ("environment.py", "bccache.py")


def test_named_paths_prefers_the_longest_agreement():
    paths = ["packages/a/src/index.ts", "packages/b/src/index.ts", "src/index.ts", "index.ts"]
    # every file of that name; then those agreeing on more trailing parts
    assert ranking.named_paths("index.ts", paths) == paths
    assert ranking.named_paths("src/index.ts", paths) == paths[:3]
    assert ranking.named_paths("a/src/index.ts", paths) == ["packages/a/src/index.ts"]
    # a trace's absolute path: the file that agrees furthest up
    trace = "/home/u/proj/packages/b/src/index.ts"
    assert ranking.named_paths(trace, paths) == ["packages/b/src/index.ts"]
    # only the file name agrees: not named (the parent directory must agree too), except a
    # file at the root, which has no parent to disagree with
    assert ranking.named_paths("lib/index.ts", paths) == ["index.ts"]
    assert ranking.named_paths("lib/index.ts", paths[:3]) == []


# --- classes ----------------------------------------------------------------------------------


def test_a_class_the_question_does_not_name_yields_to_functions():
    """class 0.050 x CLASS_DEMOTION 0.9 = 0.045 < method 0.048: the method leads; a question
    naming the class, a symbol query and a list with no function leave the class alone."""
    table = hit("rich/table.py", 0.050, kind="class", symbol="rich.TableLayout", start=10, end=40)
    widths = hit(
        "rich/table.py", 0.048, kind="method", symbol="TableLayout.widths", start=50, end=90
    )
    others = [s for s in ranking.STAGES if s != "classes"]
    q = parse_query("how are the widths of the columns worked out?")
    assert ranking.class_factors([table, widths], q) == [ranking.CLASS_DEMOTION, 1.0]
    out = ranking.rescore([table, widths], q, disabled=others)
    assert [h.symbol for h in out] == ["TableLayout.widths", "rich.TableLayout"]
    assert [round(h.score, 6) for h in out] == [0.048, 0.045]
    # switched off: retrieval's order
    off = ranking.rescore([table, widths], q, disabled=ranking.STAGES)
    assert [h.symbol for h in off] == ["rich.TableLayout", "TableLayout.widths"]
    # named by the question (its whole name or last part): untouched
    named = parse_query("how does TableLayout work out the widths of the columns?")
    assert ranking.class_factors([table, widths], named) == [1.0, 1.0]
    # no function or method among the candidates: nothing to yield to
    window = hit("rich/table.py", 0.04, kind="window", start=1, end=9)
    assert ranking.class_factors([table, window], q) == [1.0, 1.0]
    # a symbol query keeps the class (the defs stage decides)
    symbol = ranking.rescore([table, widths], parse_query("TableLayout"), others)
    assert [h.symbol for h in symbol] == ["rich.TableLayout", "TableLayout.widths"]


def test_a_line_window_yields_to_functions_for_a_question_in_words():
    """urfave-cli: the help templates (one 120-line window of Go string literals) led "build
    the one-line help description of an option"; window 0.0409 x WINDOW_DEMOTION 0.9 =
    0.03681 < function 0.0373, so the function that builds it leads."""
    q = parse_query("build the one-line help description of an option with its placeholder")
    templates = hit("v2/template.go", 0.0409, kind="window", start=1, end=120)
    templates.language = "go"
    builder = hit("v2/flag.go", 0.0373, symbol="stringifyFlag", start=251, end=301)
    builder.language = "go"
    others = [s for s in ranking.STAGES if s != "windows"]
    assert ranking.window_factors([templates, builder], q) == [ranking.WINDOW_DEMOTION, 1.0]
    out = ranking.rescore([templates, builder], q, disabled=others)
    assert [h.symbol for h in out] == ["stringifyFlag", None]
    assert [round(h.score, 5) for h in out] == [0.0373, 0.03681]
    # switched off: retrieval's order
    off = ranking.rescore([templates, builder], q, disabled=ranking.STAGES)
    assert [h.path for h in off] == ["v2/template.go", "v2/flag.go"]
    # no function or method among the candidates: nothing to yield to
    cls = hit("v2/app.go", 0.03, kind="class", symbol="App")
    assert ranking.window_factors([templates, cls], q) == [1.0, 1.0]
    # a language askrepo does not chunk by definitions has only windows: untouched
    config = hit("ci.yml", 0.04, kind="window")
    config.language = "yaml"
    assert ranking.window_factors([config, builder], q) == [1.0, 1.0]
    # a symbol query keeps retrieval's order (the defs stage decides)
    symbol = ranking.rescore([templates, builder], parse_query("AppHelpTemplate"), others)
    assert [h.path for h in symbol] == ["v2/template.go", "v2/flag.go"]


def test_list_depth_by_query_kind():
    """``deepdense`` / ``deepfts``: 50 -> 100 for a question in words on both sides; a name and
    a pasted report keep 50; switched off, 50."""
    question, name = parse_query("how are handlers combined?"), parse_query("Logger")
    report = parse_query("Traceback (most recent call last):\n" + '  File "a.py", line 1\n' * 3)
    assert report.kind == "trace"
    for side in ("dense", "fts"):
        assert ranking.list_depth(question, 50, side) == 100
        assert ranking.list_depth(name, 50, side) == 50
        assert ranking.list_depth(report, 50, side) == 50
        assert ranking.list_depth(question, 50, side, enabled=False) == 50


# A header window listing prototypes (c-ares's ares_private.h) and the .c definition it lists.
_PROTOTYPES = (
    "/* Query cache */\n"
    "ares_status_t ares_qcache_create(ares_rand_state *rand_state,\n"
    "                                 unsigned int max_ttl, ares_qcache_t **cache_out);\n"
    "void ares_qcache_destroy(ares_qcache_t *cache);\n"
    "void ares_qcache_flush(ares_qcache_t *cache);\n"
    "CARES_EXTERN int ares_qcache_fetch(ares_channel_t *channel) CARES_DEPRECATED;\n"
    "#define ARES_QCACHE_MAX 3600\n"
)


def test_declaration_prior_demotes_a_header_window_of_prototypes():
    q = parse_query("how are cached responses expired?")
    window = hit("src/lib/ares_private.h", 0.04, kind="window", text=_PROTOTYPES)
    # 4 of the 5 code lines end a declaration (the #define and the comment do not count)
    assert ranking.declaration_prior(window, q) == ranking.PRIOR_DECLARATIONS == 0.8
    # the same lines in a .c file, or as a definition chunk, or for a symbol query: kept
    assert ranking.declaration_prior(replace(window, path="src/lib/ares_qcache.c"), q) == 1.0
    assert ranking.declaration_prior(replace(window, kind="function"), q) == 1.0
    assert ranking.declaration_prior(window, parse_query("ares_qcache_fetch")) == 1.0
    # a header window of code (a static inline function's body) is not a list of declarations
    body = "static inline int f(int a) {\n  int b = g(a);\n  h(b);\n  return b + 1;\n}\n"
    assert ranking.declaration_prior(replace(window, text=body), q) == 1.0
    # a C++ class body's method declarations count too (spdlog's logger.h)
    methods = (
        "public:\n    explicit logger(std::string name);\n    virtual ~logger() = default;\n"
        "    void flush();\n    void set_level(level::level_enum log_level) override;\n"
        "    bool should_log(level::level_enum msg_level) const {\n"
        "        return msg_level >= level_.load(std::memory_order_relaxed);\n    }\n"
    )
    assert ranking.declaration_prior(replace(window, text=methods), q) == 0.8
    # in rescore: 0.04 x 0.8 = 0.032 falls below the definition's 0.035
    definition = hit("src/lib/ares_qcache.c", 0.035, text="int f(void) {\n  return 0;\n}\n")
    off = ("coherence", "pathwords", "length", "header", "mentions", "classes", "trivial")
    off += ("windows",)
    out = ranking.rescore([window, definition], q, disabled=off)
    assert [h.path for h in out] == ["src/lib/ares_qcache.c", "src/lib/ares_private.h"]
    assert out[1].score == pytest.approx(0.032)
    # with the priors stage off the window stays first
    out = ranking.rescore([window, definition], q, disabled=(*off, "priors"))
    assert out[0].path == "src/lib/ares_private.h"


def test_rescored_is_replace_at_a_fraction_of_its_cost():
    from dataclasses import replace

    h = hit("a.py", 0.5, symbol="f")
    h.calls = ["g"]
    new = ranking.rescored(h, 0.75)
    assert new == replace(h, score=0.75) and new is not h
    assert h.score == 0.5  # the input is not touched
    assert new.calls is h.calls  # a shallow copy, as replace makes


def test_code_lines_are_remembered_by_hash_and_the_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(ranking, "_CODE_LINES", {})
    monkeypatch.setattr(ranking, "_CODE_LINES_MAX", 2)
    texts = ["def f():\n    # note\n    return 1\n", "x = 1\n", '"""doc"""\ny = 2\n']
    assert [ranking.code_lines(t) for t in texts] == [2, 1, 1]
    assert len(ranking._CODE_LINES) == 1  # full at two: cleared before the third
    assert ranking.code_lines(texts[2]) == 1 and len(ranking._CODE_LINES) == 1


def test_generated_prior_factor():
    words = parse_query("read a number literal")
    gen = {"src/scanners.c"}
    assert ranking.generated_prior("src/scanners.c", words, gen) == ranking.PRIOR_GENERATED
    assert ranking.generated_prior("src/inlines.c", words, gen) == 1.0
    # a symbol query, or a question about generated code, keeps it
    assert ranking.generated_prior("src/scanners.c", parse_query("_scan_at"), gen) == 1.0
    about = parse_query("where is the re2c scanner")
    assert ranking.generated_prior("src/scanners.c", about, gen) == 1.0
    assert ranking.generated_prior("src/scanners.c", parse_query("the generated lexer"), gen) == 1.0


def test_a_generated_scanner_yields_to_the_hand_written_parser():
    # re2c's scanners.c matched "strip the closing # run of an ATX heading" best (0.0463);
    # blocks.c's chop_trailing_hashtags came second (0.0400). With the prior:
    # 0.0463 * 0.7 = 0.03241 < 0.0400, and the hand-written function is first.
    q = parse_query("strip the closing run of # characters from an ATX heading")
    hits = [hit("src/scanners.c", 0.0463), hit("src/blocks.c", 0.0400)]
    off = ranking.rescore(hits, q, ("coherence", "length", "pathwords", "trivial"))
    assert paths(off) == ["src/scanners.c", "src/blocks.c"]
    on = ranking.rescore(
        hits, q, ("coherence", "length", "pathwords", "trivial"), generated={"src/scanners.c"}
    )
    assert paths(on) == ["src/blocks.c", "src/scanners.c"]
    assert on[1].score == pytest.approx(0.03241)
    assert on[0].score == pytest.approx(0.0400)


@pytest.mark.parametrize(
    ("path", "text", "stub"),
    [
        ("io.py", 'def read(self, n):\n    """Read."""\n    raise NotImplementedError("x")', True),
        ("io.py", "async def read(self) -> bytes:\n    ...", True),
        ("io.py", "def read(\n    self,\n    n: int = f(1),\n) -> bytes: ...", True),
        ("io.py", "def read(self):\n    if self.closed:\n        raise NotImplementedError", False),
        ("io.py", "def read(self):\n    pass", False),  # a hook that does nothing on purpose
        ("sel.rs", "fn select(&self) -> io::Result<()> {\n    todo!()\n}", True),
        ("sel.rs", "fn select(&self) {\n    let x = 1;\n    unimplemented!()\n}", False),
        ("A.kt", 'override fun close() {\n  TODO("later")\n}', True),
        ("A.java", "public void remove() {\n  throw new UnsupportedOperationException();\n}", True),
        ("A.swift", 'func encode(to e: Encoder) throws {\n  fatalError("abstract")\n}', True),
        ("a.go", 'func (s *S) Close() error {\n\tpanic("not implemented")\n}', True),
        ("a.ts", 'read(): Buffer {\n  throw new Error("Method not implemented.");\n}', True),
        ("a.ts", 'read(): Buffer {\n  throw new Error("closed");\n}', False),
    ],
)
def test_not_implemented_bodies(path, text, stub):
    """``declarations.not_implemented``: the body is only a not-implemented marker (its
    message and closers may follow), in each language's words."""
    from types import SimpleNamespace as C

    from askrepo.declarations import not_implemented

    assert not_implemented(C(path=path, kind="method", text=text)) is stub


def test_a_not_implemented_method_chunked_by_tree_sitter_yields():
    """The real chunker: a base class's ``raise NotImplementedError`` method is a method chunk
    of its own, and for a question in words it yields to the subclass that implements it."""
    from askrepo.chunker import chunk_text
    from askrepo.declarations import not_implemented

    src = (
        "class Reader:\n"
        "    def read(self, n):\n"
        '        """Read up to n bytes from the stream."""\n'
        "        raise NotImplementedError\n"
        "\n"
        "\n"
        "class FileReader(Reader):\n"
        "    def read(self, n):\n"
        '        """Read up to n bytes from the file."""\n'
        "        return self.f.read(n)\n"
    )
    chunks = {c.start_line: c for c in chunk_text("io.py", src, "python") if c.kind == "method"}
    base, impl = chunks[2], chunks[8]
    assert (not_implemented(base), not_implemented(impl)) == (True, False)
    words = parse_query("read bytes from a stream")
    assert ranking.bodyless_prior(base, words) == ranking.PRIOR_BODYLESS
    assert ranking.bodyless_prior(impl, words) == 1.0
    assert ranking.bodyless_prior(base, parse_query("Reader.read")) == 1.0


@pytest.mark.parametrize(
    ("path", "text", "setter"),
    [
        (
            "b.rs",
            "pub fn on(&mut self, v: bool) -> &mut Self {\n    self.on = v;\n    self\n}",
            True,
        ),
        ("B.java", "public B setAge(int age) {\n  this.age = age;\n  return this;\n}", True),
        ("c.go", "func (c *Config) SetTimeout(d time.Duration) {\n\tc.timeout = d\n}", True),
        ("a.php", "public function setName($n) {\n  $this->name = $n;\n  return $this;\n}", True),
        ("a.ts", "setOptions(o: Options) {\n  this.options = o;\n  this.dirty = true;\n}", True),
        # a call, a computed value or a third field: more than storing an option
        (
            "b.rs",
            "pub fn on(&mut self, v: bool) -> &mut Self {\n    self.on = f(v);\n    self\n}",
            False,
        ),
        ("a.ts", "set(o) {\n  this.a = o;\n  this.b = o;\n  this.c = o;\n}", False),
        ("a.ts", "reset() {\n  this.clear();\n}", False),
        ("a.py", "def same(self, a, b):\n    return a == b", False),
    ],
)
def test_is_setter(path, text, setter):
    """``ranking.is_setter``: one or two fields given a value that is no call, then at most
    ``return this`` and the closers."""
    from types import SimpleNamespace as C

    assert ranking.is_setter(C(path=path, kind="method", text=text)) is setter


def test_a_builder_setter_chunked_by_tree_sitter_yields_for_a_question_in_words():
    """The real chunker: a Rust builder's setter named after a feature is a method chunk; for a
    question in words it scores PRIOR_SETTER (the feature's code is where the field is read),
    for a symbol query it keeps its score."""
    from askrepo.chunker import chunk_text

    src = (
        "impl Builder {\n"
        "    /// Enables the adaptive flow control window.\n"
        "    pub fn adaptive_window(&mut self, enabled: bool) -> &mut Self {\n"
        "        self.adaptive_window = enabled;\n"
        "        self\n"
        "    }\n"
        "\n"
        "    /// Grows the window when the bandwidth-delay product says so.\n"
        "    pub fn update_window(&mut self, bdp: u32) -> u32 {\n"
        "        let next = bdp.saturating_mul(2);\n"
        "        self.window = next.min(MAX_WINDOW);\n"
        "        self.window\n"
        "    }\n"
        "}\n"
    )
    chunks = {c.symbol: c for c in chunk_text("src/b.rs", src, "rust") if c.kind == "method"}
    setter, work = chunks["Builder.adaptive_window"], chunks["Builder.update_window"]
    words = parse_query("adaptive flow control window")
    assert (ranking.is_setter(setter), ranking.is_setter(work)) == (True, False)
    assert ranking.setter_prior(setter, words) == ranking.PRIOR_SETTER == 0.7
    assert ranking.setter_prior(work, words) == 1.0
    assert ranking.setter_prior(setter, parse_query("Builder::adaptive_window")) == 1.0


def test_a_method_declared_without_a_body_yields_to_its_implementations():
    """Chunker 6 makes a trait's required methods and interface methods definitions of their
    own; for a question in words they score PRIOR_BODYLESS (their doc comment paraphrases the
    question, the code is in the implementations), for a symbol query they keep their score."""
    from types import SimpleNamespace as C

    rust = C(
        path="src/buf/buf_impl.rs", kind="method", text="/// A slice.\nfn chunk(&self) -> &[u8];"
    )
    go = C(path="context.go", kind="method", text="\t// RealIP returns the IP.\n\tRealIP() string")
    java = C(path="F.java", kind="method", text="  @Nullable\n  <T> TypeAdapter<T> create(Gson g);")
    ts = C(path="h.ts", kind="method", text="  /** Handles. */\n  handle(req: Request): Response")
    body = C(path="src/bytes.rs", kind="method", text="fn chunk(&self) -> &[u8] {\n    self\n}")
    py = C(path="m.py", kind="method", text="def run(self):\n    return self.go()")
    window = C(path="src/lib.rs", kind="window", text="fn abs(x: i32) -> i32;")
    # a body that only says it is not implemented is no implementation either (session 42)
    stub = C(path="m.py", kind="method", text="def run(self):\n    raise NotImplementedError")
    protocol = C(path="m.py", kind="method", text="def run(self) -> None: ...")
    words = parse_query("where is the client's real ip address found")
    assert [ranking.bodyless_prior(h, words) for h in (rust, go, java, ts, stub, protocol)] == [
        ranking.PRIOR_BODYLESS
    ] * 6
    assert [ranking.bodyless_prior(h, words) for h in (body, py, window)] == [1.0, 1.0, 1.0]
    assert ranking.bodyless_prior(rust, parse_query("Buf::chunk")) == 1.0
    # a Rust or Java declaration ends with ";" (a `where` clause line does not end it)
    assert not is_bodyless(C(path="a.rs", kind="method", text="fn f(&self)\nwhere T: X"))
    # a class field holding an arrow function has its body after the arrow
    field = C(path="w.ts", kind="method", text="  onClick = () => this.update();")
    assert not is_bodyless(field)
    # the last member of a trait carries the trait's closing brace
    assert is_bodyless(C(path="a.rs", kind="method", text="fn f(&self);\n}"))
    # a TypeScript private method (``#x``) and a generator method (``*gen``) have bodies: the
    # ``#`` or ``*`` they start with does not open a comment
    private = C(path="p.ts", kind="method", text="  #secret(): number {\n    return 1;\n  }")
    gen = C(path="p.ts", kind="method", text="  *items(): Iterator<T> {\n    yield x;\n  }")
    assert not is_bodyless(private) and not is_bodyless(gen)
    # a Go parameter list wrapped onto a line that starts with a pointer type (gorilla/mux's
    # ``HandleFunc``): that line is code, its ``{`` opens the body
    wrapped = "func (r *Router) HandleFunc(path string, f func(http.ResponseWriter,\n"
    wrapped += "\t*http.Request)) *Route {\n\treturn r.NewRoute()\n}"
    assert not is_bodyless(C(path="mux.go", kind="method", text=wrapped))
