"""Syntax highlighting for the web page: one HTML string per source line (Pygments).

Per line, so the page can number lines and mark cited ranges; a token that spans lines (a
docstring) is split at the newlines and each piece keeps the token's CSS class.
"""

from __future__ import annotations

import functools
import html

ALIASES = {"tsx": "tsx", "csharp": "csharp", "bash": "bash", "cpp": "cpp", "markdown": "md"}


@functools.lru_cache(maxsize=64)
def _lexer(language: str | None, path: str | None):
    from pygments.lexers import TextLexer, get_lexer_by_name, get_lexer_for_filename
    from pygments.util import ClassNotFound

    if language:
        try:
            return get_lexer_by_name(ALIASES.get(language, language), stripnl=False)
        except ClassNotFound:
            pass
    if path:
        try:
            return get_lexer_for_filename(path, stripnl=False)
        except ClassNotFound:
            pass
    return TextLexer(stripnl=False)


def highlight_lines(
    lines: list[str], language: str | None = None, path: str | None = None
) -> list[str]:
    """HTML for each of ``lines`` (escaped; tokens wrapped in ``<span class="…">``).

    Lines are askrepo's (``askrepo.lines``: cut at ``\\n`` only), so the text goes to the lexer
    unprocessed: ``get_tokens`` would turn a lone ``\\r`` into a line break and shift every
    later line off its number.
    """
    from pygments.token import STANDARD_TYPES

    if not lines:
        return []
    lexer = _lexer(language, path)
    out: list[str] = [""]
    for _, ttype, value in lexer.get_tokens_unprocessed("\n".join(lines) + "\n"):
        cls = STANDARD_TYPES.get(ttype)
        while cls is None and ttype.parent is not None:
            ttype = ttype.parent
            cls = STANDARD_TYPES.get(ttype)
        for i, piece in enumerate(value.split("\n")):
            if i:
                out.append("")
            if piece:
                text = html.escape(piece, quote=False)
                out[-1] += f'<span class="{cls}">{text}</span>' if cls else text
    # the text ends with one newline of its own
    while len(out) > len(lines) and out[-1] == "":
        out.pop()
    out += [""] * (len(lines) - len(out))
    return out[: len(lines)]


@functools.lru_cache(maxsize=1)
def css() -> str:
    from pygments.formatters import HtmlFormatter

    return HtmlFormatter(style="friendly").get_style_defs(".code")
