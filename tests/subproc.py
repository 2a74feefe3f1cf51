"""Run a Python snippet in a child process, so a crash or a hang fails a test
instead of killing (or stalling) the test run.

Each snippet runs in its own process, forked from a helper interpreter that
has already imported what every snippet imports first (numpy, pandas,
scikit-learn through ``odtstudy.datasets``): a fresh ``python -c`` would spend
~2.5 s of each test importing them again. The helper starts on first use and
ends with the test run.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

__all__ = ["run_snippet"]

#: The helper: imports the common modules, then for each request (one JSON
#: line on stdin) forks a child that runs the code as ``python -c`` would (in
#: ``__main__``, stdin from /dev/null, stdout and stderr to the request's
#: files, ending like an interpreter); it writes the child's pid, then its
#: return code (negative: killed by that signal), one per line.
_HELPER = """
import json, os, sys, warnings
import numpy, pandas, odtstudy.datasets
replies = os.fdopen(os.dup(1), "w", buffering=1)
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    with warnings.catch_warnings():  # numpy's BLAS threads: fork is fine here
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        replies.close()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, request["stdout"], os.O_WRONLY),
            (2, request["stderr"], os.O_WRONLY),
        ):
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        _snippet = compile(request["code"], "<string>", "exec")
        del json, os, sys, warnings, numpy, pandas, odtstudy
        del replies, line, request, pid
        del fd, path, flags, opened
        exec(_snippet)
        raise SystemExit
    replies.write(f"{pid}\\n")
    replies.write(f"{os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}\\n")
"""


class _Helper:
    """The helper interpreter and the unread part of its replies."""

    def __init__(self):
        # not from the clone root, whose source tree would shadow the package
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HELPER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=tempfile.gettempdir(),
        )
        self.pending = b""

    def alive(self) -> bool:
        return self.process.poll() is None

    def reply(self, timeout: float | None) -> int | None:
        """The next line of the helper as an int; None after ``timeout`` s."""
        end = None if timeout is None else time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            left = None if end is None else max(0.0, end - time.monotonic())
            if not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("the snippet helper interpreter ended")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return int(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


_helper: _Helper | None = None


def _the_helper() -> _Helper:
    global _helper
    if _helper is None or not _helper.alive():
        _helper = _Helper()
        atexit.register(_helper.close)
    return _helper


def run_snippet(code: str, timeout: float = 60) -> tuple[int, str, str]:
    """Run ``code`` in a child process and return
    ``(returncode, stdout, stderr)``.

    A child killed by a signal has a negative return code (e.g. -6 for
    SIGABRT); one still running after ``timeout`` seconds is killed and
    reported with return code ``None`` and ``"TIMEOUT"`` in ``stderr``.
    """
    helper = _the_helper()
    with tempfile.TemporaryDirectory() as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        out.touch()
        err.touch()
        request = {
            "cwd": tempfile.gettempdir(),
            "env": dict(os.environ),
            "stdout": str(out),
            "stderr": str(err),
            "code": textwrap.dedent(code),
        }
        helper.process.stdin.write((json.dumps(request) + "\n").encode())
        helper.process.stdin.flush()
        pid = helper.reply(None)
        returncode = helper.reply(timeout)
        if returncode is None:
            os.kill(pid, signal.SIGKILL)
            helper.reply(None)
            return None, out.read_text(), f"TIMEOUT after {timeout} s"
        return returncode, out.read_text(), err.read_text()


#: Defines ``attempt(fit, exc=ValueError)`` in a snippet: it calls ``fit()``
#: and prints ``RAISED <message>`` when ``exc`` is raised, else ``NO ERROR``.
ATTEMPT = """
def attempt(fit, exc=ValueError):
    try:
        fit()
    except exc as e:
        print("RAISED", e)
    else:
        print("NO ERROR")
"""


def run_ok(code: str, timeout: float = 60) -> list[str]:
    """:func:`run_snippet` that must exit cleanly; the lines it printed."""
    returncode, out, err = run_snippet(ATTEMPT + textwrap.dedent(code), timeout)
    assert returncode == 0, f"exit {returncode}\nstdout:\n{out}\nstderr:\n{err[-2000:]}"
    return out.splitlines()
