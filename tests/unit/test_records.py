"""Typed records over stored JSON: point tags, run events and the run request read attributes, refuse unknown
names where they are made, and write back exactly what they loaded (any schema)."""

from __future__ import annotations

import dataclasses
import json
import pickle
import re
from pathlib import Path

import pytest

import ssdlab
from ssdlab.results.events import ResumeEvent, RunEvent, SteadyStateEvent, VerdictEvent, event_from_dict
from ssdlab.results.extra import MeasurementExtra
from ssdlab.results.model import Measurement, Run, run_from_dict, to_dict
from ssdlab.results.request import DeviceSettings, RunRequest
from ssdlab.results.tags import PointTags
from ssdlab.results.verdict import from_event, run_verdicts

SCHEMA1_OPTIONS = {"suite": "quick", "target_specs": ["null"], "size": None, "capacity": None, "ioengine": "libaio",
                   "runtime_s": 1.0, "ramp_s": None, "suite_options": {}, "footprint": None, "misalign": None}


def test_tags_read_attributes_with_defaults_and_keep_their_order() -> None:
    tags = PointTags.of(test="iops", round=3, key="rnd4k-0-100")
    assert (tags.test, tags.round, tags.key, tags.sample, tags.stream_names) == ("iops", 3, "rnd4k-0-100", None, ())
    later = tags.replace(planned_runtime_s=2.0, round=4)
    assert list(later) == ["test", "round", "key", "planned_runtime_s"]  # new keys last, as a dict update
    assert later.round == 4
    assert tags.round == 3  # immutable: replace() makes a copy
    assert tags["round"] == 3  # also a read-only mapping of what is stored
    assert tags.get("sample") is None
    with pytest.raises(AttributeError):
        tags.round = 5  # type: ignore[misc]


def test_tags_refuse_unknown_names_but_load_any_stored_keys() -> None:
    with pytest.raises(TypeError, match="no key rounds"):
        PointTags.of(rounds=3)
    stored = {"zz_future": [1, 2], "test": "lat", "round": 1}
    tags = PointTags(stored)
    assert tags.test == "lat"
    assert to_dict(tags) == stored
    assert list(to_dict(tags)) == list(stored)
    assert pickle.loads(pickle.dumps(tags)) == tags == stored  # noqa: S301 (our own bytes)


def test_a_stored_point_gets_typed_tags() -> None:
    run = run_from_dict({"schema_version": 1, "ssdlab_version": "0", "run_id": "r", "suite": "pts-iops",
                         "status": "complete", "created": "", "options": SCHEMA1_OPTIONS, "points": [{
                             "point": {"id": "p", "label": "p", "workload": {"rw": "randread", "bs": 4096},
                                       "tags": {"test": "iops", "round": 2}},
                             "status": "ok", "started": "", "finished": ""}]})
    tags = run.points[0].point.tags
    assert isinstance(tags, PointTags)
    assert tags.round == 2
    assert tags.test_or("pts-iops") == "iops"


def test_events_are_typed_by_kind_and_the_earlier_verdict_shape_reads_the_same() -> None:
    assert isinstance(event_from_dict({"kind": "resume", "repeated": ["a"]}), ResumeEvent)
    assert type(event_from_dict({"kind": "something-new", "x": 1})) is RunEvent
    old = event_from_dict({"time": "t", "kind": "verdict", "suite": "act", "passed": False, "text": "ACT 1x: FAIL"})
    assert isinstance(old, VerdictEvent)
    v = from_event(old, "act")
    assert (v.test, v.title, v.kind, v.reason) == ("act", "ACT", "fail", "ACT 1x: FAIL")
    new = event_from_dict({"kind": "verdict", "test": "iops", "title": "IOPS", "verdict": "steady",
                           "reason": "rounds 2-6", "passed": True, "text": "IOPS: steady", "round": 6})
    assert from_event(new, "pts").label == "steady at round 6"
    with pytest.raises(TypeError, match="records kind 'verdict'"):
        VerdictEvent.of(kind="resume")


def test_a_schema1_steady_state_event_gives_the_verdict() -> None:
    e = SteadyStateEvent({"kind": "pts-steady-state", "test": "iops", "steady": True, "window": [3, 4, 5, 6, 7],
                          "note": "steady"})
    run = Run(schema_version=1, ssdlab_version="0", run_id="r", suite="pts-iops", status="complete", created="",
              options={}, target={}, host={}, events=(e,))
    (v,) = run_verdicts(run).tests
    assert (v.test, v.kind, v.round) == ("iops", "steady", 7)


def test_a_request_writes_back_the_keys_it_was_stored_with() -> None:
    old = RunRequest.from_dict(SCHEMA1_OPTIONS)
    assert old.on_error is None
    assert old.error_policy == "stop"
    assert old.straggler_margin == 10.0
    assert json.dumps(old.to_dict()) == json.dumps(SCHEMA1_OPTIONS)  # same keys, same order: no on_error added
    new = RunRequest(suite="quick", target_specs=("null",), device_settings=DeviceSettings(write_cache="off"))
    assert list(new.to_dict()) == [*SCHEMA1_OPTIONS, "on_error", "straggler_margin_pct", "device_settings"]
    assert RunRequest.from_dict(new.to_dict()) == new
    assert new.to_dict()["device_settings"] == {"write_cache": "off", "power_state": None}


def test_a_measurement_keeps_its_extra_facts_as_a_typed_record() -> None:
    m = Measurement(engine="fio", engine_version="3.33", directions={},
                    extra={"wall_s": 1.5, "host_cpu": {"available": True, "submitting_busy_pct": 97.0}})
    assert isinstance(m.extra, MeasurementExtra)
    assert m.extra.wall_s == 1.5
    assert m.extra.host_cpu is not None
    assert m.extra.host_cpu.submitting_busy_pct == 97.0
    assert m.extra.io_errors is None
    later = dataclasses.replace(m, extra=m.extra.replace(idle_s=None))
    assert list(later.extra) == ["wall_s", "host_cpu", "idle_s"]  # a key set to None is recorded as null
    assert Measurement(engine="sim", engine_version="0", directions={}).extra == {}


SRC = Path(ssdlab.__file__).parent
LOOKUP = re.compile(r"""\b(tags|extra)(\.get\(|\[)["']""")
FREE_FORM = ("catalog.py",)  # a run's notes in the catalog (tags.json) are free-form KEY=VALUE pairs


def test_tags_and_extra_are_read_by_attribute_outside_the_renderers() -> None:
    """Suites, the verdict, comparison, run and fio code read point tags and Measurement.extra by attribute;
    report/ is being rewritten into templates and sim/ into a new model (issues 23 and 22): they may still
    read some keys."""
    found = [f"{p.relative_to(SRC)}:{n}: {line.strip()}" for p in SRC.rglob("*.py")
             if "report" not in p.parts and "sim" not in p.parts and p.name not in FREE_FORM
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if LOOKUP.search(line)]
    assert not found, "\n".join(found)
