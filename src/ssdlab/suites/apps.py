"""Application models (VDBench Oracle/SQL/VDI/VSI, classic Iometer access specifications) translated to fio.

A model is what a reviewer quotes: read percentage, block-size mix per direction (percent of I/Os), the
random share and the data-reduction ratios. `translate()` turns it into Workload fields:

- rwmixread           = the read percentage rounded to an integer (fio takes integers only);
- bssplit             = each direction's mix, renormalised to exactly 100 with largest-remainder rounding
                        when the published shares do not add up (fio silently gives the remainder to the
                        largest bucket, vdbench refuses); `<reads>,<writes>` when the directions differ;
- percentage_random   = the random share (vdbench seekpct); 100 needs no option;
- dedupe_percentage   = round(100 * (1 - 1/dedupratio));
- buffer_compress_percentage = round(100 * (1 - 1/compratio)), with buffer_compress_chunk=4k.

Every translation carries a record (published values, fio values, notes) that is stored in the point tags,
so the report can show exactly how a published model became a job file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.units import format_bs, parse_size


@dataclass(frozen=True)
class AppModel:
    """A published application workload model."""

    name: str
    read_pct: float
    read_mix: Mapping[int, float]  # block size (bytes) -> percent of reads
    write_mix: Mapping[int, float]  # block size (bytes) -> percent of writes
    random_pct: float = 100.0
    dedupratio: float = 1.0
    compratio: float = 1.0
    source: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Translation:
    """The fio side of a model plus the record shown in the report."""

    rw: str
    bs: int
    bssplit: str | None
    rwmixread: int | None
    options: Mapping[str, str]
    record: Mapping[str, Any] = field(default_factory=dict)


def _size_key(text: str) -> int:
    try:
        return parse_size(str(text))
    except UsageError:
        raise UsageError(f"bad block size {text!r} in an application model mix") from None


def model_from_dict(name: str, d: Mapping[str, Any]) -> AppModel:
    """An AppModel from a TOML [app] table (sizes as strings like '4k', shares in percent)."""
    known = {"read_pct", "read_mix", "write_mix", "mix", "random_pct", "dedupratio", "compratio", "source",
             "notes", "name"}
    unknown = sorted(set(d) - known)
    if unknown:
        raise UsageError(f"unknown key(s) {', '.join(unknown)} in [app] of {name}: use {', '.join(sorted(known))}")
    try:
        read_pct = float(d["read_pct"])
    except (KeyError, TypeError, ValueError):
        raise UsageError(f"[app] of {name} needs read_pct = <0..100>") from None
    mixes: dict[str, dict[int, float]] = {}
    if "mix" in d and ("read_mix" in d or "write_mix" in d):
        raise UsageError(f"[app] of {name}: give either mix (both directions) or read_mix/write_mix")
    for key in ("read_mix", "write_mix"):
        raw = d.get("mix", d.get(key, {}))
        if not isinstance(raw, Mapping):
            raise UsageError(f"{key} in [app] of {name} must be a table like {{ \"4k\" = 60, \"8k\" = 40 }}")
        mixes[key] = {_size_key(k): float(v) for k, v in raw.items()}
    model = AppModel(
        name=str(d.get("name", name)), read_pct=read_pct, read_mix=mixes["read_mix"],
        write_mix=mixes["write_mix"], random_pct=float(d.get("random_pct", 100.0)),
        dedupratio=float(d.get("dedupratio", 1.0)), compratio=float(d.get("compratio", 1.0)),
        source=str(d.get("source", "")), notes=tuple(str(n) for n in d.get("notes", ())),
    )
    validate(model)
    return model


def validate(model: AppModel) -> None:
    """Reject models fio cannot express (bad percentages, sizes not multiples of 512 B, empty mixes)."""
    if not 0 <= model.read_pct <= 100:
        raise UsageError(f"{model.name}: read_pct {model.read_pct} is outside 0..100")
    if not 0 < model.random_pct <= 100:
        raise UsageError(f"{model.name}: random_pct {model.random_pct} must be above 0 and at most 100")
    for label, mix, used in (("read", model.read_mix, model.read_pct > 0),
                             ("write", model.write_mix, model.read_pct < 100)):
        if used and not mix:
            raise UsageError(f"{model.name}: the {label} block-size mix is empty")
        for size, pct in mix.items():
            if size % 512:
                raise UsageError(f"{model.name}: block size {size} B is not a multiple of 512 B")
            if pct <= 0:
                raise UsageError(f"{model.name}: share {pct} for {format_bs(size)} must be positive")
    for label, ratio in (("dedupratio", model.dedupratio), ("compratio", model.compratio)):
        if ratio < 1:
            raise UsageError(f"{model.name}: {label} {ratio} must be at least 1 (1 = no reduction)")


def renormalise(mix: Mapping[int, float]) -> dict[int, int]:
    """Integer shares summing to exactly 100, proportional to `mix` (largest-remainder rounding).

    Ties in the remainder go to the larger share, then the smaller block size, so the result is stable.
    """
    total = sum(mix.values())
    if total <= 0:
        return {}
    exact = {size: pct * 100.0 / total for size, pct in mix.items()}
    floors = {size: math.floor(v + 1e-9) for size, v in exact.items()}
    left = 100 - sum(floors.values())
    order = sorted(exact, key=lambda s: (-(exact[s] - floors[s]), -exact[s], s))
    for size in order[:left]:
        floors[size] += 1
    return {size: floors[size] for size in sorted(floors) if floors[size] > 0}


def bssplit_text(shares: Mapping[int, int]) -> str:
    """fio bssplit for one direction: '4k/28:8k/48:16k/24'."""
    return ":".join(f"{format_bs(size).lower()}/{pct}" for size, pct in sorted(shares.items()))


def ratio_to_pct(ratio: float) -> int:
    """vdbench ratio (dedupratio/compratio) -> fio percentage: round(100 * (1 - 1/R))."""
    return round(100 * (1 - 1 / ratio)) if ratio > 1 else 0


def mean_bs(shares: Mapping[int, int | float]) -> float:
    """Mean block size (bytes) of a mix."""
    total = sum(shares.values())
    return sum(s * p for s, p in shares.items()) / total if total else 0.0


def translate(model: AppModel) -> Translation:
    """fio workload fields for `model`, with the record of every rounding and renormalisation."""
    validate(model)
    notes = list(model.notes)
    rwmixread = round(model.read_pct)
    if rwmixread != model.read_pct:
        notes.append(f"read share {model.read_pct:g}% rounded to rwmixread={rwmixread} (fio takes integers)")
    reads = model.read_pct > 0
    writes = model.read_pct < 100
    rw = "randrw" if reads and writes else "randread" if reads else "randwrite"
    directions: dict[str, dict[str, Any]] = {}
    shares: dict[str, dict[int, int]] = {}
    for label, mix, used in (("read", model.read_mix, reads), ("write", model.write_mix, writes)):
        if used:
            shares[label], directions[label] = _direction_mix(label, mix, notes)
    bs, bssplit = _block_sizes(shares)
    options = _data_options(model)
    record = {
        "model": model.name, "source": model.source,
        "published": {"read_pct": model.read_pct, "random_pct": model.random_pct,
                      "dedupratio": model.dedupratio, "compratio": model.compratio},
        "directions": directions,
        "fio": {"rw": rw, **({"rwmixread": rwmixread} if rw == "randrw" else {}),
                **({"bssplit": bssplit} if bssplit else {"bs": format_bs(bs)}), **options},
        "notes": notes,
    }
    return Translation(rw=rw, bs=bs, bssplit=bssplit, rwmixread=rwmixread if rw == "randrw" else None,
                       options=options, record=record)


def _direction_mix(label: str, mix: Mapping[int, float], notes: list[str]) -> tuple[dict[int, int], dict[str, Any]]:
    """One direction's block-size mix as fio takes it (integer shares of 100) and its record; what had to be
    renormalised or rounded is noted."""
    listed = sum(mix.values())
    norm = renormalise(mix)
    record = {
        "published": {format_bs(s): p for s, p in sorted(mix.items())},
        "listed_sum": round(listed, 4),
        "fio": {format_bs(s): p for s, p in norm.items()},
        "mean_bs_kib": round(mean_bs(norm) / 1024, 2),
    }
    if abs(listed - 100) > 1e-6:
        notes.append(f"{label} mix lists {listed:g}% of I/Os; renormalised to 100 "
                     f"({bssplit_text(norm)}), because the unlisted {100 - listed:g}% has unknown sizes")
    elif any(p != int(p) for p in mix.values()):
        notes.append(f"{label} mix rounded to integer shares ({bssplit_text(norm)})")
    return norm, record


def _block_sizes(shares: Mapping[str, dict[int, int]]) -> tuple[int, str | None]:
    """The workload's bs and bssplit: one mix for every direction ('reads,writes' when they differ)."""
    parts = [shares[d] for d in ("read", "write") if d in shares]
    if len(parts) == 1 or parts[0] == parts[-1]:
        only = parts[0]
        return min(only), None if len(only) == 1 else bssplit_text(only)
    return min(min(p) for p in parts), f"{bssplit_text(shares['read'])},{bssplit_text(shares['write'])}"


def _data_options(model: AppModel) -> dict[str, str]:
    """fio options for the model's random share and its data's dedupe and compression ratios."""
    options: dict[str, str] = {}
    if model.random_pct < 100:
        options["percentage_random"] = f"{model.random_pct:g}"
    dedupe = ratio_to_pct(model.dedupratio)
    comp = ratio_to_pct(model.compratio)
    if dedupe:
        options["dedupe_percentage"] = str(dedupe)
    if comp:
        options["buffer_compress_percentage"] = str(comp)
        options["buffer_compress_chunk"] = "4k"
    return options
