"""Synthetic study records for the report tests (no learner is run)."""

import itertools

from odtstudy.study.results import ResultsStore

#: label -> registered learner (dl85 and cpsat are exact, cart is not)
METHODS = {"dl85": "dl85", "cpsat": "cpsat", "cart": "cart"}


def protocol(folds=2, seeds=(0,), time_limit=10.0, methods=None):
    methods = methods or METHODS
    return {
        "scale": "default",
        "folds": folds,
        "seeds": list(seeds),
        "time_limit": time_limit,
        "grace_s": 1.0,
        "memory_limit_mb": None,
        "max_thresholds": 8,
        "methods": {
            label: {"method": base, "params": {}, "time_limit": time_limit}
            for label, base in methods.items()
        },
        "versions": {"odtstudy": "test", "python": "3"},
    }


_ids = itertools.count()


def run(dataset, depth, method, fold=0, seed=0, proto=None, **outcome):
    """One record; ``outcome`` overrides the defaults (a proven, fast tree)."""
    proto = proto or protocol()
    record = {
        "run_id": f"r{next(_ids)}",
        "protocol_id": "p" + str(proto["folds"]) + str(proto["time_limit"]),
        "study": "synthetic",
        "scale": "default",
        "dataset": dataset,
        "method": method,
        "params": {},
        "depth": depth,
        "fold": fold,
        "n_folds": proto["folds"],
        "seed": seed,
        "time_limit": proto["time_limit"],
        "status": "ok",
        "learner_status": "optimal",
        "optimal": METHODS.get(method) != "cart",
        "claimed_optimal": METHODS.get(method) != "cart",
        "has_tree": True,
        "train_acc": 0.9,
        "test_acc": 0.8,
        "objective": 10.0,
        "lower_bound": 10.0,
        "n_leaves": 4,
        "tree_depth": depth,
        "fit_time_s": 0.5,
        "predict_time_s": 0.001,
        "wall_time_s": 0.6,
        "fit_mem_mb": 5.0,
        "peak_rss_mb": 100.0,
        "n_train": 100,
        "n_test": 50,
        "n_features": 10,
        "stats": {},
        "error": None,
        "protocol": proto,
        "versions": proto["versions"],
        "host": "test",
        "utc": "2026-01-01T00:00:00+00:00",
    }
    record.update(outcome)
    if not record["has_tree"]:
        record.update(
            status="error",
            optimal=False,
            test_acc=None,
            train_acc=None,
            objective=None,
            error="boom",
        )
    return record


def grid(datasets=("a", "b", "c", "d"), depths=(2, 3), folds=2, proto=None, **outcome):
    """Every cell of a small study, each run as :func:`run` makes it."""
    proto = proto or protocol(folds=folds)
    return [
        run(d, depth, m, fold=f, proto=proto, **outcome)
        for d in datasets
        for depth in depths
        for m in proto["methods"]
        for f in range(proto["folds"])
    ]


def write_study(folder, records):
    """Write ``records`` as ``<folder>/results.jsonl``."""
    store = ResultsStore(folder)
    for record in records:
        store.append(record)
    return store
