"""The one child-with-deadline primitive: :class:`odtstudy._isolation.GroupChild`."""

import os
import signal
import sys
import time

import pytest

from odtstudy._deadline import now
from odtstudy._isolation import GroupChild, GroupGuard

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process groups, Linux"
)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _gone_within(pid: int, seconds: float) -> bool:
    """True once ``pid`` is gone, waiting at most ``seconds``."""
    end = now() + seconds
    while _alive(pid) and now() < end:
        time.sleep(0.01)
    return not _alive(pid)


def _read_all(child: GroupChild) -> bytes:
    data = b""
    while chunk := child.read(5.0):
        data += chunk
    return data


def _write(fd: int, text: str) -> None:
    os.write(fd, text.encode())


def test_a_forked_child_that_finishes_hands_back_what_it_wrote():
    child = GroupChild.fork(lambda fd: _write(fd, "answer"), deadline_at=now() + 5)
    assert _read_all(child) == b"answer"
    assert child.close() == 0
    assert not child.expired()


def _sleep_with_grandchild(fd: int) -> None:
    grandchild = os.fork()
    if grandchild == 0:
        time.sleep(30)
        os._exit(0)
    _write(fd, f"{grandchild}\n")
    time.sleep(30)


def test_a_child_past_its_deadline_is_killed_with_its_grandchild():
    child = GroupChild.fork(_sleep_with_grandchild, deadline_at=now() + 0.3)
    grandchild = int(child.read(5.0))
    assert _alive(grandchild)
    assert not child.wait(until=child.deadline_at)
    assert child.expired()
    child.kill()
    assert child.close() == -signal.SIGKILL
    assert _gone_within(grandchild, 2.0)
    assert not _alive(child.pid)


def test_a_child_that_dies_is_reported_with_its_exit():
    child = GroupChild.fork(lambda fd: os.kill(os.getpid(), signal.SIGTERM))
    assert child.read(5.0) == b""
    assert child.wait(until=now() + 5.0)
    assert os.WIFSIGNALED(child.exit_status)
    assert child.close() == -signal.SIGTERM


def test_a_child_whose_target_raises_exits_1():
    def fail(fd):
        raise ValueError("no")

    child = GroupChild.fork(fail)
    assert child.close() == 1


def test_a_forked_child_leads_its_own_group_unless_told_not_to():
    def report_group(fd):
        _write(fd, f"{os.getpgrp()} {os.getsid(0)}")

    child = GroupChild.fork(report_group)
    assert _read_all(child).split() == [b"%d" % child.pid, b"%d" % os.getsid(0)]
    child.close()
    child = GroupChild.fork(report_group, lead_group=False)
    assert _read_all(child).split() == [b"%d" % os.getpgrp(), b"%d" % os.getsid(0)]
    child.close()


def test_an_external_command_past_its_deadline_is_killed_with_its_group():
    script = "sleep 30 & echo $!; wait"
    child = GroupChild.spawn(["/bin/sh", "-c", script], deadline_at=now() + 0.3)
    grandchild = int(child.read(5.0))
    assert os.getpgid(grandchild) == child.pid
    assert child.read(child.remaining()) is None  # nothing more before the deadline
    assert child.expired()
    child.kill()
    assert child.close() == -signal.SIGKILL
    assert _gone_within(grandchild, 2.0)


def test_an_external_command_that_finishes_gives_its_output_and_exit_code():
    child = GroupChild.spawn(["/bin/sh", "-c", "echo done; exit 3"])
    assert _read_all(child) == b"done\n"
    assert child.wait(until=now() + 5.0)
    assert child.close() == 3


def test_the_guard_kills_the_group_of_a_child_still_running_when_it_closes():
    with GroupGuard() as guard:
        child = GroupChild.fork(_sleep_with_grandchild, guard=guard)
        grandchild = int(child.read(5.0))
    assert _gone_within(grandchild, 2.0)
    assert child.wait(until=now() + 2.0)
    assert child.close() == -signal.SIGKILL
