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
