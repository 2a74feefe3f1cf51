"""Study configs are checked before any run, naming the file, the key and the fix."""

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from odtstudy.cart import CARTClassifier
from odtstudy.cli import main
from odtstudy.study import (
    Method,
    MethodSpec,
    StudyConfig,
    get_method,
    load_config,
    registry,
)

BASE = """\
[study]
name = "tiny"
datasets = ["zoo-1"]
methods = ["dl85"]
depths = [1, 2]
folds = 2
time_limit = 5
"""


def _set(key, value):
    """BASE with ``[study] key = value`` (replacing the line if present)."""
    lines = [line for line in BASE.splitlines() if not line.startswith(f"{key} =")]
    return "\n".join([*lines, f"{key} = {value}"]) + "\n"


# case -> (TOML text, the key named in the message, a piece of the fix)
BAD = {
    "misspelt-param": (
        BASE + '\n[methods.dl85]\nbrnching = "asc"\n',
        "[methods.dl85] brnching",
        "did you mean 'branching'?",
    ),
    "bad-param-value": (
        BASE + '\n[methods.dl85]\nbranching = "sideways"\n',
        "[methods.dl85] branching",
        "'asc'",
    ),
    "runner-param": (
        BASE + "\n[methods.dl85]\nmax_depth = 3\n",
        "[methods.dl85] max_depth",
        "set by the runner",
    ),
    "method-time-limit": (
        BASE + "\n[methods.dl85]\ntime_limit = 0\n",
        "[methods.dl85] time_limit",
        "time_limit = 60",
    ),
    "unknown-method": (
        _set("methods", '["dl58"]'),
        "[study] methods 'dl58'",
        "registered methods",
    ),
    "unknown-method-in-table": (
        _set("methods", '["mine"]') + '\n[methods.mine]\nmethod = "dl58"\n',
        "[methods.mine] method",
        "registered methods",
    ),
    "unused-table": (
        BASE + '\n[methods.dl85-asc]\nmethod = "dl85"\nbranching = "asc"\n',
        "[methods.dl85-asc]",
        "defined but not used",
    ),
    "folds-above-rows": (_set("folds", 500), "[study] folds", "use folds <= 41"),
    "folds-above-class": (_set("folds", 60), "[study] folds", "use folds <= 41"),
    "folds-zero": (_set("folds", 0), "[study] folds", "folds = 5"),
    "folds-string": (_set("folds", '"five"'), "[study] folds", "folds = 5"),
    "folds-bool": (_set("folds", "true"), "[study] folds", "a boolean"),
    "workers-float": (_set("workers", 1.5), "[study] workers", "workers = 2"),
    "depths-scalar": (_set("depths", 2), "[study] depths", "depths = [2]"),
    "depths-zero": (_set("depths", "[0, 2]"), "[study] depths", "depths = [2, 3, 4]"),
    "depths-twice": (_set("depths", "[2, 2]"), "[study] depths", "once"),
    "seeds-scalar": (_set("seeds", 0), "[study] seeds", "seeds = [0]"),
    "datasets-scalar": (
        _set("datasets", '"zoo-1"'),
        "[study] datasets",
        'datasets = ["zoo-1"]',
    ),
    "unknown-dataset": (
        _set("datasets", '["zoo-2"]'),
        "[study] datasets",
        "list_datasets()",
    ),
    "methods-mixed-all": (
        _set("methods", '["all", "dl85"]'),
        "[study] methods",
        "cannot be mixed",
    ),
    "name-traversal": (_set("name", '"../../x"'), "[study] name", "no path"),
    "name-absolute": (_set("name", '"/tmp/x"'), "[study] name", "no path"),
    "name-dot": (_set("name", '"."'), "[study] name", "no path"),
    "time-limit-negative": (_set("time_limit", -1), "[study] time_limit", "> 0"),
    "time-limit-inf": (_set("time_limit", "inf"), "[study] time_limit", "> 0"),
    "grace-string": (_set("grace_s", '"ten"'), "[study] grace_s", "grace_s = 10"),
    "memory-negative": (
        _set("memory_limit_mb", -5),
        "[study] memory_limit_mb",
        "memory_limit_mb = 4096",
    ),
    "max-thresholds-zero": (
        _set("max_thresholds", 0),
        "[study] max_thresholds",
        "max_thresholds = 8",
    ),
    "description-list": (_set("description", "[1]"), "[study] description", "string"),
    "unknown-study-key": (BASE + "fold = 3\n", "[study] fold", "did you mean 'folds'?"),
    "unknown-scale-key": (
        BASE + "\n[scales.smoke]\ndepth = [2]\n",
        "[scales.smoke] depth",
        "did you mean 'depths'?",
    ),
    "bad-value-in-unused-scale": (
        BASE + "\n[scales.paper]\ndepths = 2\n",
        "[scales.paper] depths",
        "depths = [2]",
    ),
    "unknown-scale": (
        BASE + "\n[scales.huge]\ndepths = [2]\n",
        "[scales.huge]",
        "smoke, default, paper",
    ),
    "unknown-table": (
        BASE + '\n[method.dl85]\nbranching = "asc"\n',
        "[method]",
        "did you mean 'methods'?",
    ),
    "study-key-at-top": ("folds = 3\n" + BASE, "folds", "under [study]"),
    "no-study-table": ("[scales.smoke]\ndepths = [2]\n", "[study]", "missing"),
    "depth-beyond-learner": (
        _set("methods", '["boost"]').replace("depths = [1, 2]", "depths = [2, 3, 4]")
        + '\n[methods.boost]\nmethod = "optiboost-lp"\npricing = "exhaustive"\n',
        "[study] depths",
        "use depths <= 3",
    ),
    "cache-too-small-for-depth": (
        _set("depths", "[2, 5]") + "\n[methods.dl85]\nmax_cache_size = 4\n",
        "[study] depths",
        "max_cache_size",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_fails_before_any_run(case, tmp_path, capsys):
    text, key, fix = BAD[case]
    path = tmp_path / f"{case}.toml"
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_config(str(path))
    message = str(info.value)
    assert str(path) in message and f"{key}:" in message and fix in message, message
    output = tmp_path / "reports"
    output.mkdir()
    assert main(["study", str(path), "--output", str(output), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("odtstudy: error: ") and str(path) in err and key in err
    assert not any(output.iterdir())


def test_base_config_loads(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(BASE + '\n[methods.dl85]\nbranching = "asc"\ntime_limit = 3\n')
    config = load_config(str(path))
    assert config.name == "tiny" and config.folds == 2 and config.depths == [1, 2]
    (spec,) = config.methods
    assert spec.params == {"branching": "asc"} and spec.time_limit == 3


def test_overrides_get_the_same_checks(tmp_path, capsys):
    path = tmp_path / "tiny.toml"
    path.write_text(BASE)
    for value, fix in ((500, "use folds <= 41"), ("five", "folds = 5")):
        with pytest.raises(ValueError, match="folds \\(override\\)") as info:
            load_config(str(path), folds=value)
        assert str(path) in str(info.value) and fix in str(info.value)
    with pytest.raises(ValueError, match="time_limit \\(override\\)"):
        load_config(str(path), time_limit=-1.0)
    with pytest.raises(ValueError, match="fold \\(override\\): unknown key"):
        load_config(str(path), fold=2)
    output = tmp_path / "reports"
    output.mkdir()
    assert main(["study", str(path), "--output", str(output), "--folds", "500"]) == 2
    assert "folds (override)" in capsys.readouterr().err
    assert not any(output.iterdir())


def test_scale_values_are_named_by_their_scale(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(BASE + "\n[scales.smoke]\nfolds = 500\n")
    assert load_config(str(path)).folds == 2
    with pytest.raises(ValueError, match=r"\[scales\.smoke\] folds: 500 folds"):
        load_config(str(path), scale="smoke")


def test_tables_used_only_by_a_scale_or_by_all_are_fine(tmp_path, no_preflight):
    path = tmp_path / "tiny.toml"
    path.write_text(
        BASE
        + '\n[scales.smoke]\nmethods = ["dl85-asc"]\n'
        + '\n[methods.dl85-asc]\nmethod = "dl85"\nbranching = "asc"\n'
    )
    assert [m.label for m in load_config(str(path)).methods] == ["dl85"]
    smoke = load_config(str(path), scale="smoke")
    assert [m.label for m in smoke.methods] == ["dl85-asc"]
    path.write_text(
        _set("methods", '"all"') + '\n[methods.dl85-asc]\nmethod = "dl85"\n'
    )
    assert "dl85-asc" in [m.label for m in load_config(str(path)).methods]


def test_all_with_a_table_named_for_a_variant_runs_the_variant(tmp_path, no_preflight):
    # "all" leaves out the variants (methods with defaults); a table named for
    # one adds it, as a table with a new label does
    path = tmp_path / "tiny.toml"
    path.write_text(_set("methods", '"all"'))
    assert "dl85-numeric" not in [m.label for m in load_config(str(path)).methods]
    path.write_text(_set("methods", '"all"') + "\n[methods.dl85-numeric]\n")
    labels = [m.label for m in load_config(str(path)).methods]
    assert labels.count("dl85-numeric") == 1 and labels[0] == "cart"


# ------------------------------------------------------- configs in Python
class _RejectsInFit(CARTClassifier):
    """Test double: every fit rejects its parameters."""

    def _fit(self, X, y, sample_weight):
        raise ValueError("no fit for you")


def _register(monkeypatch, name, target):
    """A registered method for this test only (no leak into methods = "all")."""
    method = Method(name, target)
    monkeypatch.setitem(registry._REGISTRY, name, method)
    return method


def _config(**kw):
    base = dict(
        name="unit",
        datasets=["zoo-1"],
        methods=[MethodSpec("cart", "cart")],
        depths=[1, 2],
        folds=2,
        time_limit=5.0,
    )
    base.update(kw)
    return StudyConfig(**base)


@pytest.mark.parametrize(
    "fields, key, fix",
    [
        (dict(depths=2), "depths", "depths = [2]"),
        (dict(datasets="zoo-1"), "datasets", 'datasets = ["zoo-1"]'),
        (dict(folds=True), "folds", "a boolean"),
        (dict(folds=102), "folds", "use folds <= 41"),
        (dict(name="../x"), "name", "no path"),
        (dict(memory_limit_mb=0), "memory_limit_mb", "> 0"),
        (dict(seeds=[-1]), "seeds", ">= 0"),
        (dict(methods=["cart"]), "methods", "MethodSpec"),
        (dict(methods=[]), "methods", "no (installed) methods"),
        (
            dict(methods=[MethodSpec("cart", "cart", {"depth": 2})]),
            "method 'cart' depth",
            "its parameters are",
        ),
        (
            dict(methods=[MethodSpec("cart", "cart", {"random_state": 2})]),
            "method 'cart' random_state",
            "seeds",
        ),
        (
            dict(methods=[MethodSpec("cart", "cart", time_limit=-1)]),
            "method 'cart' time_limit",
            "> 0",
        ),
        (dict(methods=[MethodSpec("x", "nope")]), "method 'x'", "unknown method"),
        (
            dict(methods=[MethodSpec("c", "cart", {"max_cache_fraction": 0.5})]),
            "method 'c' max_cache_fraction",
            "does not take: remove max_cache_fraction",
        ),
        (
            dict(methods=[MethodSpec("b", "dl85", {"max_cache_fraction": 1.5})]),
            "method 'b' max_cache_fraction",
            "must lie in (0, 1]",
        ),
        (
            dict(methods=[MethodSpec("b", "dl85", {"max_cache_fraction": "half"})]),
            "method 'b' max_cache_fraction",
            "a number in (0, 1]",
        ),
        (
            dict(
                methods=[
                    MethodSpec(
                        "b", "dl85", {"max_cache_fraction": 0.5, "max_cache_size": 9}
                    )
                ]
            ),
            "method 'b' max_cache_fraction",
            "keep one",
        ),
    ],
)
def test_python_configs_name_the_study_and_the_field(fields, key, fix):
    config = _config(**fields)
    with pytest.raises(ValueError) as info:
        config.validate()
    message = str(info.value)
    assert message.startswith(f"study {config.name!r}: "), message
    assert f"{key}:" in message, message
    assert fix in message, message


def test_a_relative_cache_bound_passes_validation_and_preflight():
    spec = MethodSpec("b", "dl85", {"max_cache_fraction": 0.5})
    config = _config(methods=[spec])
    assert config.validate(preflight=True) is config


def test_preflight_is_opt_in_for_python_configs(monkeypatch):
    _register(monkeypatch, "test-rejects-in-fit", _RejectsInFit)
    config = _config(methods=[MethodSpec("r", "test-rejects-in-fit")])
    assert config.validate() is config
    with pytest.raises(ValueError, match=r"method 'r': .*no fit for you"):
        config.validate(preflight=True)
    bad_value = _config(methods=[MethodSpec("cart", "cart", {"criterion": "nope"})])
    bad_value.validate()
    with pytest.raises(ValueError, match=r"method 'cart' criterion: .*'gini'"):
        bad_value.validate(preflight=True)


def test_preflight_survives_a_learner_that_crashes_or_hangs(monkeypatch, tmp_path):
    log = tmp_path / "spawned.txt"

    class Crashes(CARTClassifier):
        def _fit(self, X, y, sample_weight):
            os.kill(os.getpid(), signal.SIGSEGV)

    class HangsWithASolver(CARTClassifier):
        def _fit(self, X, y, sample_weight):
            handle, name = tempfile.mkstemp(suffix=".mps")
            os.close(handle)
            child = subprocess.Popen(["sleep", "300"])
            log.write_text(f"{child.pid} {name}\n")
            time.sleep(60)

    _register(monkeypatch, "test-preflight-crash", Crashes)
    _register(monkeypatch, "test-preflight-hang", HangsWithASolver)
    config = _config(
        methods=[
            MethodSpec("crash", "test-preflight-crash"),
            MethodSpec("hang", "test-preflight-hang"),
        ],
        time_limit=0.5,
    )
    start = time.perf_counter()
    assert config.validate(preflight=True) is config  # left to the runs
    assert time.perf_counter() - start < 15
    pid, name = log.read_text().split()
    assert Path(name).parent.name.startswith("odtstudy-preflight-")
    assert not Path(name).exists() and not Path(name).parent.exists()
    time.sleep(0.2)
    assert not psutil.pid_exists(int(pid)) or (
        psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE
    )


# ------------------------------------------------------------- registry
def test_make_rejects_unknown_parameters_but_skips_runner_ones(monkeypatch):
    with pytest.raises(TypeError, match=r"'brnching' .*did you mean 'branching'"):
        get_method("dl85").make(max_depth=2, brnching="asc")
    with pytest.raises(TypeError, match=r"its parameters are .*min_samples_leaf"):
        get_method("cart").make(max_depth=2, leafs=3)

    def factory(max_depth, criterion="gini"):
        return CARTClassifier(max_depth=max_depth, criterion=criterion)

    method = _register(monkeypatch, "test-no-time-limit", factory)
    made = method.make(max_depth=2, time_limit=5, random_state=0, criterion="entropy")
    assert made.max_depth == 2 and made.criterion == "entropy"
    with pytest.raises(TypeError, match="takes no parameter 'splitter'"):
        method.make(max_depth=2, splitter="best")


def test_toml_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + BASE.encode())
    assert load_config(str(path)).name == "tiny"


@pytest.mark.parametrize(
    "data",
    [
        BASE.replace('"tiny"', '"caf\xe9"').encode("latin-1"),
        b"\x00\x01\xff\xfe" * 8,
    ],
    ids=["latin-1", "binary"],
)
def test_toml_that_is_not_utf8_names_the_file_and_the_fix(tmp_path, data, capsys):
    path = tmp_path / "enc.toml"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=r"is not UTF-8 text.*save it as UTF-8"):
        load_config(str(path))
    assert main(["study", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "UTF-8" in err
