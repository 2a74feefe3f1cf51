"""One clock for every learner's time limit: ``odtstudy._deadline``."""

import re
import time
from pathlib import Path

import pytest

import odtstudy
from odtstudy._deadline import Deadline, now

PACKAGE = Path(odtstudy.__file__).parent
#: The learners' code: a time limit is read from a ``Deadline`` there.
LEARNERS = [
    "base.py", "cart.py", "dl85", "milp", "cp", "memetic", "naiveforest", "external",
]  # fmt: skip
_RAW_CLOCK = re.compile(r"\btime\.(perf_counter|monotonic|time)\(|from time import")


def _sources():
    for entry in LEARNERS:
        path = PACKAGE / entry
        yield from sorted(path.glob("*.py")) if path.is_dir() else [path]


@pytest.mark.parametrize(
    "path", list(_sources()), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_learners_read_no_clock_but_the_deadline(path):
    raw = [
        f"{n}: {line.strip()}"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _RAW_CLOCK.search(line)
    ]
    assert not raw, "use odtstudy._deadline (Deadline, now) instead:\n" + "\n".join(raw)


def test_one_clock():
    before = time.perf_counter()
    deadline = Deadline(None)
    assert before <= deadline.start <= now() <= time.perf_counter()
    assert not deadline.limited and not deadline.expired()
    assert deadline.remaining() is None and deadline.elapsed() >= 0
    limited = Deadline(5)
    assert limited.at == pytest.approx(limited.start + 5)
