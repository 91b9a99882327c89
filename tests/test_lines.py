from askrepo.lines import span_hash, split_lines


def test_split_lines_counts_newlines_only():
    text = "a\fb\n\x1cc\u2028d\r\ne\x85f\n"
    assert split_lines(text) == ["a\fb", "\x1cc\u2028d\r", "e\x85f"]
    assert len(text.splitlines()) > len(split_lines(text))  # the rule str.splitlines breaks
    assert split_lines("") == [] and split_lines("x") == ["x"] and split_lines("x\n\n") == ["x", ""]


def test_span_hash_ignores_cr_and_trailing_space():
    assert span_hash("a\r\nb  \n") == span_hash(["a", "b"])
    assert span_hash(["a", "b"]) != span_hash(["b", "a"])
    assert len(span_hash("x")) == 16


def test_truncated_snippet_end_line_counts_newlines_only():
    """A snippet with form feed, \\x1c and \\u2028 inside lines: the cut keeps 2 real lines,
    so its end_line is start + 1 (str.splitlines() would count 4 lines)."""
    from askrepo.answer import TRUNCATED_MARK, _snippet_block, _truncate
    from askrepo.datatypes import Hit

    body = ["a\fb c", "d\x1ce f", "g\u2028h i", "j k l", "m n o"]
    hit = Hit(1, "f.py", 10, 14, "sym", "function", "python", 1.0, {}, None, "\n".join(body))
    want = Hit(
        1, "f.py", 10, 11, "sym", "function", "python", 1.0, {}, None,
        "\n".join([*body[:2], TRUNCATED_MARK]),
    )  # fmt: skip

    def words(text: str) -> int:
        return len(text.split())

    cut = _truncate(hit, 1, words(_snippet_block(1, want)), words)
    assert cut is not None
    assert (cut.start_line, cut.end_line) == (10, 11)
    assert cut.text == want.text


def test_chunker_and_answer_share_the_rule():
    from askrepo import chunker, lines

    assert chunker.split_lines is lines.split_lines
