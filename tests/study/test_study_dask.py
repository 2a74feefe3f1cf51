import pytest

from odtstudy.study import MethodSpec, StudyConfig, make_report, run_study

distributed = pytest.importorskip("distributed")


@pytest.mark.ci_slow
def test_smoke_study_through_a_local_dask_cluster(tmp_path):
    config = StudyConfig(
        name="dask-smoke",
        datasets=["zoo-1", "uci/iris"],
        methods=[MethodSpec("cart", "cart"), MethodSpec("dl85", "dl85")],
        depths=[2],
        folds=2,
        time_limit=10,
        grace_s=10,
    )
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        store = run_study(
            config,
            output_dir=tmp_path,
            scheduler=cluster.scheduler_address,
            quiet=True,
        )
        frame = store.load()
        assert len(frame) == 8 and (frame["status"] == "ok").all()
        assert frame.loc[frame["method"] == "dl85", "optimal"].all()
        # resuming through the same client runs nothing new
        run_study(config, output_dir=tmp_path, scheduler=client, quiet=True)
        assert len(store.load()) == 8
    assert make_report("dask-smoke", output_dir=tmp_path).exists()


class _OneSecondClient(distributed.Client):
    """The runner's Client, waiting 1 s instead of 10 for the scheduler."""

    def __init__(self, address, timeout):
        super().__init__(address, timeout="1s")


def test_unreachable_scheduler_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(distributed, "Client", _OneSecondClient)
    config = StudyConfig(
        name="nowhere",
        datasets=["zoo-1"],
        methods=[MethodSpec("cart", "cart")],
        depths=[1],
        folds=2,
    )
    with pytest.raises(ValueError, match="cannot reach the Dask scheduler"):
        run_study(config, output_dir=tmp_path, scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "nowhere").exists()
