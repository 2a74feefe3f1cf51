"""CBC's bound is read from its log only where the log's figures agree."""

from odtstudy.milp._cbc import _bound_passes_incumbent

# the end of a real BendersOCT master log (CP4IM anneal, depth 3, CBC from
# PuLP 4): root cuts moved the LP past the incumbent, CBC stopped on time
# and printed its incumbent as the lower bound, with a gap of 0; the
# optimum has 37 fewer errors than this incumbent
_VOID = """\
Cbc0013I At root node, 26 cuts changed objective from -812 to 6.139054e+09 in 4 passes
Cbc0020I Exiting on maximum time
Cbc0005I Partial search - best objective -663 (best possible 6.139054e+09), took 1541 iterations and 0 nodes (1.65 seconds)
Cuts at root node changed objective from -812 to 6.13905e+09

Result - Stopped on time limit
Objective value:                -663
Lower bound:                    -663
Gap:                            0
"""  # noqa: E501

_STOPPED = """\
Cbc0010I After 251 nodes, 1 on tree, -700 best solution, best possible -712 (2.84 seconds)
Cbc0005I Partial search - best objective -700 (best possible -710), took 84504 iterations and 3805 nodes (3.42 seconds)

Result - Stopped on time limit
Objective value:                -700
Lower bound:                    -710
Gap:                            0.01
"""  # noqa: E501

_OPTIMAL = """\
Cbc0001I Search completed - best objective -812, took 72 iterations and 0 nodes (0.63 seconds)

Result - Optimal solution found
Objective value:                -812
"""  # noqa: E501


def test_a_bound_above_the_incumbent_voids_the_solve_bound():
    assert _bound_passes_incumbent(_VOID)


def test_bounds_below_the_incumbent_and_proofs_are_kept():
    assert not _bound_passes_incumbent(_STOPPED)
    assert not _bound_passes_incumbent(_OPTIMAL)
    assert not _bound_passes_incumbent("")
