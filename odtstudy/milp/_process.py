"""Solver child processes that cannot outlive their deadline or their parent.

A :class:`SolverProcess` owns a private temporary directory and a small
``/bin/sh`` supervisor, started with the directory and before any file is
written. The supervisor runs the solver command when told to, forwards the
signals the learner asks for, and reads a "lifeline" pipe from the learner:
when that pipe closes (the learner is done, raised, or was killed, even by
SIGKILL) it kills the solver if still running and removes the directory.
So no solver process and no model file survives the fit, whatever happens
to the process that runs it.

The supervisor is a :class:`odtstudy._isolation.GroupChild` (spawned in its
own session: a kill of the learner's process group leaves it alive long
enough to clean up); should it not answer 5 s after the solver's SIGKILL,
its whole session is killed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from odtstudy._deadline import now as _clock
from odtstudy._isolation import GroupChild

__all__ = ["ProcessOutcome", "SolverProcess"]

# $1: the private directory. Lifeline (stdin, moved to fd 3): "run" starts
# $1/run.sh; then each line is a signal name for the solver; end of file
# kills it. The exit code goes to stdout; the directory is removed once the
# lifeline closes.
_SUPERVISOR = r"""
trap '' PIPE
dir=$1
exec 3<&0 </dev/null
if read -r line <&3 && [ "$line" = run ]; then
    sh "$dir/run.sh" &
    pid=$!
    {
        while read -r sig <&3; do
            kill -s "$sig" "$pid" 2>/dev/null
        done
        kill -s KILL "$pid" 2>/dev/null
    } &
    reader=$!
    wait "$pid"
    rc=$?
    kill "$reader" 2>/dev/null
    echo "$rc"
    while read -r line <&3; do :; done
fi
rm -rf "$dir"
"""

_SH = "/bin/sh"


@dataclass
class ProcessOutcome:
    """How a solver process ended.

    Attributes
    ----------
    returncode : int or None
        Exit code (128 + signal number when a signal ended it, as ``sh``
        reports it), ``None`` when it could not be learned.
    interrupted : bool
        The graceful stop signal was sent (the solver overran its own limit).
    killed : bool
        SIGKILL was sent at the hard deadline.
    elapsed : float
        Seconds from start to exit.
    """

    returncode: int | None
    interrupted: bool
    killed: bool
    elapsed: float


class SolverProcess:
    """A solver command run in a private directory under a hard deadline.

    Use as a context manager: inputs are written into :attr:`path`, then
    :meth:`run` starts the command and waits, and the outputs are read from
    :attr:`path` before the ``with`` block ends (the directory is removed on
    exit, and by the supervisor if this process dies first).

    Parameters
    ----------
    prefix : str
        Prefix of the temporary directory's name.

    Attributes
    ----------
    path : str
        The private directory.
    """

    def __init__(self, prefix: str = "odtstudy_solver_"):
        self.path = tempfile.mkdtemp(prefix=prefix)
        self._child = None  # the supervisor, a GroupChild
        self._direct = None  # no /bin/sh: the solver itself, no supervisor
        if os.name == "posix" and os.path.exists(_SH):
            try:
                self._child = GroupChild.spawn(
                    [_SH, "-c", _SUPERVISOR, "odtstudy-solver", self.path],
                    stdin=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    close_fds=True,
                )
            except BaseException:
                shutil.rmtree(self.path, ignore_errors=True)
                raise

    def __enter__(self) -> SolverProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def file(self, name: str) -> str:
        """Path of ``name`` inside the private directory."""
        return os.path.join(self.path, name)

    # ------------------------------------------------------------------ run
    def run(
        self,
        argv,
        *,
        log: str,
        stop_at: float | None,
        kill_at: float | None,
        stop_signal: str = "INT",
    ) -> ProcessOutcome:
        """Run ``argv`` (stdout and stderr to ``log``) until it exits.

        Parameters
        ----------
        argv : list of str
        log : str
            File receiving the solver's output.
        stop_at, kill_at : float or None
            :func:`odtstudy._deadline.now` values: ``stop_signal`` is sent at
            ``stop_at`` (a solver that overran its own limit gets the chance
            to write its incumbent) and SIGKILL at ``kill_at``.
        stop_signal : str
            Name of the graceful stop signal.
        """
        start = _clock()
        if self._child is None:
            return self._run_direct(argv, log, stop_at, kill_at, stop_signal, start)
        command = " ".join(shlex.quote(str(a)) for a in argv)
        with open(self.file("run.sh"), "w") as fh:
            fh.write(f"exec {command} >{shlex.quote(log)} 2>&1\n")
        self._send("run")
        interrupted = killed = False
        while True:
            now = _clock()
            if stop_at is not None and not interrupted and now >= stop_at:
                self._send(stop_signal)
                interrupted = True
            if kill_at is not None and not killed and now >= kill_at:
                self._send("KILL")
                killed = True
                # the supervisor itself has 5 s to answer
                self._child.deadline_at = kill_at + 5.0
            chunk = self._child.read(self._wait_for(now, stop_at, kill_at, killed))
            if chunk is not None:
                line = self._read_line(chunk)
                break
            if self._child.expired():
                self._child.kill()
                line = b""
                break
        try:
            returncode = int(line.strip())
        except ValueError:
            returncode = None
        return ProcessOutcome(returncode, interrupted, killed, _clock() - start)

    def _wait_for(self, now, stop_at, kill_at, killed) -> float | None:
        """Seconds until the next thing to do: a signal, or giving up on
        the supervisor once SIGKILL was sent."""
        if killed:
            return self._child.remaining()
        pending = [t for t in (stop_at, kill_at) if t is not None and t > now]
        return min(pending) - now if pending else None

    def _read_line(self, chunk: bytes) -> bytes:
        """``chunk`` and what follows it up to its end of line (or of file)."""
        line = chunk
        while chunk and not line.endswith(b"\n"):
            chunk = self._child.read(None)
            line += chunk
        return line

    def _run_direct(self, argv, log, stop_at, kill_at, stop_signal, start):
        with open(log, "w") as out:
            self._direct = subprocess.Popen(
                [str(a) for a in argv],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        interrupted = killed = False
        while self._direct.poll() is None:
            now = _clock()
            if stop_at is not None and not interrupted and now >= stop_at:
                self._direct.send_signal(getattr(signal, f"SIG{stop_signal}"))
                interrupted = True
            if kill_at is not None and now >= kill_at:
                self._direct.kill()
                killed = True
                self._direct.wait()
                break
            time.sleep(0.01)
        return ProcessOutcome(
            self._direct.returncode, interrupted, killed, _clock() - start
        )

    # -------------------------------------------------------------- cleanup
    def _send(self, line: str) -> None:
        try:
            self._child.stdin.write(line.encode() + b"\n")
            self._child.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def close(self) -> None:
        """Stop the solver if it still runs and remove the directory."""
        if self._child is not None:
            try:
                self._child.stdin.close()  # the lifeline: the supervisor cleans up
            except OSError:
                pass
            if not self._child.wait(until=_clock() + 5.0):
                self._child.kill()  # the supervisor does not answer
            self._child.close()
        if self._direct is not None and self._direct.poll() is None:
            self._direct.kill()
            self._direct.wait()
        shutil.rmtree(self.path, ignore_errors=True)
