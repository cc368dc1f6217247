#!/usr/bin/env bash
# The VM tier (`bash scripts/test.sh --vm`): installs what the guest needs, boots one QEMU guest with an NVMe
# controller (three namespaces, 512 B and 4 KiB LBA formats, behind a PCIe root port), a second controller that
# refuses every purge, and an AHCI SATA disk, and runs tests/vm in it (tests/vm/machine.py). KVM when it works
# here, software emulation otherwise. Every wait has a hard limit; the whole tier is killed after VM_TIER_LIMIT_S.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VM_TIER_LIMIT_S=${VM_TIER_LIMIT_S:-1500}

say() { printf 'test-vm: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

bash scripts/setup.sh --dev

# qemu-system-x86: the machine (q35, NVMe, AHCI); linux-image-amd64: the guest's kernel and its modules (nvme,
# ahci, 9p); busybox-static: virtme-ng's initramfs; nvme-cli and smartmontools: the devices' own answers, in the
# guest and for ssdlab; e2fsprogs: mkfs.ext4 for the write gate's tests
need=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
kernel_ok=no
for k in /boot/vmlinuz-*; do
    [ -e "$k" ] && [ -f "/lib/modules/${k#/boot/vmlinuz-}/modules.dep" ] && kernel_ok=yes
done
[ "$kernel_ok" = yes ] || need+=(linux-image-amd64)
command -v busybox >/dev/null 2>&1 || [ -x /bin/busybox ] || need+=(busybox-static)
command -v nvme >/dev/null 2>&1 || need+=(nvme-cli)
command -v smartctl >/dev/null 2>&1 || need+=(smartmontools)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
if [ "${#need[@]}" -gt 0 ]; then
    say "installing ${need[*]}"
    # INITRD=No: Debian's kernel postinst would build an initramfs the guest never uses (virtme-ng makes its own)
    as_root env DEBIAN_FRONTEND=noninteractive INITRD=No apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive INITRD=No apt-get install -y -qq --no-install-recommends \
        "${need[@]}" >/dev/null
fi
[ -x .venv/bin/vng ] || .venv/bin/python -m pip install -q -e ".[dev,vm]"  # virtme-ng (pyproject's vm extra)
# the guest sees this tree read-only: compile the bytecode here, once, so it does not compile on every import
.venv/bin/python -m compileall -q src >/dev/null

# its own temporary directory (backing images, the shared directory, the console log): kept when a test fails
work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-vm.XXXXXX")
say "starting ($(nproc) CPUs; limit ${VM_TIER_LIMIT_S} s; files in $work)"
start=$(date +%s)
rc=0
SSDLAB_VM=1 timeout --kill-after=30 "$VM_TIER_LIMIT_S" .venv/bin/python -m pytest -q -p no:cacheprovider \
    --basetemp="$work" --durations=0 tests/vm "$@" || rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    say "the VM tier did not finish within ${VM_TIER_LIMIT_S} s and was stopped"
fi
[ "$rc" -eq 0 ] && rm -rf "$work"
say "finished in $(( $(date +%s) - start )) s (exit $rc)"
exit "$rc"
