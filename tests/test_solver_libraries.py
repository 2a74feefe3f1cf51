"""OR-Tools and highspy share the soname libhighs.so.1: both must work in one
process, in either import order (they did not with mismatched versions)."""

import subprocess
import sys

import pytest

SOLVE_BOTH = """
import {first}, {second}
import highspy, pulp
from ortools.sat.python import cp_model
h = highspy.Highs()
assert pulp.HiGHS(msg=False).available()
p = pulp.LpProblem("t", pulp.LpMinimize)
x = p.add_variable("x", 0, 1, cat="Integer")
p += -x
p.solve(pulp.HiGHS(msg=False))
assert x.value() == 1
m = cp_model.CpModel()
v = m.new_bool_var("v")
m.maximize(v)
s = cp_model.CpSolver()
assert s.solve(m) == cp_model.OPTIMAL
print("ok")
"""


@pytest.mark.parametrize(
    "first, second",
    [
        ("highspy", "ortools.sat.python.cp_model"),
        ("ortools.sat.python.cp_model", "highspy"),
    ],
)
def test_ortools_and_highspy_coexist(first, second):
    code = SOLVE_BOTH.format(first=first, second=second)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
