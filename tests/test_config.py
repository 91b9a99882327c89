"""On/off settings (askrepo.config.flag): one parser for every boolean ASKREPO_* variable."""

from __future__ import annotations

import pytest

from askrepo import config
from askrepo.errors import UsageError


@pytest.mark.parametrize(
    ("raw", "default", "expected"),
    [
        (None, True, True),
        (None, False, False),
        ("", True, True),
        ("  ", False, False),
        ("1", False, True),
        ("true", False, True),
        (" YES ", False, True),
        ("On", False, True),
        ("0", True, False),
        ("false", True, False),
        ("No", True, False),
        ("OFF ", True, False),
    ],
)
def test_flag_values(monkeypatch, raw, default, expected):
    if raw is None:
        monkeypatch.delenv("ASKREPO_X", raising=False)
    else:
        monkeypatch.setenv("ASKREPO_X", raw)
    assert config.flag("ASKREPO_X", default) is expected


@pytest.mark.parametrize("raw", ["2", "maybe", "enabled", "-1", "y"])
def test_flag_refuses_anything_else_in_one_line(monkeypatch, raw):
    monkeypatch.setenv("ASKREPO_X", raw)
    with pytest.raises(UsageError) as exc:
        config.flag("ASKREPO_X", True)
    msg = str(exc.value)
    assert msg == (
        f"ASKREPO_X={raw!r} is neither on nor off — set ASKREPO_X=1 or ASKREPO_X=0, "
        "or unset it for the default (1)"
    )


@pytest.mark.parametrize(
    ("setting", "name", "default"),
    [
        (config.enrich, "ASKREPO_ENRICH", True),
        (config.exclude_tests, "ASKREPO_EXCLUDE_TESTS", True),
        (config.exclude_docs, "ASKREPO_EXCLUDE_DOCS", True),
        (config.auto_refresh, "ASKREPO_AUTO_REFRESH", False),
        (config.mcp_refresh, "ASKREPO_MCP_REFRESH", True),
    ],
)
def test_every_on_off_setting_goes_through_flag(monkeypatch, setting, name, default):
    monkeypatch.delenv(name, raising=False)
    assert setting() is default
    monkeypatch.setenv(name, "off" if default else "on")
    assert setting() is not default
    monkeypatch.setenv(name, "sometimes")
    with pytest.raises(UsageError, match=f"^{name}='sometimes' is neither on nor off"):
        setting()
    with pytest.raises(UsageError, match=f"^{name}='sometimes'"):
        config.validate()  # every command reports it at once
