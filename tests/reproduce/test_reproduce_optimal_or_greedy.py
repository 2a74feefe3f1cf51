"""The ``optimal-or-greedy`` reproduction (van der Linden et al., abstract
only): the folder loads, its smoke run through ``odtstudy reproduce``, and
each verdict branch of its claims module on synthetic records."""

import numpy as np
import pytest
import reproduce_records as shared

from odtstudy.reproduce import check_reproduction, claims_module, load_published
from odtstudy.study import load_config

NAME = "optimal-or-greedy"
claims = claims_module(NAME)

PUBLISHED = load_published(NAME)
FOLDS = 5
#: Per-fold offsets around a cell's mean (they sum to 0: the mean is exact).
NOISE = np.array([-0.02, -0.01, 0.0, 0.01, 0.02])
EIGHT = [f"set{i}" for i in range(8)]
METHODS = [
    "cart", "cart-tuned", "dl85", "dl85-tuned", "dl85-numeric",
    "dl85-numeric-tuned", "pystreed", "pystreed-tuned",
]  # fmt: skip
EXACT = {m for m in METHODS if not m.startswith("cart")}


def _records(means: dict, optimal: bool = True, status: str = "ok"):
    """Records with one run per fold; ``means[(dataset, depth, method)]`` is
    the cell's mean test accuracy."""
    rows = []
    for (dataset, depth, method), mean in means.items():
        for fold in range(FOLDS):
            rows.append(
                shared.run_row(
                    dataset, method, depth, fold, test_acc=mean + NOISE[fold],
                    optimal=optimal and method in EXACT,
                    status=status if method in EXACT else "ok",
                )
            )  # fmt: skip
    methods = sorted({m for _, _, m in means})
    specs = {
        m: {"method": m.removesuffix("-tuned"), "params": {}, "time_limit": 10}
        for m in methods
    }
    return shared.study_records(rows, FOLDS, specs)


def _verdicts(records) -> dict:
    return shared.checked_results(claims, records, PUBLISHED)


def _accuracies(optimal: float, greedy: float, tuned: float = 0.0) -> dict:
    """Every optimal learner at ``optimal``, CART at ``greedy``; each tuned
    variant ``tuned`` above its untuned self."""
    values = {}
    for method in ("dl85", "dl85-numeric", "pystreed"):
        values[method] = optimal
        values[f"{method}-tuned"] = optimal + tuned
    values["cart"] = greedy
    values["cart-tuned"] = greedy + tuned
    return values


def test_the_folder_loads_and_every_claim_is_from_the_abstract():
    check_reproduction(NAME)
    assert PUBLISHED.values.empty  # no number of the paper is transcribed
    assert [c["id"] for c in PUBLISHED.claims] == [
        "tuning-helps-odt", "optimal-vs-greedy-tuned", "optimal-vs-greedy-fixed-depth",
    ]  # fmt: skip
    for claim in PUBLISHED.claims:
        assert claim["figure_only"] is True
        assert claim["where"] == "Abstract (arXiv 2409.12788 v2)"
    assert "arxiv.org/abs/2409.12788v2" in PUBLISHED.paper["source"]
    assert "numbers are not transcribed" in PUBLISHED.rules_text()
    assert PUBLISHED.history["thresholds_set"]["commit"]


def test_study_scales():
    smoke = load_config(NAME, scale="smoke")
    assert len(smoke.datasets) <= 2 and smoke.depths == [2]
    default = load_config(NAME, scale="default")
    paper = load_config(NAME, scale="paper")
    assert set(default.datasets) < set(paper.datasets)
    specs = {m.label: m for m in paper.methods}
    assert specs["cart-tuned"].tune["ccp_alpha"] == [0.0, 1e-4, 1e-3, 1e-2, 1e-1]
    for label in ("cart-tuned", "dl85-tuned", "dl85-numeric-tuned"):
        assert specs[label].tune["max_depth"] == "up-to-depth"
        assert specs[label].tune["folds"] == 5


@pytest.mark.parametrize(
    "tuned, verdict",
    [(0.03, "reproduced"), (0.0, "inconclusive"), (-0.03, "not reproduced")],
)
def test_tuning_helps_on_eight_sets(tuned, verdict):
    records = _records(shared.grid(_accuracies(0.8, 0.8, tuned), EIGHT, (2, 3)))
    result = _verdicts(records)["tuning-helps-odt"]
    assert result.verdict == verdict, result
    assert result.published.startswith("figure only")
    if tuned:
        # 8/8 one way: sign test p = 0.5^8 = 0.0039
        shown = f"{100 * tuned:+.2f}"
        assert f"{shown} pts [{shown}, {shown}] over 8 data sets" in result.ours
    else:
        assert "tied on all 8 units" in result.reason


def test_mixed_directions_are_inconclusive():
    means = shared.grid(_accuracies(0.8, 0.8), EIGHT, (2, 3))
    for i, dataset in enumerate(EIGHT):
        for depth in (2, 3):
            means[(dataset, depth, "dl85-tuned")] = 0.8 + (0.02 if i % 2 else -0.02)
    result = _verdicts(_records(means))["tuning-helps-odt"]
    # dl85: 4/8 ahead; the other learners tie everywhere
    assert result.verdict == "inconclusive", result
    assert "dl85-tuned − dl85: ahead on 4, behind on 4" in result.reason


def test_fewer_than_six_sets_give_no_test():
    means = shared.grid(_accuracies(0.8, 0.7, 0.03), EIGHT[:5], (2, 3))
    verdicts = _verdicts(_records(means))
    for claim in verdicts.values():
        assert claim.verdict == "inconclusive", claim
        assert "n = 5: too few for a test" in claim.reason
        assert "n = 5: too few for an interval" in claim.ours


@pytest.mark.parametrize(
    "optimal, greedy, verdict",
    [(0.85, 0.8, "reproduced"), (0.8, 0.8, "inconclusive"),
     (0.75, 0.8, "not reproduced")],
)  # fmt: skip
def test_optimal_against_greedy(optimal, greedy, verdict):
    verdicts = _verdicts(
        _records(shared.grid(_accuracies(optimal, greedy), EIGHT, (2, 3)))
    )
    for claim in ("optimal-vs-greedy-tuned", "optimal-vs-greedy-fixed-depth"):
        assert verdicts[claim].verdict == verdict, verdicts[claim]
    fixed = verdicts["optimal-vs-greedy-fixed-depth"]
    assert "dl85 − cart at depth 2" in fixed.ours
    assert "pystreed − cart at depth 3" in fixed.ours
    assert "the 6 tests combined" in fixed.reason


def test_one_depth_each_way_is_not_a_reproduction():
    means = shared.grid(_accuracies(0.85, 0.8), EIGHT, (2, 3))
    for dataset in EIGHT:
        for method in ("dl85", "dl85-numeric", "pystreed"):
            means[(dataset, 3, method)] = 0.75
    result = _verdicts(_records(means))["optimal-vs-greedy-fixed-depth"]
    assert result.verdict == "partly", result  # reproduced at 2, reversed at 3


def test_a_learner_not_installed_is_left_out():
    values = _accuracies(0.85, 0.8, 0.03)
    values = {m: v for m, v in values.items() if not m.startswith("pystreed")}
    result = _verdicts(_records(shared.grid(values, EIGHT, (2, 3))))["tuning-helps-odt"]
    assert result.verdict == "reproduced", result
    assert "not run (not installed or not in the study): pystreed-tuned" in (
        result.reason
    )
    only_cart = shared.grid({"cart": 0.8, "cart-tuned": 0.8}, EIGHT, (2,))
    result = _verdicts(_records(only_cart))["optimal-vs-greedy-tuned"]
    assert result.verdict == "not comparable", result


def test_runs_stopped_by_their_limit():
    means = shared.grid(_accuracies(0.85, 0.8, 0.03), EIGHT, (2, 3))
    unproven = _verdicts(_records(means, optimal=False))["tuning-helps-odt"]
    assert unproven.verdict == "reproduced", unproven
    assert "dl85-tuned 80/80" in unproven.reason  # counted, still measured
    stopped = _verdicts(_records(means, optimal=False, status="timeout"))
    assert stopped["tuning-helps-odt"].verdict == "not comparable"
    assert "its trees measure the limit" in stopped["tuning-helps-odt"].reason


@pytest.mark.ci_slow
def test_smoke_reproduction_report(tmp_path):
    folder = shared.run_smoke(NAME, tmp_path)
    text = (folder / "report.md").read_text()
    rows = shared.verdict_rows(text, PUBLISHED)
    # two sets: every comparison is measured, none is tested
    for row in rows:
        assert "| inconclusive |" in row and "too few for a test" in row, row
    assert "numbers are not transcribed" in text
    assert (folder / "test_accuracy_over_datasets.png").stat().st_size > 5000


def test_the_readme_answer_follows_the_records():
    alpha = PUBLISHED.thresholds["alpha"].value
    min_sets = PUBLISHED.thresholds["min_sets"].value

    def answer(records):
        return claims.answer(records, alpha, min_sets)

    ahead = _records(shared.grid(_accuracies(0.85, 0.8, 0.01), EIGHT, (2, 3)))
    text = answer(ahead)
    assert text.startswith("Out of sample, on 8 data sets (depths 2 and 3, 5-fold")
    # tuned optimal 0.86 against tuned CART 0.81 on each of 8 sets: p = 0.0039
    assert "dl85-tuned ahead on 8 of 8 untied data sets, +5.00 pts" in text
    assert "significant: dl85-tuned better (p = 0.0039)" in text
    behind = _records(shared.grid(_accuracies(0.75, 0.8, 0.01), EIGHT, (2, 3)))
    assert "cart-tuned better than dl85-numeric-tuned (p = 0.0039)" in answer(behind)
    # some sets ahead, some behind: tested, nothing significant
    mixed = shared.grid(_accuracies(0.8, 0.8), EIGHT, (2, 3))
    for i, dataset in enumerate(EIGHT):
        for depth in (2, 3):
            for method in ("dl85-tuned", "dl85-numeric-tuned", "pystreed-tuned"):
                mixed[(dataset, depth, method)] = 0.8 + (0.02 if i % 2 else -0.02)
    text = answer(_records(mixed))
    assert "no sign test is significant" in text and "not better" in text
    assert "nan" not in text
    # every set tied, or five sets: no test and no p-value
    tied = answer(_records(shared.grid(_accuracies(0.8, 0.8), EIGHT, (2, 3))))
    assert "ahead on 0 of 0 untied data sets (too few for a test)" in tied
    five = answer(
        _records(shared.grid(_accuracies(0.85, 0.8, 0.01), EIGHT[:5], (2, 3)))
    )
    assert "no test: fewer than 6 untied data sets" in five
    assert "p =" not in five and "p >=" not in five and "nan" not in five
