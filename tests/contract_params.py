"""Small, fast parameters of every built-in learner, for the contract tests
(``tests/test_contract_*.py``)."""

#: Constructor parameters on top of the registry's, per method.
SMALL = {
    "dl8forest": {"n_estimators": 3},
    "optiboost-lp": {"max_iterations": 50},
    "optiboost-md": {"max_iterations": 5},
    "lpboost-cart": {"max_iterations": 50},
    "mdboost-cart": {"max_iterations": 5},
    "random-forest": {"n_estimators": 5},
    "gradient-boosting": {"n_estimators": 5},
    "adaboost": {"n_estimators": 5},
    "tmo": {"population_size": 4, "n_generations": 1},
}

#: Methods whose fits take seconds each (a solver process per fit, or a
#: published solver's start-up): their contract tests are marked slow.
SLOW = {
    "binoct",
    "oct",
    "flowoct",
    "bendersoct",
    "pystreed",
    "pydl85",
    "gosdt",
    "pycontree",
    "licketysplit",
    "pystreed-reg",
    "osrt",
}


def package_methods() -> list:
    """The registered methods whose learner is odtstudy's own (not one a
    study file or another test module registered)."""
    from odtstudy.study.registry import get_method, list_methods

    return [
        name
        for name in list_methods(available_only=True)
        if not get_method(name).user
        and get_method(name).estimator_class().__module__.startswith("odtstudy.")
    ]
