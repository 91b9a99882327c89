"""askrepo.answer: prompt budget, citation mapping, refusal, and the ask() pipeline.

Unit tests of our own logic: the LLM, retriever and store are small deterministic fakes here.
Token counts use a whitespace word counter so budgets can be worked out by hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askrepo.answer import (
    MIN_SNIPPET_TOKENS,
    NO_CITATION_NOTE,
    NO_SUPPORTED_CLAIM,
    TRUNCATED_MARK,
    absent_context_names,
    absent_names,
    ask,
    build_prompt,
    contextual_summary,
    missing_identifiers,
    refusal_text,
    resolve_citations,
    subject_identifiers,
    summary_grammar,
    summary_prompt,
)
from askrepo.datatypes import Citation, Hit
from askrepo.errors import UsageError
from askrepo.lines import span_hash


def words(text: str) -> int:
    return len(text.split())


def hit(rank: int, path: str, start: int, end: int, symbol: str | None = None, text=None) -> Hit:
    if text is None:
        text = "\n".join(f"line{i} of {path}" for i in range(start, end + 1))
    return Hit(
        rank=rank,
        path=path,
        start_line=start,
        end_line=end,
        symbol=symbol,
        kind="function",
        language="python",
        score=1.0 / rank,
        sources={"dense": rank, "fts": None},
        expanded_from=None,
        text=text,
    )


SHOWN = [
    hit(1, "src/pkg/utils.py", 10, 20, "echo"),
    hit(2, "src/pkg/core.py", 100, 140, "Context.lookup_default"),
    hit(3, "src/pkg/types.py", 5, 9, None),
]


# ------------------------------------------------------------------------------------------
# resolve_citations: worked examples


def test_citations_valid_map_to_hit_metadata_in_first_appearance_order():
    text = "Echo strips styles [2] before writing [1]."
    out, cites, invalid = resolve_citations(text, SHOWN, "abc123")
    assert out == text
    assert invalid == []
    assert cites == [
        Citation(2, "src/pkg/core.py", 100, 140, "Context.lookup_default", "abc123"),
        Citation(1, "src/pkg/utils.py", 10, 20, "echo", "abc123"),
    ]


def test_citations_invalid_numbers_removed_and_reported():
    text = "It lives in utils [4] and core [2, 7]. See [0]."
    out, cites, invalid = resolve_citations(text, SHOWN, None)
    assert out == "It lives in utils and core [2]. See."
    assert [c.n for c in cites] == [2]
    assert invalid == [4, 7, 0]


def test_citations_repeated_are_deduplicated():
    text = "A [3]. B [1][3]. C [3, 1]. D [3]."
    out, cites, invalid = resolve_citations(text, SHOWN, None)
    assert out == text
    assert [c.n for c in cites] == [3, 1]
    assert invalid == []


def test_citations_none():
    text = "The snippets do not say."
    assert resolve_citations(text, SHOWN, None) == (text, [], [])


def test_citations_ranges_expand_only_between_shown_snippets():
    out, cites, invalid = resolve_citations("All of [1-3].", SHOWN, None)
    assert (out, [c.n for c in cites], invalid) == ("All of [1-3].", [1, 2, 3], [])
    # [2-9]: 9 was never shown -> the whole range goes (probably line numbers, not snippets)
    out, cites, invalid = resolve_citations("Lines [2-9] and [1, 2–3].", SHOWN, None)
    assert out == "Lines and [1, 2–3]."
    assert [c.n for c in cites] == [1, 2, 3]
    assert invalid == [9]


def test_citations_ignore_code_indexing_and_links():
    text = "Use `args[1]` or x[2][3], see [docs][1](http://x) and ```\nfoo[2]\n``` [3]"
    out, cites, invalid = resolve_citations(text, SHOWN, None)
    assert out == text
    assert [c.n for c in cites] == [3]
    assert invalid == []


def test_citation_paths_never_come_from_the_model():
    text = "Defined at src/fake.py:1-999 [1]."
    _, cites, _ = resolve_citations(text, SHOWN, None)
    assert cites[0].location == "src/pkg/utils.py:10-20"


# ------------------------------------------------------------------------------------------
# build_prompt


def test_prompt_numbers_snippets_and_keeps_question_and_rules():
    prompt, shown = build_prompt(
        "Where is echo?", SHOWN, budget_tokens=10_000, count_tokens=words, top_k=8
    )
    assert shown == SHOWN
    assert "[1] src/pkg/utils.py:10-20 (echo)\n```python\nline10 of src/pkg/utils.py" in prompt
    assert "[2] src/pkg/core.py:100-140 (Context.lookup_default)" in prompt
    assert "[3] src/pkg/types.py:5-9\n```python" in prompt
    assert "Question: Where is echo?" in prompt
    assert "using only the snippets" in prompt and "[1]" in prompt and "do not" in prompt


def test_prompt_respects_top_k():
    _, shown = build_prompt("q?", SHOWN, budget_tokens=10_000, count_tokens=words, top_k=2)
    assert shown == SHOWN[:2]


def _lines_hit(rank: int, n_lines: int) -> Hit:
    # every line is 3 words; the block is header (3 words with symbol) + 2 fences + 3 per line
    return hit(rank, f"f{rank}.py", 1, n_lines, "sym", "\n".join(["a b c"] * n_lines))


def test_prompt_budget_worked_example():
    question = "how does it work?"
    base = words(build_prompt(question, [], budget_tokens=1000, count_tokens=words)[0])
    hits = [_lines_hit(1, 20), _lines_hit(2, 20)]  # block = 5 + 60 = 65 words, +2 separator
    # Room for exactly both blocks: the per-snippet cap (room // 2 = 67) admits each whole.
    prompt, shown = build_prompt(question, hits, budget_tokens=base + 134, count_tokens=words)
    assert shown == hits
    assert words(prompt) <= base + 134

    # One word less: cap = 133 // 2 = 66 < 67, so [1] is cut to the most lines whose block fits
    # 64 words: 5 + 3k + 2 ("… (truncated)") <= 64 -> k = 19, i.e. lines 1-19; then [2] too.
    prompt, shown = build_prompt(question, hits, budget_tokens=base + 133, count_tokens=words)
    assert [h.path for h in shown] == ["f1.py", "f2.py"]
    assert (shown[0].start_line, shown[0].end_line) == (1, 19)
    assert shown[0].text.endswith(TRUNCATED_MARK)
    assert "[1] f1.py:1-19 (sym)" in prompt
    assert words(prompt) <= base + 133

    # A 10-line [1] (block 35 + 2) and 47 words to spare: cap = max(48, 84 // 2) admits [1]
    # whole, then the 47 left are below MIN_SNIPPET_TOKENS (48), so [2] is dropped, not cut.
    small = _lines_hit(1, 10)
    budget = base + 37 + MIN_SNIPPET_TOKENS - 1
    prompt, shown = build_prompt(
        question, [small, hits[1]], budget_tokens=budget, count_tokens=words
    )
    assert shown == [small]
    assert "f2.py" not in prompt


def test_prompt_never_truncates_the_question():
    question = "why " * 50 + "?"
    prompt, shown = build_prompt(
        question, [_lines_hit(1, 200)], budget_tokens=words(question) + 120, count_tokens=words
    )
    assert f"Question: {question}" in prompt
    assert words(prompt) <= words(question) + 120
    with pytest.raises(UsageError, match="too long"):
        build_prompt(question, [_lines_hit(1, 3)], budget_tokens=20, count_tokens=words)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=120), min_size=0, max_size=10),
    extra=st.integers(min_value=0, max_value=900),
    top_k=st.integers(min_value=1, max_value=10),
)
def test_prompt_invariants(sizes, extra, top_k):
    question = "where is the retry implemented?"
    hits = [_lines_hit(i + 1, n) for i, n in enumerate(sizes)]
    base = words(build_prompt(question, [], budget_tokens=10_000, count_tokens=words)[0])
    prompt, shown = build_prompt(
        question, hits, budget_tokens=base + extra, count_tokens=words, top_k=top_k
    )
    assert words(prompt) <= base + extra
    assert f"Question: {question}" in prompt
    assert len(shown) <= min(top_k, len(hits))
    for n, (s, h) in enumerate(zip(shown, hits, strict=False), 1):  # rank-order prefix
        assert (s.path, s.start_line) == (h.path, h.start_line)
        assert s.start_line <= s.end_line <= h.end_line
        body = s.text.splitlines()
        kept = body[:-1] if body[-1] == TRUNCATED_MARK else body
        assert len(kept) == s.end_line - s.start_line + 1
        assert f"[{n}] {s.path}:{s.start_line}-{s.end_line}" in prompt


# ------------------------------------------------------------------------------------------
# Refusal


@dataclass
class FakeStore:
    symbols: set[str] = field(default_factory=set)
    terms: set[str] = field(default_factory=set)
    commit: str | None = "0123456789abcdef"

    def find_symbol(self, name: str):
        return [name] if any(s == name or s.endswith("." + name) for s in self.symbols) else []

    def has_term(self, term: str) -> bool:
        return term in self.terms

    def meta(self):
        return SimpleNamespace(commit=self.commit, file_count=12, chunk_count=340)


STORE = FakeStore(
    symbols={"utils.echo", "Context.lookup_default", "Group.resolve_command", "open_file"},
    terms={"default_map", "token_normalize_func", "echo"},
)


def test_missing_identifiers_finds_absent_names_only():
    q = "Where is `ClickOptionRegistry` defined, and how does it use `default_map`?"
    assert missing_identifiers(q, STORE) == ["ClickOptionRegistry"]


def test_missing_identifiers_accepts_qualified_and_suffix_matches():
    q = "How does `Context.lookup_default` read default_map, and what calls `resolve_command`?"
    assert missing_identifiers(q, STORE) == []


def test_missing_identifiers_ignores_plain_words_and_versions():
    q = "In Click 8.4.1, how are options parsed from the command line?"
    assert missing_identifiers(q, STORE) == []


def test_names_inside_a_quoted_message_are_context_not_the_subject():
    # a browser's error message names a browser type; the question is about the fetch code
    q = "Each request with echo throws \"The 'credentials' field on 'RequestInitDict' is unset.\""
    assert missing_identifiers(q, STORE) == []
    assert absent_context_names(q, STORE) == ["RequestInitDict"]
    # the same name outside the quotes is the subject: refused as before
    q = "How does `RequestInitDict` read credentials?"
    assert missing_identifiers(q, STORE) == ["RequestInitDict"]
    assert absent_context_names(q, STORE) == []
    # both at once, as ask reads them: a refusal does not look for context names
    q2 = 'Why does `FooRegistry` fail with "no RequestInitDict here"?'
    assert absent_names(q2, STORE) == (["FooRegistry"], [])
    q3 = "Each request with echo throws \"The 'credentials' field on 'RequestInitDict' is unset.\""
    assert absent_names(q3, STORE) == ([], ["RequestInitDict"])


def test_backticked_code_and_one_quoted_name_stay_the_subject():
    assert subject_identifiers("What does `run(FooRegistry, x)` do?") == ["FooRegistry"]
    assert subject_identifiers("Where is 'FooRegistry' defined?") == ["FooRegistry"]
    assert missing_identifiers("Where is 'FooRegistry' defined?", STORE) == ["FooRegistry"]


def test_a_pasted_trace_names_only_context():
    trace = "Traceback (most recent call last):\n" + "".join(
        f'  File "app/handlers.py", line {n}, in UserSideHandler{n}\n' for n in range(6)
    )
    assert subject_identifiers(trace) == []
    assert missing_identifiers(trace, STORE) == []
    assert absent_context_names(trace, STORE) == []  # not scanned: the reporter's own frames


def test_refusal_text_states_the_evidence():
    text = refusal_text(["FooRegistry", "bar_baz"], STORE.meta())
    assert text.startswith("The code base does not contain `FooRegistry` or `bar_baz`:")
    assert "12 files, 340 chunks, commit 0123456789ab" in text


# ------------------------------------------------------------------------------------------
# ask(): the pipeline with a fake LLM and a fake retriever


class FakeLLM:
    name = "fake"
    model = "fake-model"
    context_tokens = 4096

    def __init__(self, *replies: str):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def generate(self, prompt, *, system=None, max_tokens=300, stream=None, stop=None):
        self.calls.append({"prompt": prompt, "system": system, "max_tokens": max_tokens})
        reply = self.replies.pop(0)
        if stream is not None:
            for piece in reply.split(" "):
                stream(piece + " ")
        return reply

    def count_tokens(self, text: str) -> int:
        return words(text)


class FakeRetriever:
    def __init__(self, hits, store=STORE):
        self.hits = hits
        self.store = store
        self.queries: list[tuple[str, object]] = []

    def search(self, query, opts=None):
        self.queries.append((query, opts))
        return SimpleNamespace(hits=list(self.hits[: opts.k]), stale=False)


ECHO_TEXT = "def echo(message):\n    print(strip_ansi(message))\n    return None"
LOOKUP_TEXT = (
    "def lookup_default(self, name):\n"
    '    """Read the default from default_map."""\n'
    "    return self.default_map.get(name)"
)
REAL = [
    hit(1, "src/pkg/utils.py", 10, 12, "echo", ECHO_TEXT),
    hit(2, "src/pkg/core.py", 100, 102, "Context.lookup_default", LOOKUP_TEXT),
]


def test_ask_lays_the_model_answer_on_the_evidence_card():
    llm = FakeLLM("Context.lookup_default reads default_map [1].")
    retriever = FakeRetriever(REAL)
    pieces: list[str] = []
    ans = ask("Where is default_map read?", retriever, llm, stream=pieces.append)
    # the card puts the definition that reads default_map first, so it is [1] for the model too
    assert ans.evidence.startswith(
        "The best match is `Context.lookup_default`, a function in `src/pkg/core.py:100-102` [1]."
    )
    assert ans.answer == "Context.lookup_default reads default_map [1]."
    assert ans.citations[0].location == "src/pkg/core.py:100-102"
    assert ans.citations[0].commit == "0123456789abcdef"
    assert ans.citations[0].hash == span_hash(LOOKUP_TEXT)
    assert ans.claims == [
        {
            "text": "Context.lookup_default reads default_map [1].",
            "citations": [1],
            "names": ["Context.lookup_default", "default_map"],
            "unsupported": [],
        }
    ]
    assert ans.retrieved == REAL
    assert ans.invalid_citations == [] and not ans.refused
    assert (ans.backend, ans.model) == ("fake", "fake-model")
    assert "".join(pieces).strip() == ans.answer
    assert {"refusal_check", "retrieve", "evidence", "prompt", "generate", "total"} <= set(
        ans.timings_ms
    )
    prompt = llm.calls[0]["prompt"]
    assert "[1] src/pkg/core.py:100-102" in prompt and "[2] src/pkg/utils.py:10-12" in prompt
    assert "Question: Where is default_map read?" in prompt
    assert llm.calls[0]["system"]


def test_ask_says_on_top_when_no_claim_is_supported():
    llm = FakeLLM("`echo` writes to `sys.stderr` [2].")
    ans = ask("Where is default_map read?", FakeRetriever(REAL), llm)
    assert ans.answer.startswith(NO_SUPPORTED_CLAIM)
    assert ans.claims[0]["unsupported"] == ["sys.stderr"]


def test_ask_without_a_model_answers_with_the_card():
    from askrepo.llm import NoModel

    ans = ask("Where is default_map read?", FakeRetriever(REAL), NoModel())
    assert ans.backend == "none" and ans.answer == ans.evidence
    assert ans.citations[0].location == "src/pkg/core.py:100-102"
    assert ans.claims and all(c["unsupported"] == [] for c in ans.claims)
    assert "generate" not in ans.timings_ms


def test_ask_removes_invalid_citations_and_says_when_nothing_is_cited():
    llm = FakeLLM("<think>let me look</think>It is in the parser [7].")
    ans = ask("How is the command line parsed?", FakeRetriever(SHOWN), llm)
    assert ans.invalid_citations == [7]
    assert ans.answer == f"It is in the parser.\n\n{NO_CITATION_NOTE}"
    assert "<think>" not in ans.answer
    # only the card's own citations remain
    assert [c.n for c in ans.citations] == [s["n"] for s in ans.evidence_sources]


def test_ask_refuses_absent_identifier_without_calling_the_model():
    llm = FakeLLM()  # any call would fail: no reply scripted
    ans = ask("How does `ParameterOriginRegistry` track origins?", FakeRetriever(SHOWN), llm)
    assert ans.refused
    assert llm.calls == []
    assert ans.answer.startswith("The code base does not contain `ParameterOriginRegistry`")
    assert ans.citations == [] and ans.retrieved == SHOWN


def test_ask_answers_a_quoted_error_and_names_what_is_not_in_the_code():
    llm = FakeLLM("It is read from the map [1].")
    q = 'Reading throws "field on RequestInitDict is not implemented": where is default_map read?'
    ans = ask(q, FakeRetriever(SHOWN), llm)
    assert not ans.refused and ans.not_in_code == ["RequestInitDict"]
    assert [c.n for c in ans.citations][:1] == [1]
    assert ans.to_dict()["not_in_code"] == ["RequestInitDict"]


def test_ask_with_no_hits_does_not_call_the_model():
    llm = FakeLLM()
    ans = ask("How is the command line parsed?", FakeRetriever([]), llm)
    assert ans.refused and llm.calls == [] and ans.citations == []


def test_ask_hyde_searches_with_the_hypothetical_snippet():
    llm = FakeLLM(
        "```python\ndef lookup_default(name):\n    return default_map[name]\n```",
        "It reads the map [1].",
    )
    retriever = FakeRetriever(SHOWN)
    ans = ask("Where is default_map read?", retriever, llm, hyde=True, k=2)
    ((query, opts),) = retriever.queries
    assert query == "Where is default_map read?"
    assert opts.k == 2
    assert opts.extra_queries == ["def lookup_default(name):\n    return default_map[name]"]
    assert len(llm.calls) == 2 and "hyde" in ans.timings_ms
    # [1] the model's citation; the card names the other hit at its end ("See also")
    assert [c.n for c in ans.citations] == [1, 2]


def test_ask_rejects_empty_question():
    with pytest.raises(UsageError):
        ask("   ", FakeRetriever(SHOWN), FakeLLM())


def test_contextual_summary_is_one_line_and_fits_the_context():
    class Small(FakeLLM):
        context_tokens = 200

    llm = Small("<think>x</think>\n\nParses options for the `echo` command.\nExtra line.")
    code = "\n".join(["word word word word"] * 300)
    out = contextual_summary(llm, code, "src/pkg/utils.py", "echo")
    assert out == "Parses options for the `echo` command."
    prompt = llm.calls[0]["prompt"]
    assert words(prompt) <= 200 - 60 - 32  # context - answer tokens - template overhead
    assert TRUNCATED_MARK in prompt and "Symbol: echo" in prompt


# ------------------------------------------------------------------------------------------
# The embedded model's task: one or two sentences over the card


def test_summary_prompt_lists_the_card_facts_and_the_question():
    from askrepo.evidence import evidence_card

    card = evidence_card("Where is default_map read?", REAL)
    prompt = summary_prompt("Where is default_map read?", card)
    assert prompt.startswith(
        "Facts:\n[1] `Context.lookup_default` is a function in src/pkg/core.py. "
        "It is documented as: Read the default from default_map."
    )
    assert prompt.endswith(
        "Question: Where is default_map read?\n\nAnswer in one or two sentences."
    )
    # the card names `echo` at its end ("See also"); the model's facts leave it out
    assert [(s.symbol, s.role) for s in card.sources] == [
        ("Context.lookup_default", "definition"),
        ("echo", "see_also"),
    ]
    assert "See also: `echo` (`src/pkg/utils.py:10-12`) [2]." in card.text
    assert "echo" not in prompt


def test_summary_grammar_allows_only_cited_sentences():
    g = summary_grammar(2)
    assert 'num ::= "1" | "2"' in g
    assert 'sentence ::= word (" " word){3,40} " [" num "]."' in g
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    llama_cpp.LlamaGrammar.from_string(g, verbose=False)  # valid GBNF for llama.cpp


def test_a_name_in_a_changed_latin1_file_is_found_as_the_indexer_reads_it(tmp_path):
    from askrepo.answer import in_changed_files

    (tmp_path / "units.py").write_bytes(b"def gr\xf6\xdfe(x):  # in m\xb2\n    return x\n")
    assert in_changed_files(["größe"], tmp_path, ["units.py"]) == [("größe", "units.py")]


def test_the_card_reads_candidates_ranked_without_the_stages_it_does_itself():
    """The card scores classes and windows with its own rules and wants the best chunks of
    several files: its search leaves classes, windows and the tail stage off."""
    from askrepo.answer import card_search_options
    from askrepo.ranking import STAGES

    opts = card_search_options(8, ["extra"])
    assert set(opts.disabled) == {"classes", "windows", "tail"} <= set(STAGES)
    assert opts.k == 8 and opts.extra_queries == ["extra"]
