"""What a reproduction reports per claim of its paper: the published evidence,
ours, and a verdict decided by a stated rule; and per check of the
implementation (an invariant that holds by construction), pass or fail."""

from __future__ import annotations

from dataclasses import dataclass

from odtstudy.study.report._speed import MIN_UNITS

__all__ = ["CHECK_VERDICTS", "VERDICTS", "VERDICT_LEGEND", "ClaimResult", "legend_text"]

#: The verdicts of a claim, strongest first.
VERDICTS = ("reproduced", "partly", "inconclusive", "not reproduced", "not comparable")
#: What each verdict means: printed under every verdict table (and in the docs).
VERDICT_LEGEND = {
    "reproduced": (
        "the paper's direction, significant at the data file's alpha where the "
        "claim is a comparison (a measured quantity without sampling noise: "
        "within the claim's thresholds)"
    ),
    "partly": (
        "the paper's direction in a majority of the independent units, not "
        "significant or short of the claim's share (a quantity: within the "
        "looser threshold only; a claim of several parts: some of them)"
    ),
    "inconclusive": (
        "no significant difference either way, or too few independent units "
        f"for a test (fewer than {MIN_UNITS}: 'n = 3: too few for a test'); two "
        "non-significant results that agree are not a reproduction"
    ),
    "not reproduced": (
        "significant the other way (a quantity: outside the claim's thresholds)"
    ),
    "not comparable": (
        "what the claim needs was not measured: a comparator that returned its "
        "warm start, a time limit that decides the outcome, a tool not run"
    ),
}
#: The outcomes of a check (``[[checks]]`` of the data file).
CHECK_VERDICTS = ("pass", "fail", "not comparable")


@dataclass(frozen=True)
class ClaimResult:
    """One row of a report's "Paper vs odtstudy" table (claims or checks).

    Parameters
    ----------
    claim : str
        The claim's (or check's) ``id`` in the paper's data file.
    statement : str
        The claim in one sentence, as the paper makes it.
    where : str
        The table or figure of the paper that supports it ("Table 2").
    published : str
        The published evidence, short ("DL8.5 fastest on 22/23 sets"); for a
        figure without numbers, say so ("figure only: ...").
    ours : str
        The same quantity measured by odtstudy on this run of the study.
    verdict : str
        One of :data:`VERDICTS` (a check: one of :data:`CHECK_VERDICTS`).
    reason : str
        Which rule decided the verdict, with the numbers it compared.
    sensitivity : str, default=""
        The verdict with each threshold the rule read moved by the data
        file's margin (empty: not computed).
    check : bool, default=False
        True for an implementation check, which is never counted as a
        reproduced claim.
    """

    claim: str
    statement: str
    where: str
    published: str
    ours: str
    verdict: str
    reason: str
    sensitivity: str = ""
    check: bool = False

    def __post_init__(self):
        allowed = CHECK_VERDICTS if self.check else VERDICTS
        if self.verdict not in allowed:
            kind = "check" if self.check else "claim"
            raise ValueError(
                f"{kind} {self.claim!r}: verdict {self.verdict!r} is not one of "
                f"{', '.join(allowed)}"
            )


def legend_text() -> str:
    """The verdicts and their definitions, one Markdown sentence each."""
    return (
        "Verdicts: "
        + "; ".join(f"*{verdict}*: {VERDICT_LEGEND[verdict]}" for verdict in VERDICTS)
        + "."
    )
