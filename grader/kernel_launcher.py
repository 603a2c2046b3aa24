"""Start an ipykernel after walling off what it must not see.

Run by the grader as ``[unshare ...] python -m grader.kernel_launcher --memory-mb N
--hide PATH ... -- <ipykernel args>``. Inside a private mount namespace each hidden
folder is covered by an empty tmpfs and each hidden file by /dev/null; then the address
space is capped, so a memory bomb raises MemoryError in the kernel instead of taking the
machine down, and the process becomes the kernel.
"""

import argparse
import os
import resource
import subprocess
import sys


def hide(path):
    if os.path.isdir(path):
        command = ["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", path]
    elif os.path.exists(path):
        command = ["mount", "--bind", "/dev/null", path]
    else:
        return
    subprocess.run(command, check=True, capture_output=True)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--hide", action="append", default=[])
    parser.add_argument("--in-namespace", action="store_true",
                        help="started under unshare: hiding paths affects only this kernel")
    parser.add_argument("kernel_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.in_namespace:  # never mount over paths in the grader's own namespace
        for path in args.hide:
            hide(path)
    limit = args.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    kernel_args = [a for a in args.kernel_args if a != "--"]
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *kernel_args])


if __name__ == "__main__":
    main()
