"""A sandbox imports ``/course`` from the bytecode the grader wrote, never from a stale one."""

import subprocess
import sys
import textwrap

from grader.judge.sandbox import make_scratch, remove_scratch
from grader.judge.scratch_bytecode import write_bytecode
from grader.lessons import all_lessons

# Imports ``names`` from the folder on sys.path, in a fresh interpreter that may not
# write bytecode (as a sandbox's cannot), and prints which were compiled from source.
IMPORTER = textwrap.dedent("""
    import importlib, importlib.machinery, sys
    compiled = []
    original = importlib.machinery.SourceFileLoader.source_to_code
    def counted(loader, data, path, **kwargs):
        compiled.append(loader.name)
        return original(loader, data, path, **kwargs)
    importlib.machinery.SourceFileLoader.source_to_code = counted
    sys.path[:0] = sys.argv[1].split(":")
    values = [getattr(importlib.import_module(name), "VALUE", None) for name in sys.argv[2:]]
    print(sorted(compiled), values)
""")


def imported(folder, *names):
    completed = subprocess.run([sys.executable, "-B", "-c", IMPORTER, str(folder), *names],
                               capture_output=True, text=True, timeout=60, check=True)
    return completed.stdout.strip()


def test_modules_load_from_the_written_bytecode(tmp_path):
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / "__init__.py").write_text("VALUE = 'package'\n")
    (tmp_path / "package" / "inner.py").write_text("VALUE = 2 * 21\n")
    (tmp_path / "top.py").write_text("VALUE = [n * n for n in range(4)]\n")
    assert imported(tmp_path, "top", "package.inner") == \
        "['package', 'package.inner', 'top'] [[0, 1, 4, 9], 42]"
    write_bytecode(tmp_path)
    assert imported(tmp_path, "top", "package.inner") == "[] [[0, 1, 4, 9], 42]"


def test_a_module_changed_after_its_bytecode_is_compiled_from_its_source(tmp_path):
    (tmp_path / "top.py").write_text("VALUE = 1\n")
    write_bytecode(tmp_path)
    (tmp_path / "top.py").write_text("VALUE = 22\n")  # another size: the .pyc is stale
    assert imported(tmp_path, "top") == "['top'] [22]"


def test_a_module_that_does_not_compile_fails_as_it_would_have(tmp_path):
    (tmp_path / "broken.py").write_text("VALUE = (\n")
    write_bytecode(tmp_path)
    assert not (tmp_path / "__pycache__").exists()


def test_a_sandbox_compiles_none_of_the_course_it_imports():
    """Every module of lesson 08's scratch (the course's helpers, the earlier lessons' and
    the sandbox's runtime, imported the way the student server imports it)."""
    scratch = make_scratch(all_lessons()["08_nstep_replay"])
    try:
        names = sorted(".".join(path.relative_to(scratch.lib).with_suffix("").parts)
                       .removesuffix(".__init__").removeprefix("_grader_runtime.")
                       for path in scratch.lib.rglob("*.py"))
        runtime = scratch.lib / "_grader_runtime"
        listed = imported(f"{scratch.lib}:{runtime}", *names)
    finally:
        remove_scratch(scratch)
    assert len(names) > 30
    assert listed == f"[] {[None] * len(names)}"
