"""Start an ipykernel inside a root filesystem that holds only what a kernel needs.

Run by the grader as ``unshare --user --map-root-user --mount --pid --net --fork
--mount-proc --kill-child python kernel_launcher.py --in-namespace ... -- <ipykernel
args>``. In its private namespaces it builds the kernel's world from a **whitelist**, not
by hiding what it knows to be secret (a blacklist misses the copy of the course it has
never heard of, such as a second checkout on the same machine):

1. an empty tmpfs becomes the new root; each ``--expose`` path (the system's ``/usr``,
   the Python installation, a few files of ``/etc``) is bound into it **read-only**, at
   the same path, and the symlinks that lead to it are copied; the scratch folder
   (submission, public helpers, connection file and sockets) is bound read-write;
2. each ``--hide`` path that an exposed folder happens to contain is covered as well;
3. ``pivot_root`` makes that tree ``/`` and the old root is unmounted, so nothing else of
   the machine is reachable, by any path;
4. the address space is capped, so a memory bomb raises MemoryError;
5. every capability is dropped (``setpriv``), so the kernel cannot remount, unmount or
   chroot its way back, and it becomes the kernel.

``--net`` leaves the kernel only a loopback device that is down: it talks to the grader
over Unix sockets in the scratch folder and can reach nothing else. ``/proc`` is the
new PID namespace's own: no other process is in it. Without ``--in-namespace`` (no
namespaces on this machine) only the memory cap applies.
"""

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

DEVICES = ("null", "zero", "full", "random", "urandom")


def mount(*arguments):
    subprocess.run(["mount", *arguments], check=True, capture_output=True)


def _replicate_symlinks(path, new_root):
    """Copy into ``new_root`` each symlink along ``path``, so ``path`` resolves there too."""
    walked = Path("/")
    for part in Path(path).parts[1:]:
        step = walked / part
        if step.is_symlink():
            inside = Path(new_root + str(step))
            if not os.path.lexists(inside):
                inside.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(os.readlink(step), inside)
            walked = Path(os.path.realpath(step))
        else:
            walked = step


def expose(path, new_root, writable=False):
    """Bind the host's ``path`` at the same place under ``new_root`` (read-only)."""
    real = os.path.realpath(path)
    inside = new_root + real
    if os.path.isdir(real):
        os.makedirs(inside, exist_ok=True)
    elif os.path.exists(real):
        os.makedirs(os.path.dirname(inside), exist_ok=True)
        Path(inside).touch()
    else:
        return
    mount("--bind", real, inside)
    if not writable:
        mount("-o", "remount,bind,ro", inside)
    _replicate_symlinks(path, new_root)


def covered(path, exposed):
    """True when ``path`` lies inside one of the folders already exposed."""
    real = os.path.realpath(path)
    return any(real == folder or real.startswith(folder.rstrip("/") + "/")
               for folder in exposed)


def hide(path):
    if os.path.isdir(path):
        mount("-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", path)
    elif os.path.exists(path):
        mount("--bind", "/dev/null", path)


def build_root(new_root, exposed, scratch, hidden):
    """The kernel's whole filesystem, under ``new_root`` (see the module docstring)."""
    mount("-t", "tmpfs", "-o", "size=64m,mode=755", "tmpfs", new_root)
    done = []
    for path in sorted(set(exposed), key=lambda p: len(os.path.realpath(p))):
        if not covered(path, done):
            expose(path, new_root)
            done.append(os.path.realpath(path))
        else:
            _replicate_symlinks(path, new_root)
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):  # merged-/usr links
        if os.path.islink(f"/{top}") and not os.path.lexists(f"{new_root}/{top}"):
            os.symlink(os.readlink(f"/{top}"), f"{new_root}/{top}")
    os.makedirs(f"{new_root}/tmp", mode=0o1777, exist_ok=True)
    expose(scratch, new_root, writable=True)
    os.makedirs(f"{new_root}/proc")
    mount("--rbind", "/proc", f"{new_root}/proc")  # the new PID namespace's own /proc
    os.makedirs(f"{new_root}/dev")
    for device in DEVICES:
        Path(f"{new_root}/dev/{device}").touch()
        mount("--bind", f"/dev/{device}", f"{new_root}/dev/{device}")
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{number}", f"{new_root}/dev/{name}")
    os.symlink("/proc/self/fd", f"{new_root}/dev/fd")
    for path in hidden:  # only where an exposed folder happens to contain a private one
        if covered(path, done):
            hide(new_root + os.path.realpath(path))


def enter_root(new_root, workdir):
    old = "old-root"
    os.makedirs(f"{new_root}/{old}")
    os.chdir(new_root)
    subprocess.run(["pivot_root", ".", old], check=True, capture_output=True)
    subprocess.run(["umount", "-l", f"/{old}"], check=True, capture_output=True)
    os.rmdir(f"/{old}")
    os.chdir(workdir)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--expose", action="append", default=[])
    parser.add_argument("--hide", action="append", default=[])
    parser.add_argument("--in-namespace", action="store_true",
                        help="started under unshare: mounts affect only this kernel")
    parser.add_argument("kernel_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    kernel = [sys.executable, "-m", "ipykernel_launcher",
              *[a for a in args.kernel_args if a != "--"]]
    if args.in_namespace:  # never mount anything in the grader's own namespace
        workdir = os.getcwd()
        new_root = os.path.join(args.scratch, "root")  # empty out here: mounts are private
        os.makedirs(new_root, exist_ok=True)  # a restarted kernel finds it again
        build_root(new_root, args.expose, args.scratch, args.hide)
        enter_root(new_root, workdir)
        kernel = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs",
                  "--", *kernel]
    limit = args.memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execvp(kernel[0], kernel)


if __name__ == "__main__":
    main()
