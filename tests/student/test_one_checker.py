"""Where students work (``lessons.sh``), JupyterLab shows one checker, the lessons' own
self-check cell: nbgrader's lab extension (instructor menus, a Validate button showing raw
tracebacks) and its server extensions are off.

The script is run on a skeleton environment that borrows this one's packages through a
``.pth`` file and holds copies of its Jupyter configuration, so the environment running
the tests is never changed."""

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from submission_factory import REPOSITORY

NBGRADER_SERVER = ("formgrader", "validate_assignment", "assignment_list", "course_list")


def skeleton_environment(folder):
    """A virtual environment at ``folder`` that imports this one's packages and holds a
    copy of its Jupyter configuration and nbgrader's lab extension."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                           "['purelib'])"], capture_output=True, text=True, check=True)
    Path(site.stdout.strip(), "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    prefix = Path(sys.prefix)
    shutil.copytree(prefix / "etc" / "jupyter", folder / "etc" / "jupyter")
    shutil.copytree(prefix / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader",
                    folder / "share" / "jupyter" / "labextensions" / "@jupyter" / "nbgrader")
    return python


def server_extensions(python):
    """``{extension: enabled}`` as jupyter_server reads the environment's configuration."""
    code = ("import json; from jupyter_server.extension.config import ExtensionConfigManager;"
            "from jupyter_core.paths import jupyter_config_path;"
            "m = ExtensionConfigManager(read_config_path=jupyter_config_path());"
            "print(json.dumps(m.get_jpserver_extensions()))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_lessons_sh_turns_nbgrader_off_in_jupyterlab(tmp_path):
    python = skeleton_environment(tmp_path / "env")
    before = server_extensions(python)
    assert all(before[f"nbgrader.server_extensions.{name}"] for name in NBGRADER_SERVER)
    assert "bash scripts/one_checker.sh" in (REPOSITORY / "lessons.sh").read_text()
    subprocess.run(["bash", str(REPOSITORY / "scripts" / "one_checker.sh"), str(python)],
                   check=True, cwd=tmp_path, timeout=300)
    after = server_extensions(python)
    assert not any(after[f"nbgrader.server_extensions.{name}"] for name in NBGRADER_SERVER)
    assert {name: on for name, on in after.items() if "nbgrader" not in name} == \
        {name: on for name, on in before.items() if "nbgrader" not in name}
    listed = subprocess.run([str(python), "-m", "jupyterlab.labextensions", "list"],
                            capture_output=True, text=True, check=True)
    line = next(line for line in (listed.stdout + listed.stderr).splitlines()
                if "@jupyter/nbgrader" in line and "v0" in line)
    assert "disabled" in line
    # the environment running the tests still has nbgrader on (the instructor's tools)
    assert all(server_extensions(sys.executable)[f"nbgrader.server_extensions.{name}"]
               for name in NBGRADER_SERVER)
