"""What is refused before anything runs, on real NVMe namespaces: a namespace carrying a filesystem, a mounted one,
and a power state the controller does not have. Each refusal is one line with its exit code and leaves no
results directory; the device is as it was."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from vmlab import Lab


@pytest.fixture(scope="module")
def ext4(lab: Lab) -> Iterator[str]:
    """The third namespace with an ext4 filesystem on it (wiped afterwards)."""
    dev = lab.ns(3)
    lab.tool("mkfs.ext4", "-q", "-F", dev, timeout=300)
    yield dev
    lab.vm.run(["umount", "/run/ssdlab-mnt"], timeout=60)
    lab.tool("wipefs", "-a", dev)


def test_a_namespace_with_a_filesystem_is_refused(lab: Lab, ext4: str) -> None:
    kind = lab.tool("blkid", "-p", "-o", "value", "-s", "TYPE", ext4).strip()  # the kernel tools' answer
    assert kind == "ext4"
    run = lab.ssdlab("run", "quick", "--target", ext4, "--runtime", "1", "--yes", out="gate-fs")
    assert run.rc == 4, run.res.describe()
    assert run.out is None  # refused before the results directory exists
    errors = run.error_lines()
    assert len(errors) == 1
    assert "Traceback" not in run.res.stderr
    assert f"{ext4} is not blank: it carries an existing {kind} signature" in errors[0]
    assert lab.tool("blkid", "-p", "-o", "value", "-s", "TYPE", ext4).strip() == "ext4"  # untouched


def test_a_mounted_namespace_is_refused_even_with_destructive(lab: Lab, ext4: str) -> None:
    lab.tool("mkdir", "-p", "/run/ssdlab-mnt")
    lab.tool("mount", ext4, "/run/ssdlab-mnt")
    try:
        mounts = lab.tool("cat", "/proc/self/mounts")
        assert re.search(rf"^{re.escape(ext4)} /run/ssdlab-mnt ", mounts, re.M)
        run = lab.ssdlab("run", "quick", "--target", ext4, "--runtime", "1", "--yes", "--destructive",
                         out="gate-mounted")
        assert run.rc == 4, run.res.describe()
        assert run.out is None
        errors = run.error_lines()
        assert len(errors) == 1, run.res.describe()
        assert f"{ext4} is mounted on /run/ssdlab-mnt" in errors[0]
    finally:
        lab.tool("umount", "/run/ssdlab-mnt")


def test_a_power_state_the_controller_lacks_is_refused_before_anything_runs(lab: Lab) -> None:
    ctrl = lab.json("nvme", "id-ctrl", lab.ctrl_a, "--output-format=json")
    states = ctrl["npss"] + 1  # NPSS is zero-based
    before = lab.tool("nvme", "get-feature", lab.ctrl_a, "-f", "2")
    run = lab.ssdlab("run", "quick", "--target", lab.ns(1), "--power-state", str(states), "--yes",
                     out="power-state")
    assert run.rc == 2, run.res.describe()
    assert run.out is None
    errors = run.error_lines()
    assert errors == [f"ssdlab: error: --power-state {states}: {lab.ns(1)} has power states 0 to {states - 1}"]
    assert lab.tool("nvme", "get-feature", lab.ctrl_a, "-f", "2") == before
