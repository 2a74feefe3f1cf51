"""Timings with their conditions: the machine in the provenance, warnings
when the fits shared the CPUs, and ``--require-idle``."""

import json

import pandas as pd
import pytest

from odtstudy import cli
from odtstudy.study import _idle
from odtstudy.study._provenance import machine, provenance
from odtstudy.study.report._provenance_text import provenance_text


def test_provenance_names_clock_cores_ram_and_steal():
    facts = provenance(workers=1)
    for key in ("cpu_mhz", "physical_cores", "threads_per_core", "ram_gb", "steal_s"):
        assert key in facts
    assert facts["ram_gb"] > 0 and facts["physical_cores"] >= 1
    assert set(machine()) <= set(facts)


def _frame(load, shares, workers=1, cores=2, steal=None):
    prov = {**provenance(workers=workers), "load_at_start": [load, load, load]}
    prov["logical_cores"] = cores
    rows = []
    for i, share in enumerate(shares):
        stats = {} if steal is None else {"machine_steal_s": steal}
        rows.append(
            {
                "dataset": f"d{i}",
                "method": "dl85",
                "depth": 3,
                "fold": 0,
                "fit_time_s": 10.0,
                "cpu_time_s": 10.0 * share,
                "stats": json.dumps(stats),
                "provenance": json.dumps(prov),
            }
        )
    return pd.DataFrame(rows)


def test_a_quiet_machine_gets_no_warning_and_says_its_size():
    text = provenance_text(_frame(0.2, [0.99, 1.0, 0.98], steal=0.0), {})
    assert "Warning" not in text
    assert "GB RAM" in text and "thread(s) per core" in text
    assert "Steal time during the fits: 0 s over all CPUs (0 % of their 30 s)." in text


def test_load_above_the_free_cores_and_waiting_fits_are_named():
    text = provenance_text(_frame(2.4, [0.7, 0.8, 0.99]), {})
    assert "load average when a runner started (2.4) exceeded the 1 of 2" in text
    assert "median 0.80 of their wall time on the CPU" in text
    assert "dl85 on d0 d3 fold 0 (0.70), dl85 on d1 d3 fold 0 (0.80)" in text
    assert "Per method, median share (fits): dl85 0.80 (3)." in text
    assert "Steal time: not recorded." in text


def test_the_shares_tell_one_waiting_method_from_a_busy_machine():
    frame = _frame(0.1, [0.99, 0.97, 0.7, 0.72, 0.74])
    frame.loc[2:, "method"] = "gosdt"  # a solver in a process of its own
    text = provenance_text(frame, {})
    assert "Per method, median share (fits): gosdt 0.72 (3), dl85 0.98 (2)." in text


def test_wait_until_idle_waits_for_the_load_then_refuses(monkeypatch):
    monkeypatch.setattr(_idle.os, "cpu_count", lambda: 2)
    loads = iter([1.8, 1.4, 0.9])
    slept = []
    now = [0.0]

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    load = _idle.wait_until_idle(
        1, 60, load=lambda: (next(loads),), sleep=sleep, clock=lambda: now[0]
    )
    assert load == 0.9 and slept == [_idle.POLL_S] * 2
    with pytest.raises(RuntimeError, match="--require-idle: the machine is busy"):
        _idle.wait_until_idle(
            1, 10, load=lambda: (1.5,), sleep=sleep, clock=lambda: now[0]
        )


def test_cli_require_idle_refuses_a_busy_machine(
    tmp_path, monkeypatch, capsys, no_preflight
):
    monkeypatch.setattr(_idle.os, "getloadavg", lambda: (99.0, 99.0, 99.0))
    monkeypatch.setattr(_idle.wait_until_idle, "__defaults__", None, raising=False)
    code = cli.main(
        [
            "study",
            "quick",
            "--scale",
            "smoke",
            "--output",
            str(tmp_path),
            "--require-idle",
            "0",
            "--quiet",
        ]
    )
    assert code == 3
    err = capsys.readouterr().err
    assert "load average 99.00" in err and "--require-idle SECONDS" in err
    assert not list(tmp_path.rglob("results.jsonl"))  # no run started
