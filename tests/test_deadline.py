"""The shared deadline helper."""

import pytest

from odtstudy._deadline import Deadline, DeadlineReached


def test_unlimited_deadline_never_expires():
    deadline = Deadline(None)
    assert not deadline.limited and not deadline.expired()
    assert deadline.remaining() is None and deadline.at is None
    deadline.check()
    assert deadline.fraction(0.5).remaining() is None
    assert deadline.elapsed() >= 0


def test_limited_deadline():
    deadline = Deadline(3600)
    assert deadline.limited and not deadline.expired()
    assert 3599 < deadline.remaining() <= 3600
    assert deadline.remaining(reserve=600) <= 3000
    assert deadline.expired(reserve=3601)
    assert Deadline.of(deadline) is deadline
    assert Deadline.of(10.0).time_limit == 10.0
    assert deadline.fraction(0.5).remaining() <= 1800


def test_passed_deadline():
    deadline = Deadline(0.0)
    assert deadline.expired() and deadline.remaining() == 0.0
    with pytest.raises(DeadlineReached, match="while testing"):
        deadline.check("while testing")
