"""Build the compiled core.  Metadata lives in pyproject.toml."""

import glob
import hashlib
import os
import platform
import shutil
import sys
import sysconfig
import threading
import time

import Cython
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


def _popcount_instruction() -> list[str]:
    """``-mpopcnt`` where this machine's x86-64 processor has the instruction:
    without it gcc's ``__builtin_popcountll`` is a library call (``__popcountdi2``,
    10% of a lean solve's time at 4x6), and every rank lookup of the lean mode
    counts bits (the engine's bitmap index too: gcc turns its portable count
    into the instruction; 4x5's enumeration took 13.1 ms before, 10.5 after).
    Every x86-64 processor since 2008 has it; the build is for the machine it
    runs on: a build copied to a processor without it (QEMU's default model)
    would stop on an illegal instruction, so BABYTRIS_POPCNT=0 leaves it out."""
    if os.environ.get("BABYTRIS_POPCNT", "1") == "0" or platform.machine() not in ("x86_64", "AMD64"):
        return []
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []
    return ["-mpopcnt"] if "popcnt" in flags else []


POPCNT = _popcount_instruction()

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
        # -g0: no debug info (Python's own CFLAGS ask for -g), a third of the compile time
        extra_compile_args=(["-O0", "-g"] if DEBUG else ["-O3", "-g0"]) + OPENMP + POPCNT,
        extra_link_args=OPENMP,
    )


extensions = [
    # the engine (placement, drop, clear, enumeration); the Bellman sweeps, the greedy backups
    # from given board values, strategy iteration and per-move arrays; playouts and
    # finite-horizon values; the refinement of minimize; the long-run rate; the lean solves;
    # the batch expansion of the sharded solve; the lean shards' search and sweeps
    *(
        extension(name)
        for name in (
            "babytris.engine._core",
            "babytris.engine._layers",
            "babytris.solvers._sweep",
            "babytris.solvers._greedy",
            "babytris.solvers._strategy",
            "babytris.engine._moves",
            "babytris.analysis._play",
            "babytris.solvers._minimize",
            "babytris.analysis._rate",
            "babytris.modes._lean",
            "babytris.modes.sharded._shard",
            "babytris.modes.sharded._lean_shard",
        )
    ),
    # the big-board engine (boards up to 16 wide, any height) for playouts and approximate DP:
    # its playout kernels, the TD(lambda) training games and the Python-facing Engine over them
    *(extension(f"babytris.big.{name}") for name in ("_playout", "_td", "_engine")),
]


def _say(message: str) -> None:
    """Print one progress line where the reader sees it.  ``pip install`` (with
    or without ``-q``) captures the build's output and shows it only with
    ``-v`` or on failure, so when a terminal is attached the line goes to it
    directly; otherwise (CI, a log) to stdout as usual."""
    line = f"babytris build: {message}\n"
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(line)
            return
    except OSError:
        pass
    sys.stdout.write(line)
    sys.stdout.flush()


def _cache_key(ext: Extension) -> str:
    """What decides the compiled module, by content, never by timestamp: the .pyx, every
    .pxd of the package (the cimports), the Cython and numpy versions (the generated C
    and the headers), the directives, the compiler flags and the interpreter.  pip builds
    in a fresh isolated environment each time, whose Cython and numpy files are newer
    than any earlier build; timestamps alone would recompile everything on every install."""
    digest = hashlib.sha256()
    pxds = sorted(glob.glob(os.path.join(HERE, "babytris", "**", "*.pxd"), recursive=True))
    pyx = os.path.join(HERE, *ext.name.split(".")) + ".pyx"  # ext.sources turn to .c once cythonized
    for path in [pyx] + pxds:
        digest.update(os.path.relpath(path, HERE).encode() + b"\0")
        with open(path, "rb") as f:
            digest.update(f.read() + b"\0")
    settings = (
        Cython.__version__,
        numpy.__version__,
        sorted(directives.items()),
        ext.extra_compile_args,
        ext.extra_link_args,
        ext.define_macros,
        sys.version,
        sysconfig.get_platform(),
        sysconfig.get_config_var("CC"),
        sysconfig.get_config_var("EXT_SUFFIX"),
    )
    digest.update(repr(settings).encode())
    return digest.hexdigest()[:20]


class BuildBesideSources(build_ext):
    """Build the extensions (cached, in parallel, with a line of progress each), then copy
    each compiled module beside its .pyx in the source tree too, so that `import babytris`
    from the repository root (where Python finds the tree before the installed package)
    works after `pip install .` instead of failing on an unbuilt tree.  The copies are
    ignored by git and replaced on every install; a tree that cannot be written to is
    left as it is.

    Cache: each compiled module is kept in build/babytris-cache/ under a key of its
    inputs' content (`_cache_key`), so a second `pip install` (the README's test set-up
    after its first command) copies the modules instead of compiling them again.
    Only the modules whose key changed are cythonized and compiled, on every core
    (``parallel``); BABYTRIS_NO_CACHE=1 compiles everything."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def build_extensions(self) -> None:
        cache = os.path.join(HERE, "build", "babytris-cache")
        use_cache = os.environ.get("BABYTRIS_NO_CACHE", "") in ("", "0")
        keys = {ext.name: _cache_key(ext) for ext in self.extensions}
        cached = {
            ext.name: os.path.join(cache, f"{ext.name}-{keys[ext.name]}{self.get_ext_filename('')}")
            for ext in self.extensions
        }
        every = self.extensions
        missing, reused = [], []
        for ext in every:
            target = self.get_ext_fullpath(ext.name)
            if use_cache and os.path.exists(cached[ext.name]):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(cached[ext.name], target)
                reused.append(ext.name)
            else:
                missing.append(ext)
        if reused:
            _say(f"reused {len(reused)} compiled module(s) from build/babytris-cache/ (their sources are unchanged)")
        if missing:
            started = time.monotonic()
            self._total, self._done, self._lock = len(missing), 0, threading.Lock()
            _say(f"cythonizing {len(missing)} module(s), then compiling them {self.parallel} at a time")
            generated = cythonize(
                missing,
                compiler_directives=directives,
                nthreads=min(len(missing), self.parallel),
                force=True,
                quiet=True,
            )
            _say(f"cythonized in {time.monotonic() - started:.0f} s")
            c_sources = {ext.name: ext.sources for ext in generated}
            for ext in missing:  # keep setuptools' own Extension objects (they carry its per-build state)
                ext.sources = c_sources[ext.name]
            self.extensions = missing
            self.force = True  # the C was just generated: compile it, whatever the timestamps say
            try:
                super().build_extensions()
            finally:
                self.extensions = every
            os.makedirs(cache, exist_ok=True)
            for ext in missing:
                built = self.get_ext_fullpath(ext.name)
                shutil.copyfile(built, cached[ext.name] + ".partial")
                os.replace(cached[ext.name] + ".partial", cached[ext.name])
            _say(f"compiled {len(missing)} module(s) in {time.monotonic() - started:.0f} s")

    def build_extension(self, ext: Extension) -> None:
        started = time.monotonic()
        _say(f"{ext.name}: compiling ...")
        super().build_extension(ext)
        with self._lock:
            self._done += 1
            _say(f"{ext.name}: compiled in {time.monotonic() - started:.0f} s ({self._done} of {self._total})")

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
    ext_modules=extensions,  # cythonized by BuildBesideSources, only where the cache misses
    cmdclass={"build_ext": BuildBesideSources},
)
