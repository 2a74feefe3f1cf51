"""The ``memory`` study (bounded DL8.5 cache) at the smoke scale."""

import json

from odtstudy.study import load_config, run_study


def test_study_memory_smoke_bounded_variants_match_unbounded(tmp_path):
    config = load_config("memory", scale="smoke")
    assert "dl85-unbounded" in [m.label for m in config.methods]
    store = run_study(config, output_dir=tmp_path, quiet=True)
    df = store.load()
    assert len(df) == len(config.datasets) * len(config.depths) * len(config.methods)
    assert (df["status"] == "ok").all(), df[["method", "status", "error"]]
    assert df["optimal"].astype(bool).all()
    bounded_seen = 0
    for (dataset, depth), group in df.groupby(["dataset", "depth"]):
        ref = group.loc[group["method"] == "dl85-unbounded", "objective"]
        assert len(ref) == 1
        for row in group.itertuples():
            assert row.objective == ref.iloc[0], (dataset, depth, row.method)
            stats = row.stats if isinstance(row.stats, dict) else json.loads(row.stats)
            params = (
                row.params if isinstance(row.params, dict) else json.loads(row.params)
            )
            if params.get("max_cache_size"):
                bounded_seen += 1
                assert stats["cache_peak_entries"] <= params["max_cache_size"]
                assert stats["cache_wipes"] > 0
    assert bounded_seen == len(df) - df["method"].eq("dl85-unbounded").sum()
