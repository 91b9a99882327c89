"""The examples in askrepo's docstrings (``>>>``) are run: worked numbers that must stay true."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import askrepo

PACKAGE = Path(askrepo.__file__).parent
MODULES = sorted(
    "askrepo." + ".".join(p.relative_to(PACKAGE).with_suffix("").parts)
    for p in PACKAGE.rglob("*.py")
    if ">>> " in p.read_text(encoding="utf-8")
)


def test_the_modules_with_examples_are_found():
    assert {"askrepo.ranking", "askrepo.query", "askrepo.declarations"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, result
