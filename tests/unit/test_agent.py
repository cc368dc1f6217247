"""`ssdlab agent` listens on loopback unless told otherwise, and says why."""

from __future__ import annotations

import pytest

from conftest import CliRunner
from ssdlab.commands.agent import check_bind
from ssdlab.errors import UsageError


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "10.1.2.3", "lab-node-7"])  # noqa: S104 - refused addresses
def test_agent_refuses_non_loopback_without_the_flag(cli: CliRunner, bind: str) -> None:
    res = cli("agent", "--bind", bind, traceback=False)
    assert res.code == 2
    assert len(res.err_lines) == 1
    line = res.err_lines[0]
    for needle in ("refusing to listen", "no authentication", "run commands", "SSH tunnel", "--insecure-bind"):
        assert needle in line


def test_insecure_bind_is_allowed_with_a_warning() -> None:
    warning = check_bind("0.0.0.0", insecure=True)  # noqa: S104 - the explicit, warned case
    assert warning.startswith("WARNING: listening on every interface without authentication")
    assert check_bind("127.0.0.5", insecure=False) == ""
    assert check_bind("::1", insecure=False) == ""
    with pytest.raises(UsageError):
        check_bind("192.168.0.10", insecure=False)


def test_agent_rejects_bad_port_and_interval(cli: CliRunner) -> None:
    assert cli("agent", "--port", "0", traceback=False).code == 2
    assert cli("agent", "--interval", "0.01", traceback=False).code == 2
