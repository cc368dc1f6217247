"""`trace fit`: the offset simulation follows fio's generator (checked against fio on the null engine), a fit
finds back the parameters a trace was made with, and its suite file loads and plans like any suite."""

from __future__ import annotations

import numpy as np
import pytest

from ssdlab.suites.base import PlanContext
from ssdlab.suites.toml_suite import load_toml_text
from ssdlab.trace.characterize import characterize
from ssdlab.trace.fit import Model, compare, fit, scatter, shape_of, simulate, suite_toml, zeta, zipf_ranks

MODEL = Model(0.7, {0: ([4096, 65536], [0.8, 0.2]), 1: ([4096, 16384], [0.6, 0.4])}, 0.7, 0.9, 2 << 30, 4096)


def test_zeta_follows_the_sum() -> None:
    for n, theta in ((10, 0.5), (1000, 1.2), (2_500_000, 0.9)):
        exact = float(np.sum(np.arange(1, n + 1, dtype=np.float64) ** -theta))
        assert zeta(n, theta) == pytest.approx(exact, rel=1e-6)


def test_zipf_ranks_are_skewed_and_in_range() -> None:
    u = np.random.default_rng(0).random(200_000)
    r = zipf_ranks(1000, 1.2, u)
    assert r.min() >= 0
    assert r.max() <= 999
    freq = np.bincount(r, minlength=1000) / r.size
    # zipf(1.2): rank 0 over rank 9 is 10^1.2
    assert freq[0] / freq[9] == pytest.approx(10 ** 1.2, rel=0.15)
    assert scatter(np.arange(1000), 1000).tolist() != list(range(1000))  # hot ranks are not side by side


def test_simulation_shape() -> None:
    t = simulate(MODEL, 50_000)
    s = shape_of(t)
    assert float(np.mean(t.op == 0)) == pytest.approx(0.7, abs=0.01)
    assert s.sequential == pytest.approx(0.3, abs=0.01)
    assert int((t.offset + t.size).max()) <= MODEL.span


def test_fit_finds_the_parameters_back() -> None:
    t = simulate(MODEL, 50_000)
    t = t.take(np.arange(len(t)))  # times 0..n-1 ns
    f = fit(t, characterize(t))
    assert f.rwmixread == 70
    assert f.percentage_random == 70
    assert f.model.theta == pytest.approx(0.9, abs=0.06)
    assert f.model.span == pytest.approx(MODEL.span, rel=0.25)
    assert f.bssplit == "4k/80:64k/20,4k/60:16k/40"
    checks = compare(t, simulate(f.model, len(t), seed=7))
    assert all(c.ok for c in checks), [c for c in checks if not c.ok]


def test_uniform_traces_fit_random() -> None:
    m = Model(1.0, {0: ([4096], [1.0]), 1: ([4096], [1.0])}, 1.0, 0.0, 1 << 30, 4096)
    t = simulate(m, 30_000)
    f = fit(t, characterize(t))
    assert f.distribution == "random"


def test_the_suite_file_loads_and_plans() -> None:
    t = simulate(MODEL, 20_000)
    char = characterize(t)
    f = fit(t, char)
    text = suite_toml(f, char, "my trace")
    suite = load_toml_text(text, "<fit>")
    (p,) = suite.plan(PlanContext(capacity=f.model.span))
    w = p.workload
    assert (w.rw, w.rwmixread, w.bssplit, w.iodepth) == ("randrw", 70, f.bssplit, f.iodepth)
    assert w.random_distribution == f.distribution
    assert w.options["percentage_random"] == "70"
    assert f"--footprint {f.model.span}" in text


def test_compare_flags_a_difference_beyond_the_tolerance() -> None:
    a = simulate(MODEL, 20_000)
    b = simulate(Model(0.5, MODEL.sizes, 0.7, 0.9, MODEL.span, 4096), 20_000, seed=3)
    bad = {c.metric: c.ok for c in compare(a, b)}
    assert bad["read share"] is False
    assert bad["mean size"] in (True, False)
