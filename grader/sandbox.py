"""Where a submission's kernel runs and what it can see.

Each notebook is graded in a fresh scratch folder holding only a copy of the
submission. The kernel imports the course's public helpers (``course``, ``checks``) and
the reference modules of *earlier* lessons from a second scratch folder: the module a
lesson is about (``qlearning.py`` for lesson 01) is not there, so it cannot be imported
instead of written.

On Linux the kernel also runs in its own user, mount and PID namespaces (``unshare``),
where the course's ``solutions/``, ``grader/``, reference modules of this and later
lessons, the folder of submissions and ``/tmp`` (but for the scratch folder) are covered
by empty mounts, and ``/proc`` shows only the kernel's own processes: none of it can be
read by absolute path either. Where namespaces are unavailable (macOS, some containers) the
grader says so in its report and still grades, without that wall.
"""

import functools
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
# folders of the repository a kernel must never read
PRIVATE_FOLDERS = ("solutions", "grader", "tests", "examples", ".git")


@dataclass
class Scratch:
    root: Path  # removed when grading of the notebook ends
    workdir: Path  # the kernel's working directory: the submission and nothing else
    libdir: Path  # importable: course/, checks/, earlier lessons' reference modules
    hidden: list  # paths covered inside the kernel's mount namespace


def make_scratch(lesson, submission_path, submissions_root=None):
    root = Path(tempfile.mkdtemp(prefix=f"grade-{lesson.name}-"))
    workdir, libdir = root / "work", root / "lib"
    workdir.mkdir()
    libdir.mkdir()
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
    return Scratch(root, workdir, libdir, hidden)


@functools.lru_cache(maxsize=1)
def namespaces_available():
    """Can this machine give a process its own user and mount namespaces?"""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "--pid",
                            "--fork", "--mount-proc", "--kill-child", "true"],
                           capture_output=True, timeout=10)
    return probe.returncode == 0


def kernel_argv(scratch, memory_mb, isolate=True):
    """The command that starts a sandboxed ipykernel (``{connection_file}`` is filled in)."""
    launcher = [sys.executable, str(Path(__file__).with_name("kernel_launcher.py")),
                "--memory-mb", str(memory_mb), "--scratch", str(scratch.root)]
    for path in scratch.hidden:
        launcher += ["--hide", str(path)]
    if isolate and namespaces_available():
        # --fork makes the kernel PID 1 of a new PID namespace with its own /proc;
        # --kill-child ends it when the grader kills unshare
        return ["unshare", "--user", "--map-root-user", "--mount", "--pid", "--fork",
                "--mount-proc", "--kill-child", "--", *launcher, "--in-namespace",
                "--", "-f", "{connection_file}"]
    return [*launcher, "--", "-f", "{connection_file}"]


def kernel_env(scratch):
    """The kernel's environment: no salt, no instructor variables, one BLAS thread."""
    keep = ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "SYSTEMROOT")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    env.update({
        "PYTHONPATH": str(scratch.libdir),
        "PYTHONHASHSEED": "0",  # set iteration order is part of determinism
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
    })
    return env
