"""What a reproduction reports per claim of its paper: the published evidence,
ours, and a verdict decided by a stated rule."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["VERDICTS", "ClaimResult"]

#: The verdicts, strongest first.
VERDICTS = ("reproduced", "partly", "not reproduced", "not comparable")


@dataclass(frozen=True)
class ClaimResult:
    """One row of a report's "Paper vs odtstudy" table.

    Parameters
    ----------
    claim : str
        The claim's ``id`` in the paper's data file.
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
        One of :data:`VERDICTS`.
    reason : str
        Which rule decided the verdict, with the numbers it compared.
    """

    claim: str
    statement: str
    where: str
    published: str
    ours: str
    verdict: str
    reason: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(
                f"claim {self.claim!r}: verdict {self.verdict!r} is not one of "
                f"{', '.join(VERDICTS)}"
            )
