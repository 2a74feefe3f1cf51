"""Run a Python snippet in a child interpreter, so a crash or a hang fails a
test instead of killing (or stalling) the test run."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap

__all__ = ["run_snippet"]


def run_snippet(code: str, timeout: float = 60) -> tuple[int, str, str]:
    """Run ``code`` with ``sys.executable -c`` and return
    ``(returncode, stdout, stderr)``.

    A child killed by a signal has a negative return code (e.g. -6 for
    SIGABRT); one still running after ``timeout`` seconds is killed and
    reported with return code ``None`` and ``"TIMEOUT"`` in ``stderr``.
    """
    try:
        # not from the clone root, whose source tree would shadow the package
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tempfile.gettempdir(),
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout
        return None, out or "", f"TIMEOUT after {timeout} s"
    return done.returncode, done.stdout, done.stderr


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
