"""fio histogram-log reading, per-interval percentiles (fio rule and the baseline's weighted rule), merging."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ssdlab.fio import histlog
from ssdlab.results import hist

RNG = np.random.default_rng(7)


def write_log(path: Path, rows: list[tuple[int, int, np.ndarray]], bs: int = 4096) -> Path:
    """A log file in fio's format: 'time, ddir, bs, c0, c1, ...'."""
    lines = [", ".join([str(t), str(d), str(bs), *map(str, c.tolist())]) for t, d, c in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def random_rows(times: list[int], nbins: int = hist.PLAT_NR, dirs: tuple[int, ...] = (0, 1),
                tail: bool = True) -> list[tuple[int, int, np.ndarray]]:
    rows = []
    lo, hi = (700, 1100) if nbins == hist.PLAT_NR else (700 * nbins // hist.PLAT_NR, 1100 * nbins // hist.PLAT_NR)
    for t in times:
        for d in dirs:
            c = np.zeros(nbins, dtype=np.int64)
            idx = RNG.integers(lo, hi, 40)
            np.add.at(c, idx, RNG.integers(1, 300, 40))
            if tail and RNG.random() < 0.3:
                c[RNG.integers(hi, nbins)] += 1  # an occasional slow outlier (up to seconds)
            rows.append((t, d, c))
    return rows


def test_parse_block_matches_dense_rows(tmp_path: Path) -> None:
    rows = random_rows([100, 201, 300])
    path = write_log(tmp_path / "h_clat_hist.1.log", rows)
    times, ddirs, dense = histlog.read_log(path)
    assert times.tolist() == [100, 100, 201, 201, 300, 300]
    assert ddirs.tolist() == [0, 1] * 3
    assert np.array_equal(dense, np.stack([c for _, _, c in rows]))


@pytest.mark.parametrize("chunk", [4096, 50_000, 1 << 22])
def test_chunk_size_does_not_change_results(tmp_path: Path, chunk: int) -> None:
    rows = random_rows(list(range(100, 3001, 100)))
    path = write_log(tmp_path / "h.log", rows)
    got = [(iv.end_ms, iv.samples, iv.percentiles([50, 99])) for iv in
           histlog.iter_intervals([path], 500, chunk_bytes=chunk)]
    ref = [(iv.end_ms, iv.samples, iv.percentiles([50, 99])) for iv in
           histlog.iter_intervals([path], 500, chunk_bytes=1 << 24, threads=0)]
    assert got == ref
    assert [e for e, _, _ in got] == list(range(500, 3001, 500))


def test_fio_mode_sums_rows_and_uses_fios_rule(tmp_path: Path) -> None:
    rows = random_rows(list(range(100, 1001, 100)))
    a = write_log(tmp_path / "a.log", rows[: len(rows) // 2])
    b = write_log(tmp_path / "b.log", random_rows(list(range(100, 1001, 100)))[len(rows) // 2:])
    intervals = list(histlog.iter_intervals([a, b], 1000, directions=("all", "read", "write")))
    by_dir = {iv.direction: iv for iv in intervals}
    _, _, da = histlog.read_log(a)
    _, _, db = histlog.read_log(b)
    total = da.sum(axis=0) + db.sum(axis=0)
    assert np.array_equal(by_dir["all"].counts, total)  # merging jobs = adding bins
    expect = hist.percentiles(total, [50, 90, 99.9])
    assert by_dir["all"].percentiles([50, 90, 99.9]) == {p: float(v) for p, v in expect.items()}
    assert by_dir["read"].samples + by_dir["write"].samples == by_dir["all"].samples
    mat = histlog.fio_percentiles_matrix(np.stack([total, total // 2]), [50.0, 99.0])
    assert mat[0, 0] == expect[50]


def test_rows_go_to_the_interval_holding_their_middle(tmp_path: Path) -> None:
    one = np.zeros(hist.PLAT_NR, dtype=np.int64)
    one[900] = 1
    path = write_log(tmp_path / "h.log", [(t, 0, one) for t in (100, 201, 300, 401, 502)])
    ends = [(iv.end_ms, iv.samples) for iv in histlog.iter_intervals([path], 200, log_ms=100)]
    assert ends == [(200, 2), (400, 2), (600, 1)]


def test_coarse_logs(tmp_path: Path) -> None:
    rows = random_rows([100, 200], nbins=hist.PLAT_NR >> 2)
    path = write_log(tmp_path / "h.log", rows)
    reader = histlog.LogReader(path)
    assert reader.coarseness == 2
    (iv,) = list(histlog.iter_intervals([path], 1000))
    lower, upper = histlog.bin_bounds(2)
    assert lower[1] == 4
    assert upper[0] == 4
    assert upper[-1] == 2**34
    p50 = iv.percentiles([50])[50]
    cum = np.cumsum(iv.counts)
    j = int(np.searchsorted(cum, -(-cum[-1] // 2)))
    assert p50 == (lower[j] + upper[j]) / 2


def test_exceedance_of_bins(tmp_path: Path) -> None:
    c = np.zeros(hist.PLAT_NR, dtype=np.int64)
    c[hist.value_to_idx(500_000)] = 90
    c[hist.value_to_idx(2_000_000)] = 10
    ex = histlog.exceedance_pct(c, [1_000_000, 4_000_000])
    assert ex == {1_000_000: 10.0, 4_000_000: 0.0}
    assert hist.exceedance(c, [1_000_000]) == {1_000_000: 10.0}


@pytest.mark.parametrize(("text", "message"), [
    ("100, 0, 4096, 1, 2, 3\n", "not 1856/2"),
    ("100, 0, 4096, " + ", ".join(["0"] * 1856) + "\n100, 0, 4096, 1\n", "columns"),
    ("100, 0, 4096, " + ", ".join(["x"] * 1856) + "\n", "unexpected character"),
])
def test_bad_logs_are_one_line_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.log"
    path.write_text(text)
    with pytest.raises(histlog.HistLogError, match=message):
        list(histlog.iter_intervals([path], 100))


def test_percentile_list_parsing() -> None:
    assert histlog.parse_percentiles("50,90:99.9") == [50.0, 90.0, 99.9]
    with pytest.raises(histlog.HistLogError):
        histlog.parse_percentiles("50,abc")
    with pytest.raises(histlog.HistLogError):
        histlog.parse_percentiles("0")


# ------------------------------------------------------------------ weighted mode against a naive model


def naive_weighted(rows: list[tuple[int, int, np.ndarray]], interval: float, ps: list[float]) -> list[tuple]:
    """Direct loop over intervals and rows, as the baseline script's default mode is described."""
    values, lower, upper = histlog.baseline_bin_values(0)
    out = []
    tmax = max(t for t, _, _ in rows)
    start = 0.0
    while start < tmax:
        end = start + interval
        w = np.zeros(hist.PLAT_NR)
        samples = 0
        lo, hi = None, None
        for t, _, c in rows:
            if t <= start:
                continue
            s = t - 0.5 * interval - values / 1e6
            idx = np.where(s < end)[0]
            if idx.size == 0:
                continue
            frac = (np.minimum(t, end) - np.maximum(s[idx], start)) / (t - s[idx])
            w[idx] += c[idx] * frac
            samples += int(c[idx].sum())
            nz = np.flatnonzero(c[idx])
            if nz.size:
                cand_lo = lower[idx[0] + max(0, nz[0] - 1)]
                cand_hi = upper[min(hist.PLAT_NR - 1, idx[0] + nz[-1] + 1)]
                lo = cand_lo if lo is None else min(lo, cand_lo)
                hi = cand_hi if hi is None else max(hi, cand_hi)
        if samples:
            cdf = 100 * (w.cumsum() - w / 2) / w.sum()
            out.append((int(end), samples, lo, hi, list(np.interp(ps, cdf, values))))
        start = end
    return out


def test_weighted_mode_matches_the_naive_model(tmp_path: Path) -> None:
    rows = random_rows([103, 201, 301, 401, 503, 601, 700, 801])
    path = write_log(tmp_path / "h.log", rows)
    ps = [50.0, 90.0, 99.0]
    got = list(histlog.iter_intervals([path], 100, mode="weighted"))
    ref = naive_weighted(rows, 100.0, ps)
    assert [(iv.end_ms, iv.samples) for iv in got] == [(r[0], r[1]) for r in ref]
    for iv, r in zip(got, ref, strict=True):
        assert iv.min_ns == r[2]
        assert iv.max_ns == r[3]
        pv = iv.percentiles(ps)
        assert [pv[p] for p in ps] == pytest.approx(r[4], rel=1e-9)


def test_csv_output_shapes(tmp_path: Path) -> None:
    path = write_log(tmp_path / "h.log", random_rows([100, 200, 300, 400]))
    fio_lines = list(histlog.summarize([path], 200, [50, 99.9]))
    assert fio_lines[0] == "end_ms,direction,samples,min_ns,mean_ns,p50,p99.9,max_ns"
    assert len(fio_lines) == 3
    assert fio_lines[1].startswith("200,all,")
    w_lines = list(histlog.summarize([path], 200, [99.0], mode="weighted"))
    assert w_lines[0] == "end-time, dir, samples, min, avg, median, 99%, max"


def test_cli_hist_log(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = write_log(tmp_path / "h_clat_hist.1.log", random_rows([100, 200, 300, 400]))
    res = cli("hist-log", str(path), "--interval", "0.2", "--percentiles", "50,99", "--directions", "split")
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert lines[0] == "end_ms,direction,samples,min_ns,mean_ns,p50,p99,max_ns"
    assert {ln.split(",")[1] for ln in lines[1:]} == {"read", "write"}
    res = cli("hist-log", str(tmp_path / "missing.log"), traceback=False)
    assert res.code == 2
    assert "no such file" in res.err
    res = cli("hist-log", str(path), "--percentiles", "fast", traceback=False)
    assert res.code == 2
    assert "bad percentile" in res.err


def test_fast_and_general_parsers_agree(tmp_path: Path) -> None:
    rows = random_rows([100, 200, 300, 400])
    canonical = write_log(tmp_path / "a.log", rows).read_bytes()
    # CRLF line ends, tabs and a blank line take the general (comma-counting) path
    odd = canonical.replace(b"\n", b"\r\n").replace(b", 0,", b",\t0,", 3) + b"\r\n"
    fast = histlog.parse_block(canonical, 1859)
    general = histlog.parse_block(odd, 1859)
    assert histlog._parse_canonical(np.frombuffer(odd, np.uint8), 1859) is None
    for name in ("times", "ddirs", "row", "col", "count"):
        assert np.array_equal(getattr(fast, name), getattr(general, name)), name
    assert np.array_equal(fast.dense(1856), np.stack([c for _, _, c in rows]))


def test_fast_parser_places_rows_by_their_newlines(tmp_path: Path) -> None:
    """A column moved from one row to the next keeps every byte canonical and the block's length: refused."""
    rows = random_rows([100, 200, 300])
    lines = write_log(tmp_path / "a.log", rows).read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b", 0, 0,", b", 0, 0, 0,", 1)  # one column long: the next row's tokens
    lines[2] = lines[2].replace(b", 0, 0,", b", 0,", 1)  # (one short) would all look one column further
    data = b"\n".join(lines)
    assert histlog._parse_canonical(np.frombuffer(data, np.uint8), 1859) is None
    with pytest.raises(histlog.HistLogError, match="1860 columns where the log's first row has 1859"):
        histlog.parse_block(data, 1859)


def test_weighted_direction_split_equals_filtering_the_rows(tmp_path: Path) -> None:
    rows = random_rows([103, 201, 301, 401, 503])
    both = write_log(tmp_path / "both.log", rows)
    reads = write_log(tmp_path / "reads.log", [r for r in rows if r[1] == 0])
    split = [iv for iv in histlog.iter_intervals([both], 100, mode="weighted", directions=("read", "write"))
             if iv.direction == "read"]
    alone = list(histlog.iter_intervals([reads], 100, mode="weighted"))
    assert [(iv.end_ms, iv.samples, iv.min_ns, iv.max_ns) for iv in split] == \
        [(iv.end_ms, iv.samples, iv.min_ns, iv.max_ns) for iv in alone]
    for a, b in zip(split, alone, strict=True):
        assert np.allclose(a.counts, b.counts)


def test_numpy_loads_with_one_blas_thread_and_the_environment_is_restored(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import sys

    from ssdlab.commands import histlog as command

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delitem(sys.modules, "numpy")  # as in a fresh `ssdlab hist-log` process
    with command._one_blas_thread():
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert "OPENBLAS_NUM_THREADS" not in os.environ
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")  # the user's own setting wins
    with command._one_blas_thread():
        assert os.environ["OPENBLAS_NUM_THREADS"] == "3"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "3"
