#!/usr/bin/env bash
# The VM tier (`bash scripts/test.sh --vm`): installs what the guest needs, boots one QEMU guest with an NVMe
# controller (three namespaces, 512 B and 4 KiB LBA formats, behind a PCIe root port), a second controller that
# refuses every purge, and an AHCI SATA disk, and runs tests/vm in it (tests/vm/machine.py). KVM when it works
# here, software emulation otherwise. Every wait has a hard limit; the whole tier is killed after VM_TIER_LIMIT_S.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# CI runs the default tier (~13 min on 2 shared cores) and this one in 30 min: this one is stopped after 15 (it takes
# about 7 CPU-minutes without KVM; README)
VM_TIER_LIMIT_S=${VM_TIER_LIMIT_S:-900}

say() { printf 'test-vm: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

bash scripts/setup.sh --dev

# qemu-system-x86: the machine (q35, NVMe, AHCI); linux-image-amd64: the guest's kernel and its modules (nvme,
# ahci, 9p); busybox-static: virtme-ng's initramfs; nvme-cli and smartmontools: the devices' own answers, in the
# guest and for ssdlab; e2fsprogs: mkfs.ext4 for the write gate's tests
# The guest's kernel is an image in /boot with its modules in /lib/modules/RELEASE (modules.dep made by depmod).
# A machine can hold the image without its modules (a container image that dropped /lib/modules, a kernel half
# removed): the image's package is then installed again; modules without modules.dep get depmod.
kernel_ok() {
    local k
    for k in /boot/vmlinuz-*; do
        [ -r "$k" ] && [ -f "/lib/modules/${k#/boot/vmlinuz-}/modules.dep" ] && return 0
    done
    return 1
}
# virtme-ng puts busybox into the guest's initramfs, where no shared library exists: it must be the static one
static_busybox() {
    local b p
    for b in busybox-static busybox.static busybox; do
        p=$(command -v "$b" 2>/dev/null) || continue
        ldd "$p" >/dev/null 2>&1 || return 0  # "not a dynamic executable"
    done
    return 1
}
apt_install() {
    if [ "$apt_updated" = no ]; then
        as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 update -qq
        apt_updated=yes
    fi
    # INITRD=No: Debian's kernel postinst would build an initramfs the guest never uses (virtme-ng makes its own)
    # (another apt on the machine holds the lock for a while: wait for it)
    as_root env DEBIAN_FRONTEND=noninteractive INITRD=No apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
        --no-install-recommends "$@" >/dev/null
}
apt_updated=no
need=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
kernel_ok || dpkg-query -W -f '${Status}' linux-image-amd64 2>/dev/null | grep -q ' installed$' \
    || need+=(linux-image-amd64)
static_busybox || need+=(busybox-static)
command -v nvme >/dev/null 2>&1 || need+=(nvme-cli)
command -v smartctl >/dev/null 2>&1 || need+=(smartmontools)
command -v mkfs.ext4 >/dev/null 2>&1 || need+=(e2fsprogs)
if [ "${#need[@]}" -gt 0 ]; then
    say "installing ${need[*]}"
    apt_install "${need[@]}"
fi
if ! kernel_ok; then
    for k in /boot/vmlinuz-*; do
        [ -e "$k" ] || continue
        release=${k#/boot/vmlinuz-}
        if [ -d "/lib/modules/$release/kernel" ]; then
            say "kernel $release: modules without modules.dep; running depmod"
            as_root depmod "$release"
        fi
    done
fi
if ! kernel_ok; then
    images=$(dpkg-query -W -f '${Package} ${Status}\n' 'linux-image-[0-9]*' 2>/dev/null \
             | awk '$NF == "installed" { print $1 }')
    if [ -n "$images" ]; then
        say "reinstalling $(echo $images) (its kernel image or modules are missing)"
        apt_install --reinstall $images
    fi
fi
if ! kernel_ok; then
    say "no bootable kernel: no /boot/vmlinuz-* with its /lib/modules (linux-image-amd64 did not provide one)"
    exit 3
fi
[ -x .venv/bin/vng ] || .venv/bin/python -m pip install -q -e ".[dev,vm]"  # virtme-ng (pyproject's vm extra)
# the guest sees this tree read-only: compile the bytecode here, once, so it does not compile on every import
.venv/bin/python -m compileall -q src >/dev/null

# its own temporary directory (backing images, the shared directory, the console log): kept when a test fails
work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-vm.XXXXXX")
say "starting ($(nproc) CPUs, load $(cut -d" " -f1-3 /proc/loadavg); limit ${VM_TIER_LIMIT_S} s; files in $work)"
start=$(date +%s)
rc=0
SSDLAB_VM=1 timeout --kill-after=30 "$VM_TIER_LIMIT_S" .venv/bin/python -m pytest -q -p no:cacheprovider \
    --basetemp="$work" --durations=0 tests/vm "$@" || rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    say "the VM tier did not finish within ${VM_TIER_LIMIT_S} s and was stopped"
fi
if [ "$rc" -eq 0 ]; then
    rm -rf "$work"
    say "passed in $(( $(date +%s) - start )) s"
else
    say "FAILED (exit $rc) after $(( $(date +%s) - start )) s; the guest's console log and results are under $work"
fi
exit "$rc"
