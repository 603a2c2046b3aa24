"""What is on the host now, for tests and benchmarks that look for what a grading left."""

import os
from pathlib import Path


def processes_running(marker):
    """The host's processes whose command line holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def host_segments(key=None):
    """The host's System V shared memory segments (lines of /proc/sysvipc/shm), those with
    ``key`` only if given."""
    lines = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return [line for line in lines if key is None or int(line.split()[0]) == key]
