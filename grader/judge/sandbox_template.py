"""The sandbox template: a process that has imported the public packages, and forks
every sandbox from itself so that no sandbox pays for those imports again.

Started by the grader (``sandbox_forks.py``) as ``python sandbox_template.py CONTROL_FD``,
in an environment that holds no salt and no instructor's variable, it imports the
packages a lesson's cells import (:data:`PRELOADED`: numpy, pandas, matplotlib, scipy,
gymnasium, IPython; about 1.3 CPU-s that each sandbox used to spend), then waits on its
control socket. It never runs student code, never reads a submission and never imports
the checks: a sandbox forked from it holds a copy of nothing but public code.

Each request (the sandbox's budgets and paths, with the channel to the grader and the
launcher's log as file descriptors) forks a child that becomes the sandbox exactly as
``setpriv --pdeathsig KILL -- unshare --user --map-root-user --mount --pid --net --ipc
--uts --fork --mount-proc --kill-child python sandbox_launcher.py --in-namespace`` would
make it, step by step in the same order:

1. the child (the sandbox's first process on the host, which the grader watches through a
   pidfd) closes everything but the channel and the log, starts its own session, joins
   the sandbox's cgroups, makes its own user, mount, PID, network, IPC and UTS namespaces
   (root inside mapped to the grader's user), and forks the sandbox's PID 1;
2. PID 1 mounts its namespace's ``/proc``, builds and enters the sandbox's root, sets its
   limits, forbids user namespaces and installs the seccomp filter
   (``sandbox_launcher.enter_sandbox``), drops every capability and sets
   ``no_new_privs`` (what ``setpriv`` does before exec), forks the student server, and
   becomes the trusted init by running ``sandbox_init.py --watch`` in its place (a
   fresh, small interpreter: the init holds none of the template's memory);
3. the student server reseeds every generator (it would otherwise share the
   template's), points its imports at ``/course`` and serves the channel.

Every process of a sandbox dies with the one before it (parent-death signals), and the
template ends when the grader's end of its control socket closes, or when the grader is
no longer its parent. It waits for each sandbox that ends, so that the CPU time of its
sandboxes is in its own, and in the grader's once the grader waits for it. Each process takes the name of the program it stands for
(``sandbox_init.py``, ``student_server.py``...), so that ``ps`` reads as it did.
"""

import ctypes
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import traceback

# what a lesson's cells import: loaded once here, inherited by every sandbox (a module
# missing from this installation is skipped: the cell that needs it fails as it would)
PRELOADED = ("numpy", "pandas", "matplotlib.pyplot", "scipy.stats", "gymnasium",
             "gymnasium.envs.toy_text", "gymnasium.envs.classic_control",
             "gymnasium.utils.env_checker", "tqdm.auto", "IPython.display",
             "IPython.core.interactiveshell")

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
NAMESPACES = (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
              | CLONE_NEWUTS)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 1, 4, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
CAPABILITY_VERSION_3 = 0x20080522
PARENT_LOOK_INTERVAL = 1.0  # seconds between looks at whether the grader still runs
MAX_REQUEST = 1 << 20  # bytes of one request (the exposed paths are the bulk of it)
SANDBOX_FAILED = 125  # what a sandbox that could not be set up exits with

libc = ctypes.CDLL(None, use_errno=True)

# where this script and the sandbox's runtime are on the host: the template imports the
# launcher's and the init's code from them, and a sandbox's imports never look there
HERE = os.path.dirname(os.path.abspath(__file__))
HOST_FOLDERS = (HERE, os.path.join(HERE, "sandbox_runtime"))
sandbox_init = sandbox_launcher = syscall_filter = None  # loaded by main()


def load_sandbox_code():
    """The launcher's, the init's and the seccomp filter's code (the last loads
    libseccomp, while the host's root is still the root)."""
    global sandbox_init, sandbox_launcher, syscall_filter
    sys.path[1:1] = [HOST_FOLDERS[1]]
    import sandbox_init
    import sandbox_launcher
    import syscall_filter


def _check(result, doing):
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{doing}: {os.strerror(number)}")


def _title(name):
    """Name this process for ``ps`` and ``/proc/PID/cmdline`` (the tests that look for a
    sandbox's processes find them by these names)."""
    try:
        import setproctitle
    except ImportError:
        return
    setproctitle.setproctitle(name)


def preload():
    """Import :data:`PRELOADED` in a home of its own, removed afterwards (matplotlib keeps
    its font list in memory; nothing a sandbox does reads the folder again)."""
    home = tempfile.mkdtemp(prefix="grader-template-")
    os.environ.update({"HOME": home, "MPLCONFIGDIR": os.path.join(home, "matplotlib")})
    try:
        for name in PRELOADED:
            try:
                __import__(name)
            except ImportError:
                pass
    finally:
        shutil.rmtree(home, ignore_errors=True)
        for name in ("HOME", "MPLCONFIGDIR"):
            os.environ.pop(name, None)
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1:  # unshare(CLONE_NEWUSER) refuses a process with threads
        raise SystemExit(f"sandbox template: {threads} threads after its imports, not 1")


# --- the sandbox's first process on the host (what unshare was) ------------------------

def become_sandbox(request, channel_fd, log_fd, template_pid):
    """Run in the forked child; never returns."""
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != template_pid:  # the template ended before the line above
            os._exit(SANDBOX_FAILED)
        os.setsid()
        _keep_only(channel_fd, log_fd)
        _title("sandbox_launcher.py (forked from the sandbox template)")
        for folder in dict.fromkeys(request["cgroups"]):  # before anything else runs
            with open(os.path.join(folder, "cgroup.procs"), "w") as procs:
                procs.write(str(os.getpid()))
        uid, gid = os.geteuid(), os.getegid()
        _check(libc.unshare(NAMESPACES), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                           ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as handle:
                handle.write(text)
        launcher = sandbox_launcher
        launcher.mount("none", "/", None, launcher.MS_REC | launcher.MS_PRIVATE, None,
                       "making private the mounts under")
        init = os.fork()
        if init == 0:
            become_init(request, channel_fd)
        os.close(channel_fd)  # the grader reads the end of the channel when the server ends
        while True:
            try:
                _, status = os.waitpid(init, 0)
                break
            except InterruptedError:
                continue
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    except BaseException:  # noqa: BLE001 - the log says why; the grader sees it die
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(SANDBOX_FAILED)


def _keep_only(channel_fd, log_fd):
    """Standard output and error to the launcher's log, standard input from /dev/null,
    and every other descriptor (the template's control socket above all) closed."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    for number in map(int, os.listdir("/proc/self/fd")):
        if number > 2 and number != channel_fd:
            try:
                os.close(number)
            except OSError:
                pass  # the listing's own descriptor, closed already
    # the process's streams from now on, open until it ends
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115


# --- PID 1 -------------------------------------------------------------------------------

def become_init(request, channel_fd):
    """The sandbox's PID 1: its world built as the launcher builds it, the student server
    forked, then the init's program (``sandbox_init.py --watch``) run in place of this
    one. The init must not hold the template's memory: where no cgroup holds the budget,
    the init counts every process's resident memory, its own too."""
    try:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _title("sandbox_init.py (forked from the sandbox template)")
        launcher = sandbox_launcher
        launcher.mount("none", "/proc", None, launcher.MS_REC | launcher.MS_PRIVATE, None,
                       "making private the mounts under")
        launcher.mount("proc", "/proc", "proc",
                       launcher.MS_NOSUID | launcher.MS_NOEXEC | launcher.MS_NODEV, None,
                       "mounting the namespace's proc on")
        # the template's imports are not the sandbox's: its cap is the budget above them
        inherited_mb = _address_space_mb()
        sandbox_launcher.enter_sandbox(request["root"], request["expose"], request["lib"],
                                       request["disk_mb"], request["memory_mb"],
                                       syscall_filter,
                                       address_space_mb=request["memory_mb"] + inherited_mb)
        drop_capabilities()
        libc.prctl(PR_SET_DUMPABLE, 0)
        server = os.fork()
        if server == 0:
            become_server(channel_fd)
        os.close(channel_fd)  # the channel closes for the grader as soon as the server ends
        budgets = ((request["max_tasks"], request["memory_mb"] * 2**20)
                   if request["init_budgets"] else (0, 0))
        runtime = f"{sandbox_launcher.COURSE_MOUNT}/{sandbox_launcher.RUNTIME_FOLDER}"
        command = [sys.executable, "-I", "-S", f"{runtime}/sandbox_init.py",
                   sandbox_init.WATCH, str(server), str(sandbox_launcher.MAX_PROCESSES),
                   *map(str, budgets)]
        os.execv(command[0], command)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        sys.stderr.flush()
    os._exit(SANDBOX_FAILED)


def _address_space_mb():
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmSize:"):
                return -(-int(line.split()[1]) // 1024)
    return 0


def drop_capabilities():
    """What ``setpriv --bounding-set=-all --inh-caps=-all --no-new-privs`` and the exec
    after it do: no capability left in any set, none to gain, nothing to regain."""
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for capability in range(last + 1):
        _check(libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0), "dropping a capability")
    _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0),
           "clearing ambient capabilities")
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: twice, all 0
    _check(libc.capset(header, data), "capset")
    with open("/proc/self/status") as handle:
        left = [line for line in handle if line.startswith(("CapInh", "CapPrm", "CapEff",
                                                            "CapBnd", "CapAmb"))
                and int(line.split()[1], 16)]
    if left:
        raise RuntimeError(f"capabilities left after dropping them all: {left}")


# --- the student server ------------------------------------------------------------------

def become_server(channel_fd):
    """The student server, forked from PID 1: as a fresh ``python student_server.py``
    would start, but with the template's imports. Never returns."""
    import random
    import tempfile as temporary

    import numpy as np

    libc.prctl(PR_SET_DUMPABLE, 1)  # as after an exec: the init alone is not dumpable
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # as the init's server has
    runtime = f"{sandbox_launcher.COURSE_MOUNT}/{sandbox_launcher.RUNTIME_FOLDER}"
    sys.argv = [f"{runtime}/student_server.py", str(channel_fd)]
    _title(f"{sys.executable} {runtime}/student_server.py {channel_fd}")
    sys.path[:] = [runtime, sandbox_launcher.COURSE_MOUNT,
                   *(path for path in sys.path if path not in HOST_FOLDERS)]
    temporary.tempdir = None  # found again from TMPDIR, the sandbox's /tmp
    random.seed()  # from the kernel: no two sandboxes share the template's state
    np.random.seed()
    try:
        import student_server
        student_server.serve_channel(channel_fd)
    except BaseException:  # noqa: BLE001 - into the launcher's log
        traceback.print_exc()
        sys.stderr.flush()
    os._exit(1)


# --- the template ------------------------------------------------------------------------

def serve(control):
    """Fork a sandbox for each request until the grader goes."""
    grader, template = os.getppid(), os.getpid()
    try:
        while os.getppid() == grader:
            ready = select.select([control], [], [], PARENT_LOOK_INTERVAL)[0]
            _reap()
            if not ready:
                continue
            try:
                data, fds, _, _ = socket.recv_fds(control, MAX_REQUEST, 2)
            except OSError:
                return
            if not data:
                return  # the grader closed its end
            reply, pidfd = _fork_one(data, fds, template)
            try:
                socket.send_fds(control, [json.dumps(reply).encode()],
                                [pidfd] if pidfd is not None else [])
            except OSError:
                return
            finally:
                if pidfd is not None:
                    os.close(pidfd)
    finally:
        _reap()


def _reap():
    """Wait for the sandboxes that ended: their CPU time joins the template's, and the
    template's joins the grader's when the grader waits for it (``sandbox_forks``)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return


def _fork_one(data, fds, template):
    """``(reply, pidfd)`` for one request: the sandbox's first process, or why not."""
    try:
        request = json.loads(data)
        if len(fds) != 2:
            raise ValueError("a request carries the channel and the log, and nothing else")
        channel_fd, log_fd = fds
        pid = os.fork()
        if pid == 0:  # the control socket is closed with the rest (_keep_only)
            become_sandbox(request, channel_fd, log_fd, template)
        return {"pid": pid}, os.pidfd_open(pid)  # not reaped yet: it is still its pid
    except (OSError, ValueError, KeyError) as error:
        return {"error": f"{type(error).__name__}: {error}"}, None
    finally:
        for fd in fds:
            os.close(fd)


def default_signals():
    """Every signal delivered and handled as in a fresh interpreter, whatever the grader
    that started this process blocked or ignored (a Dask worker ignores Ctrl-C): the
    grader interrupts a student server with SIGINT, which must raise KeyboardInterrupt
    there."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in (signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT, signal.SIGUSR1,
                   signal.SIGUSR2, signal.SIGCHLD):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # SIGPIPE stays Python's


def main():
    default_signals()
    control = socket.socket(fileno=int(sys.argv[1]))
    _title("sandbox_template.py (the grader's sandbox template)")
    load_sandbox_code()
    preload()
    control.send(b'{"ready": true}')
    serve(control)
    os._exit(0)  # the sandboxes forked from here die with it (their parent-death signal)


if __name__ == "__main__":
    main()
