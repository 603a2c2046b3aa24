"""Compiled modules for a sandbox's read-only ``/course``: each sandbox used to compile
what it imported from there (the student server and its wire, the course's helpers) from
source, because nothing inside can write a ``__pycache__``: 15 to 30 ms of CPU a sandbox.

The grader compiles each module's source once per process and writes the bytecode beside
every scratch copy, as the import system would have: a timestamp-checked ``.pyc``
(PEP 552) of the copy's modification time and size, so a copy changed afterwards is
compiled from its source again. The code is compiled from the very bytes that are copied,
with no optimization, as a sandbox's interpreter would compile them.
"""

import importlib.util
import marshal
import os
from pathlib import Path

_compiled = {}  # source bytes -> marshalled code


def write_bytecode(folder):
    """Write the ``.pyc`` of every module under ``folder`` into its ``__pycache__``."""
    for source in Path(folder).rglob("*.py"):
        data = source.read_bytes()
        code = _compiled.get(data)
        if code is None:
            try:
                code = marshal.dumps(compile(data, str(source), "exec", dont_inherit=True,
                                             optimize=0))
            except (SyntaxError, ValueError):
                continue  # imported, it fails as it would have
            _compiled[data] = code
        status = source.stat()
        header = (importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
                  + (int(status.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
                  + (status.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
        target = Path(importlib.util.cache_from_source(str(source), optimization=""))
        os.makedirs(target.parent, exist_ok=True)
        target.write_bytes(header + code)
