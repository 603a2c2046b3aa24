"""Where a submission's kernel runs and what it can see.

Each notebook is graded in a fresh scratch folder holding only a copy of the
submission. The kernel imports the course's public helpers (``course``, ``checks``) and
the reference modules of *earlier* lessons from a second scratch folder: the module a
lesson is about (``qlearning.py`` for lesson 01) is not there, so it cannot be imported
instead of written.

On Linux the kernel also runs in its own user, mount, PID and network namespaces
(``unshare``), inside a root filesystem built from a whitelist (:func:`exposed_paths`):
the system's programs and libraries and the Python installation, read-only, plus the
scratch folder. Nothing else of the machine exists there: not the repository, not the
class folder, not a second checkout of the course somewhere else. ``/proc`` shows only
the kernel's own processes, there is no network, and the kernel holds no capabilities
(see ``kernel_launcher.py``). Where namespaces are unavailable (macOS, some containers)
the grader says so in its report and still grades, without that wall.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader.lessons import all_lessons, earlier_reference_modules
from grader.release import REPOSITORY

PUBLIC_PACKAGES = ("course", "checks")
DEFAULT_MEMORY_MB = 3072
# folders of the repository a kernel must never read; hidden again inside the sandbox
# should an exposed folder (a Python installation around the repository) contain them
PRIVATE_FOLDERS = ("solutions", "grader", "tests", "examples", ".git")
# what a Python kernel needs from the system; /etc only as the few files it reads
SYSTEM_PATHS = ("/usr", "/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group",
                "/etc/nsswitch.conf", "/etc/hosts", "/etc/mime.types", "/etc/fonts")


# --fork makes the kernel PID 1 of a new PID namespace with its own /proc; --kill-child
# ends it when the grader kills unshare; --net leaves it no network at all
UNSHARE = ("unshare", "--user", "--map-root-user", "--mount", "--pid", "--net", "--fork",
           "--mount-proc", "--kill-child")


@dataclass
class Scratch:
    root: Path  # removed when grading of the notebook ends
    workdir: Path  # the kernel's working directory: the submission and nothing else
    libdir: Path  # importable: course/, checks/, earlier lessons' reference modules
    home: Path  # the kernel's HOME (IPython's profile, matplotlib's cache)
    hidden: list  # paths covered inside the kernel's mount namespace


def make_scratch(lesson, submission_path, submissions_root=None):
    root = Path(tempfile.mkdtemp(prefix=f"grade-{lesson.name}-"))
    workdir, libdir, home = root / "work", root / "lib", root / "home"
    for folder in (workdir, libdir, home):
        folder.mkdir()
    shutil.copy2(submission_path, workdir / Path(submission_path).name)
    for package in PUBLIC_PACKAGES:
        shutil.copytree(REPOSITORY / package, libdir / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for module in earlier_reference_modules(lesson):
        shutil.copy2(REPOSITORY / module, libdir / module)
    hidden = [REPOSITORY / folder for folder in PRIVATE_FOLDERS
              if (REPOSITORY / folder).is_dir()]
    hidden += [REPOSITORY / other.exports_to for other in all_lessons().values()
               if other.exports_to and other.number >= lesson.number]
    if submissions_root is not None:
        hidden.append(Path(submissions_root).resolve())
    return Scratch(root, workdir, libdir, home, hidden)


def probe_modules(lesson):
    """Modules the kernel may import and a probe may call: every module of the public
    packages, and the reference modules of earlier lessons. The grader's bootstrap keeps
    private copies of them all (``in_kernel.py``)."""
    names = []
    for package in PUBLIC_PACKAGES:
        for path in sorted((REPOSITORY / package).rglob("*.py")):
            parts = path.relative_to(REPOSITORY).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names + [Path(module).stem for module in earlier_reference_modules(lesson)]


@functools.lru_cache(maxsize=1)
def exposed_paths():
    """What the kernel's root filesystem holds besides its scratch folder (read-only):
    the system's ``/usr`` and a few ``/etc`` files, and this Python's installation and
    the import path a clean interpreter of it has (``.pth`` entries included), except
    folders inside the repository (its virtual environment aside)."""
    clean = subprocess.run([sys.executable, "-I", "-c",
                            "import json, sys; print(json.dumps(sys.path))"],
                           capture_output=True, text=True, check=True)
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    imports = {path for path in json.loads(clean.stdout)
               if path and os.path.isdir(path)
               and not Path(path).resolve().is_relative_to(REPOSITORY)}
    return tuple(sorted(path for path in {*SYSTEM_PATHS, *prefixes, *imports}
                        if os.path.exists(path)))


@functools.lru_cache(maxsize=1)
def namespaces_available():
    """Can this machine give a kernel its own namespaces, drop its capabilities and
    move its root (``unshare``, ``setpriv`` and ``pivot_root``, all from util-linux)?"""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    probe = subprocess.run([*UNSHARE, "--", "setpriv", "--bounding-set=-all", "true"],
                           capture_output=True, timeout=10)
    return probe.returncode == 0 and shutil.which("pivot_root") is not None


def kernel_argv(scratch, memory_mb, isolate=True):
    """The command that starts a sandboxed ipykernel (``{connection_file}`` is filled in)."""
    launcher = [sys.executable, str(Path(__file__).with_name("kernel_launcher.py")),
                "--memory-mb", str(memory_mb), "--scratch", str(scratch.root)]
    if isolate and namespaces_available():
        for path in exposed_paths():
            launcher += ["--expose", path]
        for path in scratch.hidden:
            launcher += ["--hide", str(path)]
        return [*UNSHARE, "--", *launcher, "--in-namespace", "--", "-f",
                "{connection_file}"]
    return [*launcher, "--", "-f", "{connection_file}"]


def kernel_env(scratch):
    """The kernel's environment: no salt, no instructor variables, one BLAS thread."""
    keep = ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update({
        "HOME": str(scratch.home),  # not the instructor's: nothing to read, nothing to lock
        "PYTHONPATH": str(scratch.libdir),
        "PYTHONHASHSEED": "0",  # set iteration order is part of determinism
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
    })
    return env
