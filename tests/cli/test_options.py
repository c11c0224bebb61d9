"""Options shared by the commands (`cli/options.py`): `--window` values, their suffixes and their limits."""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import GOOD

runner = CliRunner()


@pytest.mark.parametrize(
    ("value", "tokens"),
    [
        ("200000", 200_000),
        ("200k", 200_000),
        ("200K", 200_000),
        ("1M", 1_000_000),
        ("1m", 1_000_000),
        ("1.5M", 1_500_000),
        ("10000000", 10_000_000),
    ],
)
def test_cli_window_accepts_suffixes(value, tokens):
    """--window takes plain tokens or k/M suffixes, up to the cap; the JSON window is the tokens."""
    out = runner.invoke(app, ["context", "trace", GOOD, "--window", value, "--json"], catch_exceptions=False)
    assert out.exit_code == 0
    assert orjson.loads(out.stdout)[0]["window"] == tokens


@pytest.mark.parametrize(
    "bad", ["0", "-5", "lots", "", "0k", "1.5", "200kk", "1e6", "10000001", "20M", "99999999999999999999"]
)
def test_cli_bad_window_is_a_usage_error(bad):
    """Garbage, fractions of a token, 0 and values above the cap are usage errors (exit 2) quoting the value."""
    for command in ("trace", "usage"):
        out = runner.invoke(app, ["context", command, GOOD, "--window", bad])
        assert out.exit_code == 2
        assert f"Invalid value for '--window': {bad!r}" in out.stderr
        assert out.stdout == ""
