"""SNIA PTS 2.0 steady state, exactly as definition 2.1.24 states it (see docs/pts.md).

Over a measurement window of the last 5 rounds (x-4 ... x) of a tracking variable y:
  (a) max(y) - min(y)                         <= 20 % of mean(y)
  (b) excursion of the least-squares line     <= 10 % of mean(y)
      (for rounds R = x-4 ... x that is |m| * 4, m the fitted slope per round)
Steady state at round x holds when (a) and (b) hold for EVERY tracking variable in the same window.

All arithmetic is done with exact rationals (`fractions.Fraction`): a decimal string converts exactly and a
float converts through its shortest decimal form (1.1 -> 11/10), so boundary cases such as a range of exactly
20 % pass with `<=` and never flip on binary rounding. The 90 %/110 % lines of the report's window plot
are guides, not this criterion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from ssdlab.errors import UsageError

WINDOW = 5
RANGE_LIMIT = Fraction(20, 100)  # (a): max - min <= 20 % of the average
EXCURSION_LIMIT = Fraction(10, 100)  # (b): fit excursion <= 10 % of the average

Number = int | float | Fraction | Decimal | str


def exact(value: Number) -> Fraction:
    """An exact rational for a number or a decimal string ('1e5', '99.5'); raises UsageError otherwise."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise UsageError(f"{value!r} is not a number")
    if isinstance(value, (int, Decimal)):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise UsageError(f"{value!r} is not a finite number")
        return Fraction(Decimal(repr(value)))  # the decimal a reader sees: 1.1 is 11/10, not 1.100000000000000088...
    text = str(value).strip().replace("_", "")
    try:
        d = Decimal(text)
    except InvalidOperation:
        raise UsageError(f"{value!r} is not a number") from None
    if not d.is_finite():
        raise UsageError(f"{value!r} is not a finite number")
    return Fraction(d)


@dataclass(frozen=True)
class Determination:
    """The steady-state determination of one tracking variable over one window (exact values)."""

    rounds: tuple[int, ...]
    values: tuple[Fraction, ...]
    average: Fraction
    range: Fraction  # max - min of the data
    allowed_range: Fraction  # 20 % of the average
    slope: Fraction  # m of the least-squares fit y = m*R + b
    intercept: Fraction  # b
    fit_excursion: Fraction  # max(fit) - min(fit) over the window = |m| * (R_last - R_first)
    allowed_excursion: Fraction  # 10 % of the average

    @property
    def range_ok(self) -> bool:
        """Criterion (a), with <= (the spec body's "no more than")."""
        return self.average > 0 and self.range <= self.allowed_range

    @property
    def excursion_ok(self) -> bool:
        """Criterion (b), with <= (the spec body's "within")."""
        return self.average > 0 and self.fit_excursion <= self.allowed_excursion

    @property
    def steady(self) -> bool:
        """(a) and (b) both hold."""
        return self.range_ok and self.excursion_ok

    @property
    def range_pct(self) -> float:
        """Measured range as a percentage of the average."""
        return float(100 * self.range / self.average) if self.average else float("inf")

    @property
    def excursion_pct(self) -> float:
        """Measured fit excursion as a percentage of the average."""
        return float(100 * self.fit_excursion / self.average) if self.average else float("inf")

    def fit(self, r: float) -> float:
        """Value of the best-fit line at round r."""
        return float(self.slope) * r + float(self.intercept)

    def formula(self, digits: int = 6) -> str:
        """The fit written as the spec's report does: 'm·R + b'."""
        m = _fmt(float(self.slope), digits)
        b = float(self.intercept)
        sign = "-" if b < 0 else "+"
        return f"{m}·R {sign} {_fmt(abs(b), digits)}"

    def as_dict(self) -> dict[str, object]:
        """Plain floats for JSON (run records, exports)."""
        return {
            "rounds": list(self.rounds), "values": [float(v) for v in self.values],
            "average": float(self.average), "range": float(self.range),
            "allowed_range": float(self.allowed_range), "range_pct": self.range_pct,
            "slope": float(self.slope), "intercept": float(self.intercept),
            "fit_excursion": float(self.fit_excursion), "allowed_excursion": float(self.allowed_excursion),
            "excursion_pct": self.excursion_pct, "formula": self.formula(),
            "range_ok": self.range_ok, "excursion_ok": self.excursion_ok, "steady": self.steady,
        }


def _fmt(v: float, digits: int) -> str:
    return f"{v:.{digits}g}"


def determine(values: Sequence[Number], rounds: Sequence[int] | None = None) -> Determination:
    """Determination over exactly these values (the window); rounds default to 1..n.

    The least-squares line is fitted against the round numbers, so the excursion is |m| times the span
    of rounds (4 for a 5-round window of consecutive rounds).
    """
    ys = tuple(exact(v) for v in values)
    n = len(ys)
    if n < 2:
        raise UsageError(f"a steady-state window needs at least 2 values, got {n}")
    xs = tuple(range(1, n + 1)) if rounds is None else tuple(int(r) for r in rounds)
    if len(xs) != n:
        raise UsageError(f"{len(xs)} round numbers for {n} values")
    if len(set(xs)) != n:
        raise UsageError("round numbers in a window must be distinct")
    mean_y = sum(ys, Fraction(0)) / n
    mean_x = Fraction(sum(xs), n)
    sxx = sum(((x - mean_x) ** 2 for x in xs), Fraction(0))
    sxy = sum(((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)), Fraction(0))
    slope = sxy / sxx
    intercept = mean_y - slope * mean_x
    return Determination(
        rounds=xs, values=ys, average=mean_y, range=max(ys) - min(ys), allowed_range=RANGE_LIMIT * mean_y,
        slope=slope, intercept=intercept, fit_excursion=abs(slope) * (max(xs) - min(xs)),
        allowed_excursion=EXCURSION_LIMIT * mean_y,
    )


def window_at(values: Sequence[Number], x: int, window: int = WINDOW) -> Determination:
    """Determination of rounds x-window+1 ... x of a series whose element 0 is round 1."""
    if x < window or x > len(values):
        raise UsageError(f"round {x} has no full {window}-round window in a series of {len(values)} rounds")
    return determine(values[x - window:x], list(range(x - window + 1, x + 1)))


def check_last(values: Sequence[Number], window: int = WINDOW) -> Determination:
    """Determination of the last `window` values (what `ssdlab ss-check` prints)."""
    if len(values) < window:
        raise UsageError(f"need at least {window} values for the steady-state window, got {len(values)}")
    return window_at(values, len(values), window)


@dataclass(frozen=True)
class RoundVerdict:
    """Steady state over several tracking variables: the first round x where all pass, or the fallback."""

    round: int | None  # the round x the window ends at (None: fewer rounds than the window)
    steady: bool
    determinations: Mapping[str, Determination]


def first_steady_round(series: Mapping[str, Sequence[Number]], window: int = WINDOW) -> int | None:
    """The first round x >= window at which every variable is steady over x-window+1 ... x, or None."""
    if not series:
        return None
    n = min(len(v) for v in series.values())
    for x in range(window, n + 1):
        if all(window_at(v, x, window).steady for v in series.values()):
            return x
    return None


def verdict(series: Mapping[str, Sequence[Number]], window: int = WINDOW) -> RoundVerdict:
    """Window of the first steady round, else the last `window` rounds marked not steady."""
    n = min((len(v) for v in series.values()), default=0)
    x = first_steady_round(series, window)
    if x is None:
        if n < window:
            return RoundVerdict(None, False, {})
        x = n
    dets = {name: window_at(v, x, window) for name, v in series.items()}
    return RoundVerdict(x, all(d.steady for d in dets.values()), dets)
