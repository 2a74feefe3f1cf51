"""A comparison a reviewer can trust: protocols never pooled, no survivor bias,
killed runs cleaned up, a results store that neither loses nor doubles records."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from study_doubles import unit_config

from odtstudy.study import (
    ResultsStore,
    expand_runs,
    make_report,
    run_study,
    study_folder,
)
from odtstudy.study.results import StudyLock, StudyLockedError

TESTS = Path(__file__).resolve().parent.parent


def _config(methods, **kw):
    return unit_config(methods, **{"datasets": ["zoo-1"], "depths": [2], **kw})


def _alive(get_process, pid) -> bool:
    """True while the process runs (a zombie or a vanished one is not)."""
    try:
        process = get_process(pid)
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _sections(text):
    return text.count("Protocol `")


def test_two_scales_go_to_two_folders_and_never_pool(tmp_path):
    assert study_folder(tmp_path, "quick", "smoke") == tmp_path / "quick-smoke"
    assert study_folder(tmp_path, "quick", "default") == tmp_path / "quick"
    default = _config(["cart"], name="quick", folds=3)
    smoke = _config(["cart"], name="quick", folds=2, scale="smoke")
    run_study(default, output_dir=tmp_path, quiet=True)
    run_study(smoke, output_dir=tmp_path, quiet=True)
    for scale, folds in (("default", 3), ("smoke", 2)):
        frame = ResultsStore(study_folder(tmp_path, "quick", scale)).load()
        assert set(frame["n_folds"]) == {folds} and len(frame) == folds
        text = make_report("quick", output_dir=tmp_path, scale=scale).read_text()
        assert f"{folds}-fold" in text and _sections(text) == 1
        assert "different protocols" not in text


def test_two_time_limits_are_two_protocols_reported_apart(tmp_path):
    first = _config(["cart"], time_limit=5)
    second = _config(["cart"], time_limit=7)
    ids = {run["protocol_id"] for run in expand_runs(first)}
    assert ids.isdisjoint(run["protocol_id"] for run in expand_runs(second))
    run_study(first, output_dir=tmp_path, quiet=True)
    run_study(first, output_dir=tmp_path, quiet=True)  # same protocol: nothing new
    run_study(second, output_dir=tmp_path, quiet=True)
    frame = ResultsStore(tmp_path / "unit").load()
    assert len(frame) == 4 and frame["protocol_id"].nunique() == 2
    text = make_report("unit", output_dir=tmp_path).read_text()
    assert "2 different protocols" in text and _sections(text) == 2
    assert text.count("| zoo-1 | 2 | cart | 2/2 | yes |") == 2  # one row each


@pytest.mark.ci_slow
def test_overrunning_method_is_incomplete_not_a_survivor_mean(tmp_path):
    config = _config(["cart", "test-overrun"], folds=3)
    run_study(config, output_dir=tmp_path, workers=2, quiet=True)
    text = make_report("unit", output_dir=tmp_path).read_text()
    row = next(
        line for line in text.splitlines() if "| zoo-1 | 2 | test-overrun |" in line
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:5] == ["0/3", "incomplete"]
    assert all(c in ("", "nan") for c in cells[5:9]), row
    assert "| zoo-1 | 2 | cart | 3/3 | yes |" in text


@pytest.mark.ci_slow
def test_killed_run_keeps_the_reported_incumbent(tmp_path):
    config = _config(["test-incumbent-hang"], folds=2)
    frame = run_study(config, output_dir=tmp_path, workers=2, quiet=True).load()
    assert (frame["status"] == "timeout").all() and frame["has_tree"].all()
    assert frame["test_acc"].between(0, 1).all() and frame["objective"].notna().all()
    assert not frame["optimal"].any()
    assert frame["error"].str.contains("best tree reported").all()
    text = make_report("unit", output_dir=tmp_path).read_text()
    # the runner kept the tree, but the run did not return one of its own
    assert "| zoo-1 | 2 | test-incumbent-hang | 0/2 | incomplete |" in text


@pytest.mark.ci_slow
def test_killed_run_takes_its_solver_children_and_temp_files(tmp_path, monkeypatch):
    log = tmp_path / "spawned.txt"
    monkeypatch.setenv("ODTSTUDY_TEST_SPAWN_LOG", str(log))
    config = _config(["test-spawner"], folds=2)
    frame = run_study(config, output_dir=tmp_path / "out", workers=2, quiet=True).load()
    assert (frame["status"] == "timeout").all()
    spawned = [line.split() for line in log.read_text().splitlines()]
    assert len(spawned) == 2
    time.sleep(0.2)
    for pid, name in spawned:
        assert not _alive(psutil.Process, int(pid)), f"solver child {pid} running"
        assert not Path(name).exists(), f"temp file {name} left behind"
        assert Path(name).parent.name.startswith("odtstudy-run-")


def test_fit_memory_is_the_learners_not_the_interpreters(tmp_path):
    config = _config(["dl85", "test-sleepy"], datasets=["vote"], folds=2)
    frame = run_study(config, output_dir=tmp_path, workers=2, quiet=True).load()
    assert (frame["status"] == "ok").all()
    assert (frame["peak_rss_mb"] > 50).all()  # the forked interpreter
    dl85 = frame[frame["method"] == "dl85"]
    assert (dl85["fit_mem_mb"] < 20).all(), dl85["fit_mem_mb"]


def test_proven_optimal_only_within_the_allowed_time(tmp_path):
    from odtstudy._deadline import allowed_fit_time

    assert allowed_fit_time(2) == pytest.approx(3.2)
    config = _config(["dl85"])
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert frame["optimal"].all() and frame["claimed_optimal"].all()


def test_torn_multiline_record_is_detected_and_rerun(tmp_path):
    config = _config(["cart"], folds=3)
    store = run_study(config, output_dir=tmp_path, quiet=True)
    lines = store.path.read_bytes().split(b"\n")
    assert len(lines) == 5  # header, 3 records, ''
    record = json.loads(lines[2])
    record["error"] = "a message\nover\nseveral lines"
    torn = json.dumps(record).encode()[:-30]
    # a torn record in the middle, another at the end
    store.path.write_bytes(b"\n".join([lines[0], lines[1], torn, lines[3], torn]))
    assert len(store.load()) == 2 and store.damaged_lines == [3, 5]
    run_study(config, output_dir=tmp_path, quiet=True)
    frame = store.load()
    assert len(frame) == 3 and frame["run_id"].is_unique
    assert set(frame["fold"]) == {0, 1, 2}


def test_damaged_header_is_an_error_not_a_rerun(tmp_path):
    config = _config(["cart"])
    store = run_study(config, output_dir=tmp_path, quiet=True)
    data = store.path.read_bytes()
    store.path.write_bytes(b"garbage" + data[10:])
    with pytest.raises(ValueError, match="does not start with the odtstudy results"):
        run_study(config, output_dir=tmp_path, quiet=True)
    assert store.path.read_bytes() == b"garbage" + data[10:]


def test_second_runner_is_refused_while_the_first_holds_the_folder(tmp_path):
    folder = tmp_path / "unit"
    with StudyLock(folder):
        with pytest.raises(StudyLockedError, match="in use by another runner"):
            run_study(_config(["cart"]), output_dir=tmp_path, quiet=True)
    run_study(_config(["cart"]), output_dir=tmp_path, quiet=True)


def test_memory_limit_below_the_workers_map_fails_before_any_run(tmp_path):
    with pytest.raises(ValueError, match="memory_limit_mb = 100 leaves no room"):
        run_study(_config(["cart"], memory_limit_mb=100), output_dir=tmp_path)
    assert not (tmp_path / "unit").exists()


def _cli_script(tmp_path, toml_text):
    toml = tmp_path / "study.toml"
    toml.write_text(textwrap.dedent(toml_text))
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\nimport study_doubles\nfrom odtstudy.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(TESTS))
    args = [sys.executable, str(script), "study", str(toml)]
    return args + ["--output", str(tmp_path / "out")], env


_SLEEPY = """\
    [study]
    name = "sleepy"
    datasets = ["zoo-1", "vote"]
    methods = ["test-sleepy"]
    depths = [1, 2, 3]
    folds = 4
    time_limit = 5
    workers = 2
    """


@pytest.mark.ci_slow
def test_sigterm_keeps_finished_records_and_resumes_without_duplicates(tmp_path):
    args, env = _cli_script(tmp_path, _SLEEPY.replace("folds = 4", "folds = 2"))
    results = tmp_path / "out" / "sleepy" / "results.jsonl"
    proc = subprocess.Popen(args + ["--quiet"], env=env, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline:
        if results.exists() and results.read_text().count("\n") >= 4:
            break
        time.sleep(0.05)
    children = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM" in err.decode() and "resume with" in err.decode()
    assert "Traceback" not in err.decode()
    psutil.wait_procs(children, timeout=5)
    assert not any(_alive(lambda _: c, None) for c in children)
    store = ResultsStore(tmp_path / "out" / "sleepy")
    kept = store.load()
    assert 3 <= len(kept) < 12 and kept["run_id"].is_unique
    assert (tmp_path / "out" / "sleepy" / "report.md").exists()
    done = subprocess.run(args + ["--quiet"], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    frame = store.load()
    assert len(store.records()) == 12 and frame["run_id"].is_unique
    assert set(kept["utc"]) <= set(frame["utc"])  # the first records kept as they were


@pytest.mark.ci_slow
def test_two_runners_on_one_study_never_run_a_record_twice(tmp_path):
    args, env = _cli_script(tmp_path, _SLEEPY)
    first = subprocess.Popen(args + ["--quiet"], env=env, stderr=subprocess.PIPE)
    time.sleep(1.5)
    second = subprocess.run(args + ["--quiet"], env=env, capture_output=True)
    assert second.returncode == 2
    assert "in use by another runner" in second.stderr.decode()
    first.communicate(timeout=120)
    assert first.returncode == 0
    records = ResultsStore(tmp_path / "out" / "sleepy").records()
    assert len(records) == 24 and len({r["run_id"] for r in records}) == 24


def test_dry_run_prints_the_runs_and_runs_nothing(tmp_path):
    args, env = _cli_script(tmp_path, _SLEEPY)
    done = subprocess.run(args + ["--dry-run"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "24 runs in the grid, 0 already recorded, 24 to run" in done.stdout
    assert done.stdout.count("test-sleepy") == 24
    assert not (tmp_path / "out").exists()


def test_dask_scheduler_without_workers_is_a_clear_error(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    from odtstudy.study import runner

    monkeypatch.setattr(runner, "DASK_WORKER_TIMEOUT_S", 2.0)
    with distributed.LocalCluster(
        n_workers=0, processes=False, dashboard_address=None
    ) as cluster:
        with pytest.raises(ValueError, match="has no workers after 2 s"):
            run_study(
                _config(["cart"]),
                output_dir=tmp_path,
                scheduler=cluster.scheduler_address,
            )
    assert not (tmp_path / "unit").exists()


@pytest.mark.ci_slow
def test_milp_and_cpsat_report_their_warm_start_as_incumbent():
    from odtstudy._incumbent import listening
    from odtstudy.cp import CPSATClassifier
    from odtstudy.datasets import load_dataset
    from odtstudy.milp import BinOCTClassifier

    data = load_dataset("vote")
    # neither proves vote at depth 2 within its limit: the CART warm start,
    # reported before the model is built, comes first either way
    for clf in (
        BinOCTClassifier(max_depth=2, time_limit=3),
        CPSATClassifier(max_depth=2, time_limit=3),
    ):
        seen = []
        with listening(clf, lambda tree, objective, bound: seen.append(objective)):
            clf.fit(data.X, data.y)
        assert seen, type(clf).__name__
        assert seen[0] >= clf.objective_ - 1e-9


@pytest.mark.ci_slow
def test_sigkill_of_the_runner_leaves_no_worker(tmp_path):
    overrun = _SLEEPY.replace('"test-sleepy"', '"test-overrun"').replace(
        "time_limit = 5", "time_limit = 20"
    )
    args, env = _cli_script(tmp_path, overrun)
    proc = subprocess.Popen(args + ["--quiet"], env=env, stderr=subprocess.DEVNULL)
    workers = []
    deadline = time.time() + 60
    while time.time() < deadline and len(workers) < 2:
        workers = psutil.Process(proc.pid).children()
        time.sleep(0.1)
    assert len(workers) == 2, "the runner started no workers"
    time.sleep(1.0)  # the workers are in their 120 s fits
    proc.kill()
    proc.wait(timeout=30)
    _, alive = psutil.wait_procs(workers, timeout=5)
    assert not [p for p in alive if _alive(lambda _, p=p: p, None)], alive
