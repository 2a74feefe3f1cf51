"""Build the Cython extensions of odtstudy (every ``.pyx`` under ``odtstudy/``)."""

import os
from pathlib import Path

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).parent


def _extensions():
    exts = []
    for pyx in sorted((ROOT / "odtstudy").rglob("*.pyx")):
        rel = pyx.relative_to(ROOT)
        module = ".".join(rel.with_suffix("").parts)
        exts.append(
            Extension(
                module,
                [str(rel)],
                include_dirs=[np.get_include()],
                extra_compile_args=["-O3", "-Wno-unused-function"],
                define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
            )
        )
    return cythonize(
        exts,
        nthreads=os.cpu_count() or 1,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )


# the C compiles run one per core too (pip install . passes no -j)
setup(
    ext_modules=_extensions(), options={"build_ext": {"parallel": os.cpu_count() or 1}}
)
