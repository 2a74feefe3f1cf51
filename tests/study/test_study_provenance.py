"""Provenance in every record, the source revision in the protocol id, and
the timing protocol: repeats in fresh processes, methods interleaved, CPU
time beside wall time."""

import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from study_doubles import unit_config

from odtstudy.cart import CARTClassifier
from odtstudy.cli import main
from odtstudy.study import (
    _provenance,
    expand_runs,
    load_config,
    make_report,
    register_method,
    run_study,
    runner,
)
from odtstudy.study.runner import _combine_repeats

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIGS = Path(_provenance.__file__).parent / "configs"

SOLVER_PACKAGES = (
    "pystreed", "pydl8.5", "gosdt", "pycontree", "licketysplit", "highspy",
    "ortools", "pulp", "cbcbox",
)  # fmt: skip


def _log(tag):
    with open(os.environ["ODTSTUDY_TEST_FIT_LOG"], "a") as log:
        log.write(f"{tag} {os.getpid()}\n")


class LogA(CARTClassifier):
    """CART that notes each fit (its tag and process) in a shared log."""

    def _fit(self, X, y, sample_weight):
        _log("A")
        return super()._fit(X, y, sample_weight)


class LogB(CARTClassifier):
    def _fit(self, X, y, sample_weight):
        _log("B")
        return super()._fit(X, y, sample_weight)


class Spinning(CARTClassifier):
    """Burns 0.4 s of CPU in its own process."""

    def _fit(self, X, y, sample_weight):
        start = time.process_time()
        while time.process_time() - start < 0.4:
            pass
        return super()._fit(X, y, sample_weight)


class Sleeping(CARTClassifier):
    """Waits 0.4 s without using the CPU."""

    def _fit(self, X, y, sample_weight):
        time.sleep(0.4)
        return super()._fit(X, y, sample_weight)


class SpinningChild(CARTClassifier):
    """Waits for a solver child that burns 0.4 s of CPU."""

    def _fit(self, X, y, sample_weight):
        code = (
            "import time\nt = time.process_time()\n"
            "while time.process_time() - t < 0.4: pass"
        )
        subprocess.run([sys.executable, "-c", code], check=True)
        return super()._fit(X, y, sample_weight)


for _name, _cls in [
    ("test-log-a", LogA),
    ("test-log-b", LogB),
    ("test-spin", Spinning),
    ("test-sleep", Sleeping),
    ("test-spin-child", SpinningChild),
]:
    register_method(_name, _cls, replace=True)


def _small(methods, **kw):
    return unit_config(methods, datasets=["zoo-1"], depths=[1], time_limit=5, **kw)


# ------------------------------------------------------------- provenance
def test_every_record_carries_the_provenance_taken_once(tmp_path, monkeypatch):
    calls = []
    real = os.getloadavg

    def counted():
        calls.append(1)
        return real()

    monkeypatch.setattr(os, "getloadavg", counted)
    config = unit_config(["cart"], datasets=["zoo-1"], depths=[1, 2])
    frame = run_study(config, output_dir=tmp_path, workers=1, quiet=True).load()
    assert len(frame) == 4 and len(calls) == 1  # one load reading per study
    provenances = [json.loads(text) for text in frame["provenance"]]
    assert all(p == provenances[0] for p in provenances)
    p = provenances[0]
    assert p["source_revision"] == _provenance.current_revision()
    assert (
        p["source_revision"]
        == frame["protocol"].map(json.loads).iloc[0]["source_revision"]
    )
    assert p["cpu_model"] and p["cpu_model"] != "unknown"
    assert p["kernel_isa"] in ("baseline", "popcnt", "avx2", "avx512")
    if p["cpu_flags"] is not None:
        assert set(p["cpu_flags"]) <= set(_provenance.KERNEL_FLAGS)
        if p["kernel_isa"] == "avx2":
            assert {"avx2", "popcnt"} <= set(p["cpu_flags"])
    assert p["logical_cores"] == os.cpu_count()
    assert p["affinity_cores"] == len(os.sched_getaffinity(0))
    assert len(p["load_at_start"]) == 3 and p["workers"] == 1
    assert p["python"] == platform.python_version()
    assert p["python_implementation"] == platform.python_implementation()
    assert set(SOLVER_PACKAGES) <= set(p["packages"])
    for name in SOLVER_PACKAGES:  # installed ones by version, others absent
        try:
            installed = _provenance.metadata.version(name)
        except _provenance.metadata.PackageNotFoundError:
            installed = None
        assert p["packages"][name] == installed
    assert p["odtstudy"] == _provenance.package_versions()["odtstudy"]
    text = make_report("unit", output_dir=tmp_path).read_text()
    assert p["source_revision"] in text and p["cpu_model"] in text
    assert "One fit at a time (workers = 1)" in text
    assert "each fit once" in text


def test_workers_are_in_the_provenance_not_the_protocol(tmp_path):
    config = unit_config(["cart"], datasets=["zoo-1"], depths=[1])
    run_study(config, output_dir=tmp_path, workers=1, quiet=True)
    config = unit_config(["cart"], datasets=["zoo-1"], depths=[1, 2])
    frame = run_study(config, output_dir=tmp_path, workers=2, quiet=True).load()
    assert frame["protocol_id"].nunique() == 1 and len(frame) == 4
    workers = [json.loads(text)["workers"] for text in frame["provenance"]]
    assert sorted(workers) == [1, 1, 2, 2]
    text = make_report("unit", output_dir=tmp_path).read_text()
    assert "different concurrencies (workers = 1, 2)" in text


def test_a_changed_revision_is_another_protocol(tmp_path, monkeypatch):
    config = unit_config(["cart"], datasets=["zoo-1"], depths=[1])
    monkeypatch.setattr(_provenance, "current_revision", lambda: "rev-a")
    first = {run["protocol_id"] for run in expand_runs(config)}
    assert first == {run["protocol_id"] for run in expand_runs(config)}
    run_study(config, output_dir=tmp_path, quiet=True)
    assert len(run_study(config, output_dir=tmp_path, quiet=True).load()) == 2
    monkeypatch.setattr(_provenance, "current_revision", lambda: "rev-b")
    second = {run["protocol_id"] for run in expand_runs(config)}
    assert first.isdisjoint(second)
    # resumed at a new revision: every run again, never pooled with the old
    frame = run_study(config, output_dir=tmp_path, quiet=True).load()
    assert len(frame) == 4 and frame["protocol_id"].nunique() == 2
    revisions = {json.loads(text)["source_revision"] for text in frame["provenance"]}
    assert revisions == {"rev-a", "rev-b"}
    assert (
        "2 different protocols" in make_report("unit", output_dir=tmp_path).read_text()
    )


def _package_copy(tmp_path):
    """The package's sources, copied outside any git checkout."""
    root = tmp_path / "copy" / "odtstudy"
    shutil.copytree(
        _provenance._package_root(),
        root,
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c", "datasets"),
    )
    return root


def test_without_git_the_revision_is_a_stable_hash_of_the_sources(tmp_path):
    root = _package_copy(tmp_path)
    revision = _provenance.source_revision(root)
    assert revision == f"sha256:{_provenance.source_digest(root)}"
    assert len(revision) == len("sha256:") + 64
    assert _provenance.source_revision(root) == revision
    (root / "notes.txt").write_text("not a source file")
    assert _provenance.source_revision(root) == revision
    study = root / "study" / "runner.py"
    study.write_text(study.read_text() + "\n# edited\n")
    edited = _provenance.source_revision(root)
    assert edited.startswith("sha256:") and edited != revision
    (root / "dl85" / "extra.pxd").write_text("# a new declaration file\n")
    assert _provenance.source_revision(root) not in (revision, edited)


def test_no_git_binary_falls_back_to_the_source_hash(monkeypatch):
    monkeypatch.setattr(_provenance.shutil, "which", lambda name: None)
    root = _provenance._package_root()
    assert _provenance.source_revision() == f"sha256:{_provenance.source_digest(root)}"


def _git(root, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_checkout_commit_dirty_marker_and_untracked_package(tmp_path):
    root = _package_copy(tmp_path)
    repo = root.parent
    _git(repo, "init", "-q")
    # an environment inside a checkout that does not track the package
    assert _provenance.source_revision(root).startswith("sha256:")
    _git(repo, "add", "odtstudy")
    _git(repo, "commit", "-q", "-m", "sources")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    assert _provenance.source_revision(root) == head
    (repo / "README").write_text("outside the package: not its revision\n")
    assert _provenance.source_revision(root) == head
    tree = root / "tree.py"
    tree.write_text(tree.read_text() + "\n# edited\n")
    dirty = _provenance.source_revision(root)
    assert dirty.startswith(f"{head}-dirty-") and len(dirty) == len(head) + 19
    tree.write_text(tree.read_text() + "# edited again\n")
    assert _provenance.source_revision(root) not in (head, dirty)
    _git(repo, "checkout", "-q", "--", "odtstudy/tree.py")
    (root / "new_module.py").write_text("X = 1\n")  # untracked counts too
    assert _provenance.source_revision(root).startswith(f"{head}-dirty-")


# ---------------------------------------------------------------- repeats
def test_repeats_run_interleaved_in_fresh_processes(tmp_path, monkeypatch):
    log = tmp_path / "fits.log"
    monkeypatch.setenv("ODTSTUDY_TEST_FIT_LOG", str(log))
    config = _small(["test-log-a", "test-log-b"], repeats=3)
    frame = run_study(config, output_dir=tmp_path, workers=1, quiet=True).load()
    lines = [line.split() for line in log.read_text().splitlines()]
    # two folds: repeat r of A and B before repeat r + 1, never 3 in a row
    assert "".join(tag for tag, _ in lines) == "AB" * 6
    assert len({pid for _, pid in lines}) == 12 and str(os.getpid()) not in {
        pid for _, pid in lines
    }
    assert len(frame) == 4
    for _, row in frame.iterrows():
        times = json.loads(row["fit_times_s"])
        cpus = json.loads(row["cpu_times_s"])
        assert len(times) == 3 and len(cpus) == 3
        assert row["fit_time_s"] == statistics.median(times)
        assert row["cpu_time_s"] == statistics.median(cpus)
        assert json.loads(row["repeat_statuses"]) == ["ok"] * 3
    protocol = json.loads(frame["protocol"].iloc[0])
    assert protocol["repeats"] == 3
    once = {run["protocol_id"] for run in expand_runs(_small(["test-log-a"]))}
    thrice = {
        run["protocol_id"] for run in expand_runs(_small(["test-log-a"], repeats=3))
    }
    assert once.isdisjoint(thrice)
    text = make_report("unit", output_dir=tmp_path).read_text()
    assert "repeated up to 3 times" in text and "under 60 s" in text
    assert protocol["repeat_below_s"] == runner.REPEAT_BELOW_S


def test_fits_at_least_the_repeat_bound_are_timed_once(tmp_path, monkeypatch):
    log = tmp_path / "fits.log"
    monkeypatch.setenv("ODTSTUDY_TEST_FIT_LOG", str(log))
    monkeypatch.setattr(runner, "REPEAT_BELOW_S", 0.0)
    config = _small(["test-log-a", "test-log-b"], repeats=3)
    frame = run_study(config, output_dir=tmp_path, workers=1, quiet=True).load()
    assert "".join(line.split()[0] for line in log.read_text().splitlines()) == "AB" * 2
    assert len(frame) == 4
    assert frame["fit_times_s"].map(json.loads).map(len).eq(1).all()


@pytest.mark.parametrize(
    "outcome, repeat",
    [
        ({"status": "ok", "learner_status": "optimal", "fit_time_s": 1.0}, True),
        ({"status": "ok", "learner_status": "timeout", "fit_time_s": 1.0}, False),
        ({"status": "timeout", "fit_time_s": 1.0}, False),
        ({"status": "error", "fit_time_s": 1.0}, False),
        ({"status": "ok", "learner_status": "optimal", "fit_time_s": 60.0}, False),
        ({"status": "ok", "learner_status": "feasible", "fit_time_s": 5.0}, False),
        ({"status": "ok", "learner_status": "optimal"}, False),
    ],
)
def test_only_short_fits_that_end_on_their_own_are_repeated(outcome, repeat):
    assert runner._worth_repeating(outcome, {"time_limit": 5.0}) is repeat


def test_median_repeat_gives_the_record_its_fields():
    outcomes = [
        {"status": "ok", "fit_time_s": 3.0, "cpu_time_s": 2.5, "test_acc": 0.3},
        {"status": "ok", "fit_time_s": 1.0, "cpu_time_s": 0.9, "test_acc": 0.1},
        {"status": "timeout", "fit_time_s": 9.0, "test_acc": 0.9},
        {"status": "ok", "fit_time_s": 2.0, "cpu_time_s": 1.5, "test_acc": 0.2},
    ]
    combined = _combine_repeats(outcomes)
    assert combined["fit_time_s"] == 2.5  # median of 1, 2, 3, 9
    assert combined["cpu_time_s"] == 1.5  # the killed repeat has no CPU time
    assert combined["test_acc"] == 0.2  # the lower-median repeat's fields
    assert combined["fit_times_s"] == [3.0, 1.0, 9.0, 2.0]
    assert combined["cpu_times_s"] == [2.5, 0.9, None, 1.5]
    assert combined["repeat_statuses"] == ["ok", "ok", "timeout", "ok"]


def test_cpu_time_beside_wall_time(tmp_path):
    methods = ["test-spin", "test-sleep", "test-spin-child"]
    config = unit_config(methods, datasets=["zoo-1"], depths=[1], folds=2)
    config.time_limit = 10
    frame = run_study(config, output_dir=tmp_path, workers=1, quiet=True).load()
    by = frame.groupby("method")
    spin, sleep, child = (by.get_group(m) for m in methods)
    assert (spin["cpu_time_s"] >= 0.4).all()
    assert (sleep["fit_time_s"] >= 0.4).all()
    # a sleeping fit: its CPU time (validation, sampling) is well below its wall
    assert (sleep["cpu_time_s"] < 0.5 * sleep["fit_time_s"]).all()
    assert (child["cpu_time_s"] >= 0.4).all()  # the reaped child's CPU counts
    assert frame["fit_times_s"].map(json.loads).map(len).eq(1).all()


# ------------------------------------------------------------ bad settings
@pytest.mark.parametrize("value", ["0", "-1", "2.5", "three"])
def test_repeats_flag_must_be_a_positive_integer(value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["study", "quick", f"--repeats={value}", "--dry-run"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --repeats" in err and "integer >= 1" in err


def test_repeats_flag_sets_the_study_repeats(tmp_path, capsys, no_preflight):
    argv = ["study", "quick", "--scale", "smoke", "--output", str(tmp_path)]
    assert main([*argv, "--repeats", "3", "--dry-run"]) == 0
    three = capsys.readouterr().out.splitlines()[0]
    assert main([*argv, "--dry-run"]) == 0
    one = capsys.readouterr().out.splitlines()[0]
    assert "each fitted up to 3 times" in three and "each fitted" not in one
    assert three.split("protocol ")[1] != one.split("protocol ")[1]


def test_repeats_key_is_checked(tmp_path, no_preflight):
    # the override's check, not quick's learners (their preflight fits, ~5 s,
    # run in test_study_configs.py)
    toml = tmp_path / "bad.toml"
    toml.write_text(
        textwrap.dedent(
            """
            [study]
            datasets = ["zoo-1"]
            methods = ["cart"]
            repeats = 0
            """
        )
    )
    with pytest.raises(ValueError, match=r"\[study\] repeats: expected an integer"):
        load_config(toml)
    with pytest.raises(ValueError, match=r"repeats \(override\)"):
        load_config("quick", repeats=-1)
    config = load_config("quick", scale="smoke", repeats=2)
    assert config.repeats == 2
    with pytest.raises(ValueError, match="repeats"):
        _small(["cart"], repeats=0).validate()


def test_versus_runs_one_fit_at_a_time():
    study = tomllib.loads((CONFIGS / "versus.toml").read_text())
    assert study["study"]["workers"] == 1
    assert all(
        scale.get("workers", 1) == 1 for scale in study.get("scales", {}).values()
    )
    assert unit_config(["cart"]).repeats == 1  # the default: one fit per run
