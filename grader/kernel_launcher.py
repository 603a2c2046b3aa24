"""Start an ipykernel after walling off what it must not see.

Run by the grader as ``unshare --user --map-root-user --mount --pid --fork --mount-proc
--kill-child python kernel_launcher.py --in-namespace ... -- <ipykernel args>``. In its
private mount namespace it:

1. covers ``/tmp`` with an empty tmpfs, then binds the grading scratch folder back at
   its old path (through a file descriptor opened before the covering mount), so stray
   copies of solutions in ``/tmp`` vanish but the kernel's own files and sockets stay;
2. covers each ``--hide`` folder with an empty tmpfs and each file with /dev/null;
3. caps the address space, so a memory bomb raises MemoryError instead of taking the
   machine down, and becomes the kernel.

``/proc`` is the new PID namespace's own (``--mount-proc``): other processes, and their
``cwd`` and ``root`` links into the unhidden filesystem, are not in it.
Without ``--in-namespace`` (no namespaces on this machine) only the memory cap applies.
"""

import argparse
import os
import resource
import subprocess
import sys


def mount(*arguments, pass_fds=()):
    subprocess.run(["mount", *arguments], check=True, capture_output=True, pass_fds=pass_fds)


def private_tmp(scratch):
    scratch_fd = os.open(scratch, os.O_RDONLY | os.O_DIRECTORY)
    mount("-t", "tmpfs", "-o", "size=64m", "tmpfs", "/tmp")
    os.makedirs(scratch, exist_ok=True)
    # --no-canonicalize: resolving the fd link to a path would find the new, empty /tmp
    mount("--no-canonicalize", "--bind", f"/proc/self/fd/{scratch_fd}", scratch,
          pass_fds=(scratch_fd,))
    os.close(scratch_fd)


def hide(path):
    if os.path.isdir(path):
        mount("-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", path)
    elif os.path.exists(path):
        mount("--bind", "/dev/null", path)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--hide", action="append", default=[])
    parser.add_argument("--in-namespace", action="store_true",
                        help="started under unshare: mounts affect only this kernel")
    parser.add_argument("kernel_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.in_namespace:  # never mount over paths in the grader's own namespace
        if args.scratch.startswith("/tmp/"):
            private_tmp(args.scratch)
        for path in args.hide:
            hide(path)
    limit = args.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    kernel_args = [a for a in args.kernel_args if a != "--"]
    os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *kernel_args])


if __name__ == "__main__":
    main()
