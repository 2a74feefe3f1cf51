"""A frozen copy of an older odtstudy, importable beside the current one.

The engine benchmarks compare the DL8.5 engine of this tree with the one
before it *in one run*. This module extracts ``odtstudy/`` at a git revision
(default: the merge base of ``HEAD`` and ``main``, i.e. what this branch
started from) into ``benchmarks/.old_engine/<sha>/``, renames the package
to ``odtstudy_old`` (every ``odtstudy.`` import inside it) and compiles its
Cython extensions in place. Then::

    from benchmarks._old_engine import old_engine_path
    sys.path.insert(0, old_engine_path())
    from odtstudy_old.dl85 import DL85Classifier

One command builds it ahead of time (the benchmarks also build it on first
use)::

    python benchmarks/_old_engine.py [--rev main]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(__file__).resolve().parent / ".old_engine"

_SETUP = """
import numpy as np
from pathlib import Path
from Cython.Build import cythonize
from setuptools import Extension, setup

exts = []
for pyx in sorted(Path("odtstudy_old").rglob("*.pyx")):
    exts.append(Extension(
        ".".join(pyx.with_suffix("").parts), [str(pyx)],
        include_dirs=[np.get_include()],
        extra_compile_args=["-O3", "-Wno-unused-function"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    ))
setup(name="odtstudy_old", ext_modules=cythonize(exts, language_level=3,
      compiler_directives={"boundscheck": False, "wraparound": False,
                           "cdivision": True, "initializedcheck": False}))
"""


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


def default_rev() -> str:
    """``$ODTSTUDY_OLD_REV`` if set, else the commit this branch started
    from (merge base with ``main``)."""
    if os.environ.get("ODTSTUDY_OLD_REV"):
        return os.environ["ODTSTUDY_OLD_REV"]
    try:
        return _git("merge-base", "HEAD", "main")
    except subprocess.CalledProcessError:  # pragma: no cover - no main branch
        return _git("rev-parse", "HEAD")


def old_engine_path(rev: str | None = None) -> str:
    """Directory to put on ``sys.path`` to import ``odtstudy_old`` (built once)."""
    sha = _git("rev-parse", rev or default_rev())
    dest = CACHE / sha[:12]
    stamp = dest / ".built"
    if stamp.exists():
        return str(dest)
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", sha, "odtstudy"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    pattern = re.compile(r"\bodtstudy(?=[.\s\"'])")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            rel = Path(member.name).relative_to("odtstudy")
            out = dest / "odtstudy_old" / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            data = tar.extractfile(member).read()
            if out.suffix in {".py", ".pyx", ".pxd"}:
                data = pattern.sub("odtstudy_old", data.decode()).encode()
            out.write_bytes(data)
    (dest / "setup.py").write_text(_SETUP)
    subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
        cwd=dest,
        check=True,
        capture_output=True,
    )
    stamp.write_text(sha + "\n")
    return str(dest)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default=None)
    args = parser.parse_args(argv)
    print(old_engine_path(args.rev))


if __name__ == "__main__":
    main()
