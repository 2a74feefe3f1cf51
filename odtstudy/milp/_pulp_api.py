"""The PuLP calls whose spelling differs between PuLP 3.3 and PuLP 4.

PuLP 4 (Python >= 3.12, a Rust core) keeps the problem-level API that
odtstudy uses to create variables (``prob.add_variable``,
``prob.add_variable_dicts``) but changed three things that odtstudy relies on:

- an expression is no longer built by ``LpAffineExpression(terms)`` but by
  ``LpAffineExpression.from_dict`` / ``from_list``;
- a constraint is no longer an ``LpConstraint(expr, sense, name, rhs)`` with
  an ``.expr``: it is an expression with a sense, added with
  ``prob.addConstraint``, whose terms are read and edited on the stored
  constraint itself;
- CBC is no longer bundled (``PULP_CBC_CMD`` is gone): the ``pulp[cbc]``
  extra installs the ``cbcbox`` wheel, which ``COIN_CMD`` finds.

Every module that builds or reads a PuLP model goes through these helpers, so
both releases work (the oldest and the newest Python odtstudy supports get
different ones).
"""

from __future__ import annotations

import warnings

import pulp

__all__ = [
    "add_constraint",
    "affine",
    "cbc_command",
    "constraint_list",
    "constraint_terms",
    "set_coefficient",
    "solve_status",
    "variable_key",
]

_FROM_DICT = getattr(pulp.LpAffineExpression, "from_dict", None)
_FROM_LIST = getattr(pulp.LpAffineExpression, "from_list", None)
_OPTIMAL = 1  # LpStatusOptimal in PuLP 3, LpSolveStatus.Optimal in PuLP 4
_SENSES = {
    "<=": pulp.LpConstraintLE,
    ">=": pulp.LpConstraintGE,
    "==": pulp.LpConstraintEQ,
}


def affine(terms) -> pulp.LpAffineExpression:
    """The expression ``sum(coef * var)`` of a ``{var: coef}`` dict or a list
    of ``(var, coef)`` pairs (distinct variables: a list is not merged).

    Building it from terms avoids PuLP's operator overloading, which is slow
    on large sums; a list also avoids hashing the variables (a Python call
    per variable in PuLP 4).
    """
    if _FROM_DICT is None:  # PuLP 3 takes either
        return pulp.LpAffineExpression(terms)
    if isinstance(terms, dict):
        return _FROM_DICT(terms)
    return _FROM_LIST(terms)


def add_constraint(prob: pulp.LpProblem, terms, sense: str, rhs: float, name=None):
    """Add ``sum(coef * var) <sense> rhs`` to ``prob`` and return it as stored.

    ``terms`` is as for :func:`affine`; ``sense`` is ``"<="``,
    ``">="`` or ``"=="``.
    """
    if sense not in _SENSES:
        raise ValueError(f"sense must be one of {sorted(_SENSES)}, got {sense!r}")
    expr = affine(terms)
    rhs = float(rhs)
    if _FROM_DICT is None:  # PuLP 3
        con = pulp.LpConstraint(expr, _SENSES[sense], name, rhs)
        prob.addConstraint(con)
        return con
    if sense == "<=":
        pending = expr <= rhs
    elif sense == ">=":
        pending = expr >= rhs
    else:
        pending = expr == rhs
    return prob.addConstraint(pending, name)


def variable_key(var):
    """A key that identifies ``var`` in its problem and hashes fast: PuLP 4
    hands out a new wrapper object per read (hashed and compared in Python),
    so its key is the variable's index; PuLP 3 keeps one object."""
    return var if _FROM_DICT is None else var.id


def constraint_list(prob: pulp.LpProblem) -> list:
    """The constraints of ``prob``, in the order they were added."""
    constraints = prob.constraints
    if callable(constraints):
        return list(constraints())
    return list(constraints.values())


def constraint_terms(con) -> list:
    """``(variable, coefficient)`` pairs of a stored constraint's left-hand side
    (``len(con)`` is their number, in both releases)."""
    return list(con.items())


def set_coefficient(con, var, coef: float) -> None:
    """Give ``var`` the coefficient ``coef`` in a constraint stored in a problem."""
    if hasattr(con, "expr"):  # PuLP 3: the stored constraint wraps an expression
        con.expr[var] = float(coef)
    else:
        con.set_coefficient(var, float(coef))


def solve_status(prob: pulp.LpProblem, solver) -> tuple[bool, str]:
    """Solve ``prob`` with a PuLP ``solver``: ``(optimal, status name)``.

    PuLP 3 returns the status code, PuLP 4 an ``LpSolveStats`` holding it.
    """
    result = prob.solve(solver)
    status = getattr(result, "status", result)
    name = getattr(status, "name", None)  # an LpSolveStatus member in PuLP 4
    if name is None:
        name = pulp.LpStatus.get(status, str(status))
    return int(status) == _OPTIMAL, name


def cbc_command(**options):
    """A PuLP CBC solver: the binary bundled with PuLP 3, else a CBC that
    ``COIN_CMD`` finds (the ``cbcbox`` wheel of ``pulp[cbc]``, or the PATH);
    ``None`` when there is none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("PULP_CBC_CMD", "COIN_CMD"):
            solver_class = getattr(pulp, name, None)
            if solver_class is None:
                continue
            solver = solver_class(**options)
            if solver.available():
                return solver
    return None
