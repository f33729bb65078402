"""Build the compiled core.  Metadata lives in pyproject.toml."""

import os
import shutil

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))

# Set BABYTRIS_DEBUG=1 to build with bounds checks and assertions on.
DEBUG = os.environ.get("BABYTRIS_DEBUG", "") not in ("", "0")

# OpenMP lets the enumeration and the sweeps use every core; BABYTRIS_OPENMP=0
# builds without it (the code then runs on one thread).
OPENMP = [] if os.environ.get("BABYTRIS_OPENMP", "1") == "0" else ["-fopenmp"]

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": False,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "embedsignature": True,
}


def extension(module: str) -> Extension:
    """The compiled module ``module`` (dotted, e.g. ``babytris.big._engine``) from its .pyx."""
    return Extension(
        module,
        [module.replace(".", "/") + ".pyx"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=(["-O0", "-g"] if DEBUG else ["-O3"]) + OPENMP,
        extra_link_args=OPENMP,
    )


extensions = [
    # the engine (placement, drop, clear, enumeration); the Bellman sweeps, the greedy backups
    # from given board values, strategy iteration and per-move arrays; playouts and
    # finite-horizon values; the refinement of minimize; the long-run rate; the lean solves;
    # the batch expansion of the sharded solve
    *(
        extension(f"babytris.{name}")
        for name in (
            "_core",
            "_layers",
            "_sweep",
            "_greedy",
            "_strategy",
            "_moves",
            "_play",
            "_minimize",
            "_rate",
            "_lean",
            "_shard",
        )
    ),
    # the big-board engine (boards up to 16 wide, any height) for playouts and approximate DP:
    # its playout kernels, the TD(lambda) training games and the Python-facing Engine over them
    *(extension(f"babytris.big.{name}") for name in ("_playout", "_td", "_engine")),
]


class BuildBesideSources(build_ext):
    """Build as usual, then copy each compiled module beside its .pyx in the
    source tree too, so that `import babytris` from the repository root (where
    Python finds the tree before the installed package) works after `pip
    install .` instead of failing on an unbuilt tree.  The copies are
    ignored by git and replaced on every install; a tree that cannot be
    written to is left as it is."""

    def run(self) -> None:
        super().run()
        if self.inplace:
            return
        for ext in self.extensions:
            built = self.get_ext_fullpath(ext.name)
            beside = os.path.join(HERE, self.get_ext_filename(ext.name))
            if os.path.isdir(os.path.dirname(beside)) and os.access(os.path.dirname(beside), os.W_OK):
                shutil.copyfile(built, beside + ".partial")
                os.replace(beside + ".partial", beside)  # atomic: a running import never sees half a file


setup(
    ext_modules=cythonize(extensions, compiler_directives=directives),
    cmdclass={"build_ext": BuildBesideSources},
)
