"""The seccomp filter every sandbox runs under: no new namespaces, no mounts, no kernel
administration.

The launcher installs it (through libseccomp, :mod:`pyseccomp`) as the last thing before
it starts the sandbox's init, after it has built the root filesystem and before any
student code exists. A seccomp filter is inherited by every child and survives ``exec``,
and ``no_new_privs`` (set with it) means nothing run later can shed it. So no process of a
sandbox can:

- **make a namespace or join one**: ``unshare`` and ``setns`` fail, and so does ``clone``
  with any namespace flag. ``clone3`` passes its flags in memory a filter cannot read, so
  it answers "not implemented" and the C library falls back to ``clone``, as it does on
  older kernels (Docker's default profile does the same). Without a user namespace of its
  own a sandbox holds no capability, so it cannot mount cgroup hierarchies and rewrite or
  reset its own budgets and counters;
- **mount anything** (``mount``, ``umount2``, ``pivot_root``, the new mount API, ``chroot``);
- reach the kernel's **administration, keyrings, tracing and BPF** (the list below: the
  calls Docker's default profile refuses to a container without ``CAP_SYS_ADMIN``, and
  ``io_uring``, which Docker refuses too since its calls escape seccomp).

Everything else a Python program needs (threads, ``fork``, pipes, files in ``/tmp``) is
allowed: the filter refuses with ``EPERM`` rather than killing, so a library that probes
for a feature sees an ordinary error. A syscall made through another architecture's entry
point (32-bit ``int 0x80``, x32) kills the process: libseccomp's default for a foreign
architecture.
"""

import errno

import pyseccomp  # libseccomp through ctypes: loaded here, before the root changes

# A namespace flag of clone(2) or unshare(2): any one of them makes a new namespace
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}

REFUSED = (
    # namespaces
    "unshare", "setns",
    # mounts and the root
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    # keyrings, BPF, performance counters, page-fault handling by user space, io_uring
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # tracing other processes, and files opened by handle (an escape from bind mounts)
    "ptrace", "name_to_handle_at", "open_by_handle_at",
    # the kernel's administration: modules, reboot, swap, clocks, accounting, quotas
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "settimeofday",
    "clock_settime", "clock_adjtime", "adjtimex", "syslog", "vhangup", "iopl", "ioperm",
    "lookup_dcookie", "uselib", "ustat", "sysfs", "_sysctl", "fanotify_init",
    "nfsservctl",
)


def build():
    """The filter, not yet loaded (``export_pfc`` shows it as text)."""
    refuse = pyseccomp.ERRNO(errno.EPERM)
    syscall_filter = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name in REFUSED:
        try:
            syscall_filter.add_rule(refuse, name)
        except (OSError, ValueError, RuntimeError):
            pass  # a call this architecture does not have cannot be made either
    for flag in NAMESPACE_FLAGS.values():
        syscall_filter.add_rule(refuse, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ,
                                                               flag, flag))
    syscall_filter.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    return syscall_filter


def install():
    """Load the filter into this process (and so into everything it starts)."""
    build().load()
