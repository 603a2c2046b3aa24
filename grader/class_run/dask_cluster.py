"""The Dask cluster a class is graded on: a LocalCluster of ``--workers`` processes by
default, or an existing cluster reached with ``--scheduler tcp://host:8786``.

Either way the workers run one task at a time (the grader's probes keep per-process
state) and the course version they import must be the grader's own. On a LocalCluster
the scheduler retries a notebook whose worker died once (``allowed-failures`` 1); an
external scheduler keeps its own setting, which is reported when it is not 1.

A LocalCluster's workers each have a memory limit (:func:`worker_memory_limit`): a
worker whose grading process grows past it is ended by its nanny and replaced, so a
notebook that makes the grader's side hold too much costs its own grading only.
"""

import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys

import dask
from distributed import Client, LocalCluster, WorkerPlugin
from distributed.system import MEMORY_LIMIT  # the machine's memory (or its cgroup's)

from grader.class_run.class_cpu_share import DEFAULT_CPU_WEIGHT, class_cpu_group
from grader.course_version import course_version
from grader.judge.sandbox import isolation_level

RETRIES = 1  # a task whose worker dies is tried once more; a second death is its own fault
WORKER_WAIT = 60  # seconds to wait for the first worker of an external cluster

# The memory a local worker's grading process may use (its own resident memory; the
# sandboxes it starts are capped apart, by --memory-mb). Grading every lesson of
# examples/submissions/ada_complete, the worker's resident memory peaked at 250 MB here;
# 2 GiB is eight times that, and leaves the rest of a machine's memory to the sandboxes.
# On a machine with less than 2 GiB for each worker, each gets its share, down to 1 GiB.
WORKER_MEMORY = 2 * 2**30
MIN_WORKER_MEMORY = 2**30
# At the limit the nanny ends the worker (Dask's "terminate" fraction, 95%) and starts a
# new one; the scheduler gives the notebook to a worker once more, and reports it as not
# graded after a second death. The worker itself neither spills nor pauses: its tasks
# keep no data worth spilling (a notebook's result is a few kB), and a paused worker
# whose memory stays high (Python keeps what it freed) would stop grading for good.
MEMORY_SETTINGS = {"distributed.worker.memory.target": False,
                   "distributed.worker.memory.spill": False,
                   "distributed.worker.memory.pause": False,
                   "distributed.worker.memory.terminate": 0.95}


class ClusterError(Exception):
    """The class cannot be graded on this cluster; the message says why, in one line."""


def _quiet_dask():
    """Worker deaths are the grader's to report, in its own words, not Dask's warnings."""
    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


@contextlib.contextmanager
def grading_cluster(workers=1, scheduler=None, isolate=True, note=print,
                    cpu_weight=DEFAULT_CPU_WEIGHT):
    """A connected :class:`distributed.Client`; ``note(line)`` tells about the cluster.
    A LocalCluster runs in a cgroup of its own weighing ``cpu_weight`` ordinary processes
    (:mod:`grader.class_run.class_cpu_share`), where the machine allows it."""
    _quiet_dask()
    settings = {"distributed.scheduler.allowed-failures": RETRIES,
                "logging.distributed": "critical", **MEMORY_SETTINGS}
    if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin":
        # forked workers start with the grader already imported: a LocalCluster of two
        # started in 0.7 s and closed in 0.1 s here, against 12.8 s and 4.1 s spawned
        settings["distributed.worker.multiprocessing-method"] = "fork"
    with dask.config.set(settings):
        if scheduler is None:
            with class_cpu_group(cpu_weight) as share, \
                    LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                 memory_limit=worker_memory_limit(workers),
                                 dashboard_address=":0") as cluster, \
                    Client(cluster) as client:
                client.register_plugin(DieWithGrader(os.getpid()), name="die-with-grader")
                check_workers(client, isolate)
                if share is None:
                    note("grader: no cgroup for the class (the cpu controller is not "
                         "writable here): on a busy machine it gets an ordinary process's "
                         "share of the CPU, and takes longer (grades do not change)")
                yield client
            return
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError, ValueError) as error:
            raise ClusterError(f"--scheduler {scheduler}: cannot reach a Dask scheduler "
                               f"there ({error})") from None
        with client:
            try:
                client.wait_for_workers(1, timeout=WORKER_WAIT)
            except TimeoutError:
                raise ClusterError(f"--scheduler {scheduler}: no worker joined within "
                                   f"{WORKER_WAIT} s (start some with: dask worker "
                                   f"{scheduler} --nthreads 1)") from None
            check_workers(client, isolate)
            retries = client.run_on_scheduler(_allowed_failures)
            if retries != RETRIES:
                note(f"grader: this scheduler retries a notebook whose worker died {retries} "
                     f"time(s), not {RETRIES} (start it with "
                     "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1)")
            yield client


def worker_memory_limit(workers):
    """Bytes of memory each of ``workers`` local workers may use (see WORKER_MEMORY)."""
    return max(MIN_WORKER_MEMORY, min(WORKER_MEMORY, MEMORY_LIMIT // max(1, workers)))


PR_SET_PDEATHSIG = 1  # linux/prctl.h


class DieWithGrader(WorkerPlugin):
    """A local worker process ignores Ctrl-C, left to the grader, and is killed by the
    kernel the moment the grader that forked it dies (even by SIGKILL), so that it cannot
    grade on for nobody; workers the cluster restarts get the same. Dask's own watch on the parent is a thread that a loaded machine
    may not run in time."""

    def __init__(self, grader_pid):
        self.grader_pid = grader_pid

    def setup(self, worker):
        # Ctrl-C in the instructor's terminal reaches every process of its foreground
        # group: the grader ends the cluster and says so in one line, where each worker
        # would print a traceback of its own
        with contextlib.suppress(ValueError):  # only a process's main thread may set it
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        if not sys.platform.startswith("linux"):
            return
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != self.grader_pid:  # the grader died before the line above
            os.kill(os.getpid(), signal.SIGKILL)


def _allowed_failures(dask_scheduler=None):
    return dask_scheduler.allowed_failures


def check_workers(client, isolate=True):
    """Refuse workers that run several tasks at once, another version of the course, or
    that cannot wall submissions in as this grader does (namespaces or none)."""
    threads = client.nthreads()
    crowded = sorted(address for address, count in threads.items() if count != 1)
    if crowded:
        raise ClusterError(f"worker(s) {', '.join(crowded)} run several tasks at once; "
                           "grading needs one per process (dask worker --nthreads 1 "
                           "--nworkers N)")
    ours = course_version()
    theirs = client.run(course_version)
    other = sorted(address for address, version in theirs.items() if version != ours)
    if other:
        raise ClusterError(f"worker(s) {', '.join(other)} import another version of the "
                           f"course than this grader ({ours}): start them from the same "
                           "checkout")
    wall = isolation_level(isolate)
    walls = client.run(isolation_level, isolate)
    other = sorted(address for address, level in walls.items() if level != wall)
    if other:
        raise ClusterError(f"worker(s) {', '.join(other)} cannot grade with the isolation "
                           f"this grader uses ({wall}): grade there with the same "
                           "--no-sandbox setting, or on machines alike")


def worker_threads(client):
    """How many tasks the cluster runs at once now (workers may come and go)."""
    return max(1, sum(client.nthreads().values()))
