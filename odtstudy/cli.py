"""Command line: ``odtstudy study``, ``odtstudy reproduce``, ``odtstudy report``,
``odtstudy datasets``, ``odtstudy methods``."""

from __future__ import annotations

import argparse
import sys
import time


def _find_reproductions() -> None:
    """Let a study be found by a reproduction's name (``odtstudy study tmo``)."""
    import odtstudy.reproduce  # noqa: F401  (registers papers/<name>/study.toml)


def _study(args) -> int:
    _find_reproductions()
    if args.name == "list":
        from odtstudy.study import list_studies

        for name in list_studies():
            print(name)
        return 0
    overrides = {
        "folds": args.folds,
        "time_limit": args.time_limit,
        "repeats": args.repeats,
    }
    return _run_study(args, args.name, overrides, scheduler=args.scheduler)


def _check_writable(folder, output) -> None:
    """Create the study folder and check a file can be written in it, before
    any run (a ``ValueError`` naming ``--output`` otherwise)."""
    probe = folder / ".odtstudy-write-check"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(
            f"--output {output}: cannot write the study folder {folder} "
            f"({reason}); pass a writable folder with --output"
        ) from None


def _make_report(name, output, scale):
    """The study's report, opened by its paper's section when it reproduces one."""
    from odtstudy.reproduce import paper_preface
    from odtstudy.study import make_report

    return make_report(
        name, output_dir=output, scale=scale, preface=paper_preface(name)
    )


def _run_study(args, name, overrides=None, scheduler=None) -> int:
    """Run study ``name`` (resumable) and write its report: the one code path
    of ``odtstudy study`` and ``odtstudy reproduce``."""
    from odtstudy.study import (
        StudyInterrupted,
        expand_runs,
        load_config,
        run_study,
        study_folder,
    )

    config = load_config(name, scale=args.scale, **(overrides or {}))
    if scheduler is not None:
        _refuse_user_inputs_on_dask(config)
    folder = study_folder(args.output, config.name, config.scale)
    if args.dry_run:
        return _dry_run(config, expand_runs(config), folder)
    _check_writable(folder, args.output)
    if args.require_idle is not None:
        from odtstudy.study._idle import wait_until_idle

        workers = args.workers or config.workers
        say = None if args.quiet else (lambda line: print(line, file=sys.stderr))
        try:
            wait_until_idle(workers, args.require_idle, say=say)
        except RuntimeError as busy:
            print(f"odtstudy: {busy}", file=sys.stderr)
            return 3
    start = time.perf_counter()
    try:
        store = run_study(
            config,
            output_dir=args.output,
            workers=args.workers,
            retry_failed=args.retry_failed,
            quiet=args.quiet,
            scheduler=scheduler,
        )
    except StudyInterrupted as stop:
        if stop.recorded or (folder / "results.jsonl").exists():
            _make_report(config.name, args.output, config.scale)
        resume = " ".join(["odtstudy", args.command, *args.argv])
        print(f"\nodtstudy: {stop}; resume with: {resume}", file=sys.stderr)
        return 128 + stop.signum
    path = _make_report(config.name, args.output, config.scale)
    print(
        f"study {config.name!r}: {len(store.load())} runs recorded in {store.path} "
        f"({time.perf_counter() - start:.1f} s); report: {path}"
    )
    return 0


def _reproduce(args) -> int:
    from odtstudy.reproduce import (
        check_reproduction,
        list_reproductions,
        load_published,
        verdict_table_problems,
    )

    if args.name == "list":
        for name in list_reproductions():
            print(f"{name:18s} {load_published(name).paper['citation']}")
        return 0
    check_reproduction(args.name)
    code = _run_study(args, args.name)
    if code or args.dry_run:
        return code
    from odtstudy.study import study_folder

    report = study_folder(args.output, args.name, args.scale) / "report.md"
    problems = verdict_table_problems(report.read_text())
    if problems:
        print(
            f"odtstudy: the verdict table of {args.name!r} is incomplete: "
            + "; ".join(problems),
            file=sys.stderr,
        )
        return 1
    return 0


def _dry_run(config, runs, folder) -> int:
    from odtstudy.study import ResultsStore

    done = (
        ResultsStore(folder).run_ids() if (folder / "results.jsonl").exists() else set()
    )
    todo = [run for run in runs if run["run_id"] not in done]
    print(
        f"study {config.name!r} ({config.scale} scale) -> {folder}: {len(runs)} runs "
        f"in the grid, {len(runs) - len(todo)} already recorded, {len(todo)} to run"
        + (f", each fitted up to {config.repeats} times" if config.repeats > 1 else "")
        + f"; protocol {runs[0]['protocol_id'] if runs else '-'}"
    )
    for run in todo:
        print(
            f"{run['dataset']}\t{run['method']}\tdepth={run['depth']}\t"
            f"fold={run['fold']}/{run['n_folds']}\tseed={run['seed']}\t"
            f"time_limit={run['time_limit']:g}"
        )
    return 0


def _report(args) -> int:
    from odtstudy.study.report._compare import compare_studies

    if args.other:
        path = compare_studies(
            args.name, args.other, output_dir=args.output, scale=args.scale
        )
        print(path)
        return 0
    print(_make_report(args.name, args.output, args.scale))
    return 0


def _refuse_user_inputs_on_dask(config) -> None:
    from odtstudy.datasets import dataset_info
    from odtstudy.study import get_method

    user = [
        name for name in config.datasets if dataset_info(name)["collection"] == "user"
    ] + [spec.label for spec in config.methods if get_method(spec.method).user]
    if user:
        raise ValueError(
            f"study {config.name!r}: {', '.join(map(repr, user))} come from the "
            "study file and are known to this process only, not to Dask "
            "workers; run this study without --scheduler"
        )


def _load_study_inputs(study) -> None:
    """Register a study file's own datasets and learners (``--study``)."""
    if study is not None:
        from odtstudy.study import load_config

        _find_reproductions()
        load_config(study)


def _datasets(args) -> int:
    from odtstudy.datasets import dataset_info, list_datasets

    _load_study_inputs(args.study)
    for name in list_datasets():
        info = dataset_info(name)
        shape = f"{info.get('rows', '?')} x {info.get('features', '?')}"
        print(f"{name:32s} {info['kind']:12s} {shape:12s} {info.get('source', '')}")
    return 0


def _methods(args) -> int:
    from odtstudy.study import get_method, list_methods

    _load_study_inputs(args.study)
    names = list_methods(available_only=False)
    width = max(18, *(len(name) + 1 for name in names))
    for name in names:
        method = get_method(name)
        installed = "installed" if method.available() else "not-installed"
        exact = "exact" if method.exact else "heuristic"
        tasks = ",".join(method.tasks)
        print(
            f"{name:{width}s} {tasks:15s}{method.data:8s} {exact:10s}"
            f"{method.objective_family():34s}{installed:14s}{method.tool():14s}"
            f"{method.description}"
        )
    return 0


def _add_run_options(parser) -> None:
    """The options :func:`_run_study` reads: those of ``odtstudy study`` and
    ``odtstudy reproduce`` alike."""
    parser.add_argument(
        "--scale", default="default", choices=["smoke", "default", "paper"]
    )
    parser.add_argument("--output", default="reports", help="reports folder")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="runs executed at the same time (default: the config's)",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="re-run runs recorded as error/timeout/memout",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check the config, print the runs it would execute, and exit",
    )
    parser.add_argument(
        "--require-idle",
        type=float,
        nargs="?",
        const=600.0,
        default=None,
        metavar="SECONDS",
        help="start only when the 1-minute load average is at most the cores "
        "the workers leave free: wait up to SECONDS (default 600) for it, "
        "then refuse",
    )


def _count(text: str) -> int:
    """An integer >= 1 given on the command line (argparse names the flag
    in front of the message)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or str(value) != text.strip():
        raise argparse.ArgumentTypeError(
            f"expected an integer >= 1, got {text!r}; e.g. --repeats 3"
        )
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="odtstudy", description="Compare optimal decision tree learners."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    study = sub.add_parser("study", help="run a study (or 'list' the built-in ones)")
    study.add_argument("name", help="built-in study name, a .toml path, or 'list'")
    _add_run_options(study)
    study.add_argument("--folds", type=int, default=None)
    study.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds per run (overrides the config)",
    )
    study.add_argument(
        "--repeats",
        type=_count,
        default=None,
        metavar="N",
        help="fit each run N times, each in a fresh process, the methods "
        "interleaved; records keep every time and their median (default: the "
        "config's repeats, else 1)",
    )
    study.add_argument(
        "--scheduler",
        default=None,
        help="run on a Dask distributed cluster (tcp://HOST:PORT)",
    )
    study.set_defaults(func=_study)
    reproduce = sub.add_parser(
        "reproduce",
        help="reproduce a paper's claims: run its study, then report paper vs "
        "odtstudy (or 'list' the reproductions)",
    )
    reproduce.add_argument("name", help="a reproduction's name, or 'list'")
    _add_run_options(reproduce)
    reproduce.set_defaults(func=_reproduce)
    report = sub.add_parser("report", help="rebuild a study's report from its records")
    report.add_argument("name")
    report.add_argument(
        "other",
        nargs="?",
        help="a second study name or results folder: compare the two side by side",
    )
    report.add_argument("--output", default="reports")
    report.add_argument(
        "--scale", default="default", choices=["smoke", "default", "paper"]
    )
    report.set_defaults(func=_report)
    study_help = "also the datasets and learners a study file defines"
    datasets = sub.add_parser(
        "datasets", help="list the datasets: name, kind, shape, provenance"
    )
    datasets.add_argument("--study", default=None, help=study_help)
    datasets.set_defaults(func=_datasets)
    methods = sub.add_parser(
        "methods",
        help="list the methods: name, data kind, exactness, objective family, "
        "installed, tool",
    )
    methods.add_argument("--study", default=None, help=study_help)
    methods.set_defaults(func=_methods)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv[1:]
    try:
        return args.func(args)
    except (KeyError, ValueError) as exc:
        message = exc.args[0] if exc.args else str(exc)
        print(f"odtstudy: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("odtstudy: interrupted before any run started", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
