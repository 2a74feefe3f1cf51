"""HiGHS in a child process: ``python _highs_child.py DIR``.

Run by :func:`odtstudy.milp._highs.solve_highs` as a script (it imports only
NumPy and highspy, so it starts in a fraction of a second), through a
:class:`odtstudy.milp._process.SolverProcess`, whose supervisor SIGKILLs it
at ``kill_at`` should it outrun its own time limit. Reads
``DIR/model.npz`` and ``DIR/options.json``, writes every improving solution
to ``DIR/incumbent.npz`` (so a kill at the deadline still leaves the best
one) and the final outcome to ``DIR/result.npz``. Files appear by atomic
rename: a reader never sees a partial one.

``DIR/trace.txt`` gets a line ``time incumbent bound errors`` at each
improving solution and each rise of the dual bound (``time`` is
:func:`odtstudy._deadline.now`, the clock of the fit's deadline: a
system-wide monotonic clock, read here from that module's file so that the
child does not import the package; ``errors`` is the incumbent's value of the ``count``
columns, ``nan`` when not given); a kill may cut its last line.
"""

import importlib.util
import json
import math
import os
import sys

import highspy
import numpy as np


def _deadline_module():
    """``odtstudy._deadline`` loaded from its file (stdlib only), without
    importing the odtstudy package and its dependencies."""
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, "_deadline.py")
    spec = importlib.util.spec_from_file_location("_odtstudy_deadline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


now = _deadline_module().now


def _save(directory, name, **arrays):
    tmp = os.path.join(directory, f".{name}.tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, os.path.join(directory, f"{name}.npz"))


def _build(h, data):
    lp = highspy.HighsLp()
    n_cols, n_rows = len(data["cost"]), len(data["row_lower"])
    lp.num_col_, lp.num_row_ = n_cols, n_rows
    lp.col_cost_ = data["cost"]
    lp.col_lower_, lp.col_upper_ = data["col_lower"], data["col_upper"]
    lp.row_lower_, lp.row_upper_ = data["row_lower"], data["row_upper"]
    lp.offset_ = float(data["offset"])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n_cols, n_rows
    lp.a_matrix_.start_ = data["indptr"]
    lp.a_matrix_.index_ = data["indices"]
    lp.a_matrix_.value_ = data["values"]
    kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
    lp.integrality_ = [kinds[int(flag)] for flag in data["integer"]]
    h.passModel(lp)


def main(directory):
    with open(os.path.join(directory, "options.json")) as fh:
        options = json.load(fh)
    data = np.load(os.path.join(directory, "model.npz"))
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    _build(h, data)
    for key, value in options["highs"].items():
        h.setOptionValue(key, value)
    accepted = None
    if "start" in data.files:
        solution = highspy.HighsSolution()
        solution.col_value = data["start"]
        solution.value_valid = True
        accepted = h.setSolution(solution) == highspy.HighsStatus.kOk

    count = data["count"] if "count" in data.files else None
    trace = open(os.path.join(directory, "trace.txt"), "w", buffering=1)
    best_bound = [-math.inf]

    def record(out, errors):
        bound = float(out.mip_dual_bound)
        best_bound[0] = max(best_bound[0], bound)
        objective = float(out.objective_function_value)
        try:  # a trace that cannot be written is left short, the solve goes on
            trace.write(f"{now()!r} {objective!r} {bound!r} {errors!r}\n")
        except (OSError, ValueError):
            pass

    def on_improving(event):
        out = event.data_out
        x = np.asarray(out.mip_solution, dtype=float)
        _save(
            directory,
            "incumbent",
            x=x,
            objective=float(out.objective_function_value),
            bound=float(out.mip_dual_bound),
        )
        usable = count is not None and count.shape == x.shape
        record(out, float(count @ x) if usable else math.nan)

    def on_interrupt(event):
        bound = float(event.data_out.mip_dual_bound)
        if bound > best_bound[0] + 1e-9 * max(1.0, abs(bound)):
            record(event.data_out, math.nan)

    h.cbMipImprovingSolution.subscribe(on_improving)
    h.cbMipInterrupt.subscribe(on_interrupt)
    h.run()
    trace.close()
    info = h.getInfo()
    status = h.getModelStatus()
    feasible = info.primal_solution_status == 2  # kSolutionStatusFeasible
    x = np.asarray(h.getSolution().col_value, dtype=float) if feasible else None
    _save(
        directory,
        "result",
        x=np.empty(0) if x is None else x,
        feasible=feasible,
        optimal=status == highspy.HighsModelStatus.kOptimal,
        status=h.modelStatusToString(status),
        objective=float(info.objective_function_value),
        bound=float(info.mip_dual_bound),
        gap=float(info.mip_gap),
        accepted=-1 if accepted is None else int(accepted),
        run_time=float(h.getRunTime()),
    )


if __name__ == "__main__":
    main(sys.argv[1])
