"""results/sparsehist.py: fio's histogram in plain Python (what a run needs) gives the values of results/hist.py's
dense numpy arrays, and a run's parsing of fio's output never loads numpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.results import hist, sparsehist
from ssdlab.results.bins import Bins

PS = [0.0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 99.999, 100.0]
pairs_st = st.lists(st.tuples(st.integers(0, hist.PLAT_NR - 1), st.integers(0, 10**9)), max_size=60)


def test_bucket_table_is_hists() -> None:
    assert hist.bucket_values().tolist() == sparsehist.VALUES
    assert all(sparsehist.VALUE_TO_IDX[v] == i for i, v in enumerate(sparsehist.VALUES))


@settings(max_examples=200, deadline=None)
@given(pairs_st, st.lists(st.floats(0, 100), max_size=8), st.integers(-2, 3))
def test_percentiles_equal_the_dense_arrays(pairs: list[tuple[int, int]], extra: list[float], more: int) -> None:
    counts: sparsehist.Sparse = {}
    for i, c in pairs:
        counts[i] = counts.get(i, 0) + c
    dense = hist.counts_from_sparse(pairs)
    ps = PS + extra
    assert sparsehist.percentiles(counts, ps) == hist.percentiles(dense, ps)
    total = sum(counts.values()) + more  # fio's N, a sample more or fewer than the bins hold
    assert sparsehist.percentiles(counts, ps, total=total) == hist.percentiles(dense, ps, total=total)
    assert sparsehist.to_bins(counts) == hist.sparse_bins(dense)
    assert sparsehist.to_bins(counts).flat().tobytes() == hist.sparse_bins(dense).flat().tobytes()


@settings(max_examples=200, deadline=None)
@given(pairs_st, st.booleans())
def test_bins_percentiles_equal_the_dense_arrays_in_any_order(pairs: list[tuple[int, int]], ordered: bool) -> None:
    form = sorted(pairs) if ordered else pairs  # unordered, an index twice: added up as a dense array adds
    want = hist.percentiles(hist.counts_from_sparse(form), PS)
    assert sparsehist.bins_percentiles(Bins.of(form), PS) == want


def test_from_bins_files_keys_as_fio_and_adds_and_subtracts() -> None:
    raw = {"1000": 3, "1024": 2, "1030": 5, "70": 1}  # 1030 is no representative value: filed as a sample
    want = hist.counts_from_bins(raw)
    got = sparsehist.from_bins(raw)
    assert got == {i: int(want[i]) for i in want.nonzero()[0].tolist()}
    both = sparsehist.add(got, got)
    assert both == {i: 2 * n for i, n in got.items()}
    assert sparsehist.subtract(both, got) == got
    assert sparsehist.to_bins({5: 0, 3: 4}) == Bins.of([(3, 4)])  # empty buckets are not stored


def test_parsing_fios_output_and_its_status_documents_loads_no_numpy() -> None:
    """A run parses every point (and every live status document) without numpy, which would cost the command
    about 0.1 CPU-s to load (benchmarks/peer_overhead.py)."""
    golden = Path(__file__).resolve().parent.parent / "data" / "fio" / "3.33" / "file-randread-status.json"
    code = (
        "import sys; from pathlib import Path\n"
        "from ssdlab.fio import parse, status\n"
        "text = Path(sys.argv[1]).read_text()\n"
        "rates = status.StatusRates()\n"
        "samples = [rates.feed(d) for d in parse.iter_documents(text)]\n"
        "m = parse.parse_measurement(text)\n"
        "assert m.directions['read'].clat.bins and m.directions['read'].clat.percentile(99) > 0\n"
        "assert any(s is not None and s.read_pcts_us for s in samples)\n"
        "print('numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(golden)], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
