"""The README's wall time of the main job, from its records' times."""

from types import SimpleNamespace

import pandas as pd
from tool_module import load_tool

_elapsed = load_tool("readme_figures")._elapsed


def _records(rows):
    return SimpleNamespace(frame=pd.DataFrame(rows, columns=["utc", "wall_time_s"]))


def test_elapsed_runs_from_the_first_start_to_the_last_record():
    # records are written when a run ends; two runs overlap (two workers)
    # and the earliest start is the second record's, 9 s before it
    rows = [
        ("2026-11-28T09:50:10+00:00", 5.0),
        ("2026-11-28T09:50:12+00:00", 9.0),
        ("2026-11-28T09:51:40+00:00", 1.5),
    ]
    assert _elapsed(_records(rows)) == "97 s"


def test_elapsed_counts_a_run_without_a_wall_time_as_ending_at_its_record():
    rows = [("2026-11-28T09:50:00+00:00", None), ("2026-11-28T09:50:30+00:00", 2.0)]
    assert _elapsed(_records(rows)) == "30 s"
