"""Interface limits: the link a device trained at, the bandwidth it can carry, and results as a fraction of it.

Where the link is read (sysfs only, no tool needed):
  PCIe (NVMe)  current_link_speed/width and max_link_speed/width of the device's PCI function, the max of the
               port above it, and Max_Payload_Size from the PCI Express capability in its config space
               (readable by root; without it the protocol overhead is left out and the ceiling says so).
  SATA         libata's ata_link: sata_spd (current) and hw_sata_spd_limit (maximum).
  SAS          the phys of the SAS port above the disk: negotiated_linkrate, maximum_linkrate_hw; the
               number of phys is the port width.

The overhead model (docs/health.md gives the sources): a ceiling for data payload in one direction, not a
prediction. Commands, completions, flow control and link-management packets are left out, so real drives
stay a few per cent below it.
  PCIe   lane rate x encoding (8b/10b at 2.5 and 5 GT/s, 128b/130b at 8, 16 and 32 GT/s); every TLP carries
         at most MPS payload bytes plus 24 bytes: 8 of framing, sequence number and LCRC (1+2+4+1 at
         2.5/5 GT/s, a 4-byte STP token + 4-byte LCRC from 8 GT/s on) and a 16-byte 4-DW header (64-bit
         addresses). Efficiency MPS / (MPS + 24).
  SATA   8b/10b; a Data FIS carries at most 8192 bytes framed by 16 bytes (SOF, FIS header, CRC, EOF), and
         a pair of ALIGN primitives is sent every 256 Dwords: 8192/8208 x 256/258.
  SAS    8b/10b up to 12 Gb/s, 128b/150b at 22.5 Gbaud; an SSP data frame carries at most 1024 bytes framed
         by 36 bytes (SOF, 24-byte header, CRC, EOF): 1024/1060 per phy, times the port width.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# transfer rate (GT/s) -> (generation, encoding payload fraction, encoding name)
PCIE_GENERATIONS: dict[float, tuple[int, float, str]] = {
    2.5: (1, 8 / 10, "8b/10b"), 5.0: (2, 8 / 10, "8b/10b"), 8.0: (3, 128 / 130, "128b/130b"),
    16.0: (4, 128 / 130, "128b/130b"), 32.0: (5, 128 / 130, "128b/130b"),
}
TLP_OVERHEAD_BYTES = 24  # 8 framing/sequence/LCRC + 16-byte 4-DW header
SATA_EFFICIENCY = 8192 / 8208 * 256 / 258
SAS_FRAME_EFFICIENCY = 1024 / 1060
SAS_ENCODING: dict[float, tuple[float, str]] = {
    1.5: (8 / 10, "8b/10b"), 3.0: (8 / 10, "8b/10b"), 6.0: (8 / 10, "8b/10b"), 12.0: (8 / 10, "8b/10b"),
    22.5: (128 / 150, "128b/150b"),
}
SAS_NOMINAL = {22.5: 24}  # marketed as 24G SAS


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _number(text: str) -> float | None:
    m = re.match(r"\s*(\d+(?:\.\d+)?)", text)
    return float(m.group(1)) if m else None


# ------------------------------------------------------------------ arithmetic

def pcie_generation(gts: float) -> int | None:
    entry = PCIE_GENERATIONS.get(gts)
    return entry[0] if entry else None


def pcie_label(gts: float, width: int) -> str:
    gen = pcie_generation(gts)
    return f"PCIe {gen}.0 x{width}" if gen else f"PCIe {gts:g} GT/s x{width}"


def pcie_line_rate(gts: float, width: int) -> float:
    """Bytes per second the lanes carry after line encoding (one direction)."""
    _, encoding, _ = PCIE_GENERATIONS[gts]
    return gts * 1e9 * encoding / 8 * width


def pcie_usable(gts: float, width: int, mps: int | None) -> float:
    """Payload bytes per second: line rate x MPS / (MPS + 24); the line rate alone when MPS is unknown."""
    rate = pcie_line_rate(gts, width)
    return rate * mps / (mps + TLP_OVERHEAD_BYTES) if mps else rate


def sata_line_rate(gbps: float) -> float:
    return gbps * 1e9 * 0.8 / 8


def sata_usable(gbps: float) -> float:
    return sata_line_rate(gbps) * SATA_EFFICIENCY


def sas_line_rate(gbps: float, width: int = 1) -> float:
    encoding, _ = SAS_ENCODING[gbps]
    return gbps * 1e9 * encoding / 8 * width


def sas_usable(gbps: float, width: int = 1) -> float:
    return sas_line_rate(gbps, width) * SAS_FRAME_EFFICIENCY


def fraction(bw_bytes: float, link: Mapping[str, Any] | None) -> float | None:
    """A throughput (bytes/s, one direction) as a fraction of the link's usable bandwidth (None for an
    emulated device: its link carries nothing)."""
    if not link or not link.get("available") or not link.get("usable_bytes_per_s") or link.get("emulated"):
        return None
    return bw_bytes / float(link["usable_bytes_per_s"])


def fraction_text(bw_bytes: float, link: Mapping[str, Any] | None) -> str:
    """'95 % of PCIe 4.0 x4' ('' without a known link)."""
    f = fraction(bw_bytes, link)
    if f is None:
        return ""
    pct = f * 100
    return f"{pct:.0f} % of {link['label']}" if pct >= 1 else f"{pct:.1f} % of {link['label']}"  # type: ignore[index]


# ------------------------------------------------------------------ sysfs probing

def probe(sysdir: Path | None) -> dict[str, Any]:
    """The link of the block device at `sysdir` (its /sys/class/block entry), or why it is not available."""
    if sysdir is None:
        return _unavailable("no sysfs entry for the device")
    real = sysdir.resolve()
    if (real / "partition").exists():
        real = real.parent
    if real.parent.name.startswith("nvme-subsys"):  # native NVMe multipath: the namespace hangs off the
        for ctrl in sorted(real.parent.iterdir()):  # subsystem; its controllers link to their PCI functions
            if re.fullmatch(r"nvme\d+", ctrl.name):
                found = probe(ctrl / "device") if (ctrl / "device").exists() else None
                if found and found.get("available"):
                    return found
        return _unavailable(f"{real.name}: none of the NVMe subsystem's controllers has a PCIe link")
    parts = real.parts
    if "virtual" in parts:
        return _unavailable(f"{real.name} is a virtual block device (no physical link)")
    if any(p.startswith("usb") for p in parts):
        return _unavailable(f"{real.name} is attached over USB (the bridge's link is not modelled)")
    for anc in [real, *real.parents]:
        if re.fullmatch(r"ata\d+", anc.name):
            return probe_sata(anc)
        if re.fullmatch(r"port-\d+:\d+(:\d+)?", anc.name):
            return probe_sas(anc)
        if (anc / "current_link_speed").exists():
            return probe_pcie(anc)
    return _unavailable(f"no PCIe, SATA or SAS link found above {real} (a virtual or conventional-PCI device)")


def _unavailable(reason: str) -> dict[str, Any]:
    return {"available": False, "reason": reason}


# PCI functions a hypervisor emulates in software (vendor, device or None for any): their link registers hold
# nominal values, and data moves by memory copies that no link limits
EMULATED_PCI = {("0x1b36", None): "QEMU", ("0x1af4", None): "virtio", ("0x8086", "0x5845"): "QEMU"}


def emulated_by(pci: Path) -> str:
    """'QEMU' or 'virtio' when the PCI function at `pci` is emulated in software ('' for hardware)."""
    vendor, device = _read(pci / "vendor").lower(), _read(pci / "device").lower()
    return EMULATED_PCI.get((vendor, device)) or EMULATED_PCI.get((vendor, None)) or ""


def probe_pcie(pci: Path) -> dict[str, Any]:
    cur_gts, max_gts = _number(_read(pci / "current_link_speed")), _number(_read(pci / "max_link_speed"))
    cur_w, max_w = _number(_read(pci / "current_link_width")), _number(_read(pci / "max_link_width"))
    if not cur_gts or not cur_w:
        return _unavailable(f"PCI device {pci.name} reports no trained link (current_link_speed "
                            f"{_read(pci / 'current_link_speed') or 'missing'!r})")
    if cur_gts not in PCIE_GENERATIONS:
        return _unavailable(f"PCI device {pci.name} runs at {cur_gts:g} GT/s, which the overhead model does not "
                            "cover (PCIe 1.0 to 5.0)")
    width = int(cur_w)
    mps = max_payload_size(pci / "config")
    out: dict[str, Any] = {
        "available": True, "kind": "pcie", "device": pci.name, "label": pcie_label(cur_gts, width),
        "current": {"gts": cur_gts, "width": width, "generation": pcie_generation(cur_gts)},
        "encoding": PCIE_GENERATIONS[cur_gts][2],
        "line_rate_bytes_per_s": pcie_line_rate(cur_gts, width),
        "usable_bytes_per_s": pcie_usable(cur_gts, width, mps),
    }
    if max_gts and max_w:
        out["max"] = {"gts": max_gts, "width": int(max_w), "generation": pcie_generation(max_gts)}
        out["max_label"] = pcie_label(max_gts, int(max_w))
    upstream = pci.parent
    up_gts, up_w = _number(_read(upstream / "max_link_speed")), _number(_read(upstream / "max_link_width"))
    if up_gts and up_w:
        out["port_max_label"] = pcie_label(up_gts, int(up_w))
    if mps:
        out["max_payload_bytes"] = mps
        out["model"] = (f"{PCIE_GENERATIONS[cur_gts][2]} encoding, TLPs of {mps} B payload + "
                        f"{TLP_OVERHEAD_BYTES} B (framing, LCRC, 4-DW header)")
    else:
        out["model"] = (f"{PCIE_GENERATIONS[cur_gts][2]} encoding only: Max_Payload_Size unreadable (the PCI "
                        "config space needs root), so TLP overhead is not subtracted")
    below = _below_max(out)
    if below:
        out["below_max"] = below
    emulator = emulated_by(pci)
    if emulator:
        out["emulated"] = (f"{emulator} emulates this device (PCI {_read(pci / 'vendor')}:{_read(pci / 'device')}): "
                           "its link registers are nominal and no link limits its transfers, so results are not "
                           "shown as a share of it")
    return out


def _below_max(link: Mapping[str, Any]) -> str:
    cur, mx = link.get("current") or {}, link.get("max") or {}
    if not mx:
        return ""
    slower = cur.get("gts", 0) < mx.get("gts", 0)
    narrower = cur.get("width", 0) < mx.get("width", 0)
    if not (slower or narrower):
        return ""
    what = " and ".join(x for x, bad in (("speed", slower), ("width", narrower)) if bad)
    text = f"the link trained at {link['label']}, below the device's maximum {link.get('max_label')} ({what})"
    port = link.get("port_max_label")
    if port:
        text += f"; the port above it supports at most {port}"
    return text


def max_payload_size(config: Path) -> int | None:
    """Max_Payload_Size in force (Device Control bits 7:5) from a PCI config space dump; None if unreadable."""
    try:
        cfg = config.read_bytes()
    except OSError:
        return None
    if len(cfg) < 0x40 or not cfg[0x06] & 0x10:  # Status register: capability list present
        return None
    ptr = cfg[0x34] & 0xFC
    for _ in range(48):  # the list is short; the bound guards against loops in a corrupt dump
        if ptr < 0x40 or ptr + 10 > len(cfg):
            return None
        if cfg[ptr] == 0x10:  # PCI Express capability
            devctl = cfg[ptr + 8] | cfg[ptr + 9] << 8
            return 128 << ((devctl >> 5) & 0x7)
        ptr = cfg[ptr + 1] & 0xFC
        if ptr == 0:
            return None
    return None


_SATA_GBPS = re.compile(r"(\d+(?:\.\d+)?)\s*Gbps")


def probe_sata(ata: Path) -> dict[str, Any]:
    links = sorted(ata.glob("link*/ata_link/link*"))
    for link_dir in links:
        cur = _SATA_GBPS.match(_read(link_dir / "sata_spd"))
        if cur is None:
            continue
        gbps = float(cur.group(1))
        out = sata_link(gbps, source=f"{ata.name} {link_dir.name}")
        hw = _SATA_GBPS.match(_read(link_dir / "hw_sata_spd_limit"))
        if hw:
            out["max"] = {"gbps": float(hw.group(1))}
            out["max_label"] = sata_label(float(hw.group(1)))
            below = f"the SATA link trained at {out['label']}, below its maximum {out['max_label']}" \
                if float(hw.group(1)) > gbps else ""
            if below:
                out["below_max"] = below
        return out
    return _unavailable(f"{ata.name}: libata reports no SATA link speed (sata_spd missing or <unknown>)")


def sata_label(gbps: float) -> str:
    return f"SATA {gbps:g} Gb/s"


def sata_link(gbps: float, *, source: str) -> dict[str, Any]:
    return {
        "available": True, "kind": "sata", "device": source, "label": sata_label(gbps),
        "current": {"gbps": gbps}, "encoding": "8b/10b", "line_rate_bytes_per_s": sata_line_rate(gbps),
        "usable_bytes_per_s": sata_usable(gbps),
        "model": "8b/10b encoding, 8192-byte Data FIS + 16 B framing, an ALIGN pair every 256 Dwords; "
                 "half duplex: reads and writes share it",
    }


_SAS_GBIT = re.compile(r"(\d+(?:\.\d+)?)\s*Gbit")


def sas_label(gbps: float, width: int) -> str:
    nominal = SAS_NOMINAL.get(gbps)
    name = f"{nominal}G SAS" if nominal else f"SAS {gbps:g} Gb/s"
    return f"{name} x{width}" if width > 1 else name


def probe_sas(port: Path) -> dict[str, Any]:
    rates, maxima = [], []
    for phy in sorted(p for p in port.iterdir() if p.name.startswith("phy-")):
        cls = phy.resolve() / "sas_phy" / phy.name
        m = _SAS_GBIT.match(_read(cls / "negotiated_linkrate"))
        if m:
            rates.append(float(m.group(1)))
            hw = _SAS_GBIT.match(_read(cls / "maximum_linkrate_hw"))
            if hw:
                maxima.append(float(hw.group(1)))
    if not rates:
        return _unavailable(f"{port.name}: no SAS phy reports a negotiated link rate")
    gbps, width = min(rates), len(rates)
    if gbps not in SAS_ENCODING:
        return _unavailable(f"{port.name}: {gbps:g} Gb/s is not a SAS rate the model covers")
    out: dict[str, Any] = {
        "available": True, "kind": "sas", "device": port.name, "label": sas_label(gbps, width),
        "current": {"gbps": gbps, "width": width}, "encoding": SAS_ENCODING[gbps][1],
        "line_rate_bytes_per_s": sas_line_rate(gbps, width), "usable_bytes_per_s": sas_usable(gbps, width),
        "model": f"{SAS_ENCODING[gbps][1]} encoding, SSP frames of 1024 B payload + 36 B framing",
    }
    if maxima:
        out["max"] = {"gbps": max(maxima), "width": width}
        out["max_label"] = sas_label(max(maxima), width)
        if max(maxima) > gbps:
            out["below_max"] = f"the SAS link negotiated {out['label']}, below the phys' maximum {out['max_label']}"
    return out
