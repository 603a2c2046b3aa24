"""``python -m grader similarity``: the copied pair first, stubs and short answers never a
match, the released solution flagged, nothing written but the page, one-line errors.

The class answers lesson 02's three buffer cells: ana wrote her own answers and ben
copied them, renaming her variables and swapping lines that do not depend on each other;
three students wrote answers of their own, each a different way to build the buffer; sol
handed in the released solution; una left every cell as given.
"""

import hashlib
import io
import json
import random
import re
import sys
from pathlib import Path

import nbformat
import pytest

from grader.class_run.result_store import ResultStore
from grader.class_run.submissions import NotebookJob
from grader.cli import main
from grader.results import NotebookResult
from grader.lessons import answer_stubs, solution_answers
from grader.outputs.similarity import (MIN_FINGERPRINTS, StudentAnswers, answers_of,
                                       compare, notebooks_to_compare)
from submission_factory import submission

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from browser import PHONE, accessibility_violations, headless_chromium  # noqa: E402

LESSON = "02_replay_buffer"
SEED = 24
STUB_BODY = "    # YOUR CODE HERE\n    raise NotImplementedError()"
HOSTILE = "eve<img src=x>"  # a folder name is the student's name on the page

# Each way of writing the buffer: the body of __init__ and __len__, of add, of sample.
ANA = ('''\
    def __init__(self, size, seed=None):
        if size < 1:
            raise ValueError("the size must be positive")
        self.size = size
        self.items = []
        self.next_slot = 0
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        """The number of transitions stored now (never more than ``size``)."""
        return len(self.items)
''', '''\
    self.items.append((np.array(obs_t), np.array(action), np.array(reward),
                       np.array(obs_tp1), np.array(done)))
    if len(self.items) > self.size:
        del self.items[0]''', '''\
    if batch_size <= 0 or not self.items:
        raise ValueError("nothing to sample")
    picks = self.rng.choice(len(self.items), batch_size, replace=True)
    obs, acts, rews, nexts, dones = [], [], [], [], []
    for i in picks:
        o, a, r, n, d = self.items[i]
        obs.append(o)
        acts.append(a)
        rews.append(r)
        nexts.append(n)
        dones.append(d)
    return np.array(obs), np.array(acts), np.array(rews), np.array(nexts), np.array(dones)''')
# names ana chose, and what ben may call them instead
RENAMES = {"items": ["storage", "memory", "transitions"], "picks": ["chosen", "which"],
           "next_slot": ["cursor", "position"], "acts": ["actions"], "rews": ["rewards"],
           "nexts": ["next_states"], "dones": ["terminals"]}
# lines of ana's that can trade places without changing what the code does
INDEPENDENT = [("        self.next_slot = 0", "        self.rng = np.random.default_rng(seed)"),
               ("        acts.append(a)", "        rews.append(r)"),
               ("        nexts.append(n)", "        dones.append(d)")]

OWN = [('''\
    def __init__(self, size, seed=None):
        assert size > 0, "size"
        self.capacity = int(size)
        self.memory = deque(maxlen=self.capacity)
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        """The number of transitions stored now (never more than ``size``)."""
        count = 0
        for _ in self.memory:
            count += 1
        return count
''', '''\
    transition = (obs_t, action, reward, obs_tp1, done)
    copied = tuple(np.copy(part) for part in transition)
    self.memory.append(copied)''', '''\
    if batch_size < 1:
        raise ValueError(f"bad batch size {batch_size}")
    if len(self.memory) == 0:
        raise ValueError("empty buffer")
    chosen = [self.memory[int(self.rng.integers(len(self.memory)))] for _ in range(batch_size)]
    columns = list(zip(*chosen))
    return tuple(np.array(column) for column in columns)'''), ('''\
    def __init__(self, size, seed=None):
        self.max_items = size
        self.data = [None] * size
        self.pointer = 0
        self.full = False
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        """The number of transitions stored now (never more than ``size``)."""
        return self.max_items if self.full else self.pointer
''', '''\
    self.data[self.pointer] = [np.asarray(x).copy() for x in (obs_t, action, reward, obs_tp1,
                                                              done)]
    self.pointer = (self.pointer + 1) % self.max_items
    if self.pointer == 0:
        self.full = True''', '''\
    n = len(self)
    if n == 0 or batch_size <= 0:
        raise ValueError("cannot sample")
    idx = self.rng.integers(0, n, size=batch_size)
    out = []
    for field in range(5):
        out.append(np.stack([self.data[j][field] for j in idx]))
    return tuple(out)'''), ('''\
    def __init__(self, size, seed=None):
        if not isinstance(size, int) or size <= 0:
            raise ValueError(f"size should be a positive int, not {size!r}")
        self.limit = size
        self.buffer = []
        self.generator = np.random.default_rng(seed)

    def __len__(self):
        """The number of transitions stored now (never more than ``size``)."""
        return min(len(self.buffer), self.limit)
''', '''\
    record = tuple(np.array(value, copy=True) for value in [obs_t, action, reward, obs_tp1, done])
    if len(self.buffer) >= self.limit:
        self.buffer.pop(0)
    self.buffer.append(record)''', '''\
    if batch_size <= 0:
        raise ValueError("batch_size must be positive")
    if len(self.buffer) == 0:
        raise ValueError("the buffer is empty")
    positions = self.generator.integers(low=0, high=len(self.buffer), size=batch_size)
    rows = [self.buffer[p] for p in positions]
    return tuple(np.array([row[k] for row in rows]) for k in range(5))''')]


def answer_cells(bodies):
    """Lesson 02's cells with ``bodies`` (class, add, sample) put in their stubs."""
    stubs = answer_stubs(LESSON)
    class_body = stubs["buffer_class"].index("    def __init__")
    return {"buffer_class": stubs["buffer_class"][:class_body] + bodies[0],
            "buffer_add": stubs["buffer_add"].replace(STUB_BODY, bodies[1]),
            "buffer_sample": stubs["buffer_sample"].replace(STUB_BODY, bodies[2])}


def copied(cells, rng):
    """``cells`` as a student who copies them hands them in: every name of RENAMES
    changed (the same way in every cell), and some INDEPENDENT lines swapped."""
    renames = {old: rng.choice(new) for old, new in RENAMES.items()}
    swaps = [pair for pair in INDEPENDENT if rng.random() < 0.8] or INDEPENDENT[:1]
    result = {}
    for grade_id, code in cells.items():
        for first, second in swaps:
            code = code.replace(f"{first}\n{second}\n", f"{second}\n{first}\n")
        result[grade_id] = re.sub(r"\b(" + "|".join(renames) + r")\b",
                                  lambda found: renames[found.group(1)], code)
    return result


def class_answers():
    """``{student: {grade_id: source}}`` of the class, made with the test's seed."""
    rng = random.Random(SEED)
    ana = answer_cells(ANA)
    own = [answer_cells(bodies) for bodies in OWN]
    rng.shuffle(own)  # who wrote which of the other ways
    stubs = answer_stubs(LESSON)
    return {"ana": ana, "ben": copied(ana, rng), "cat": own[0], "dan": own[1], HOSTILE: own[2],
            "sol": {grade_id: text for grade_id, text in solution_answers(LESSON).items()
                    if grade_id in stubs},
            "una": {}}


def write_class(folder):
    """One notebook of lesson 02 per student, as the grader finds them in a class folder."""
    stubs = answer_stubs(LESSON)
    for student, cells in class_answers().items():
        path = Path(folder) / student / f"{LESSON}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(submission(LESSON, {**stubs, **cells}), path)
    return Path(folder)


def tree_state(folder):
    """Every file under ``folder`` with its bytes' hash and time of change."""
    return {str(path.relative_to(folder)): (hashlib.sha256(path.read_bytes()).hexdigest(),
                                            path.stat().st_mtime_ns)
            for path in sorted(Path(folder).rglob("*")) if path.is_file()}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    return write_class(tmp_path_factory.mktemp("similarity") / "class")


@pytest.fixture(scope="module")
def compared(classroom):
    jobs, notes = notebooks_to_compare(classroom)
    answers, unread = answers_of(jobs)
    assert notes == [] and unread == []
    return compare(answers)


def pair_of(match):
    return {match.first, match.second}


# --- the scores --------------------------------------------------------------------------

def test_the_renamed_and_reordered_copy_scores_far_above_answers_written_apart(compared):
    pairs = compared.by_lesson[LESSON]
    assert pair_of(pairs[0]) == {"ana", "ben"}
    assert pairs[0].score >= 0.8, pairs[0].score
    # answers written apart, the released solution among them, share a few idioms at most
    assert all(match.score <= 0.5 for match in pairs[1:]), [
        (match.first, match.second, round(match.score, 2)) for match in pairs[1:]]
    assert pair_of(compared.overall[0]) == {"ana", "ben"}
    assert [cell.grade_id for cell in pairs[0].cells] == ["buffer_class", "buffer_add",
                                                         "buffer_sample"]
    assert pairs[0].not_compared == ["play_and_train_with_replay"]  # nobody answered it


def test_the_copied_lines_are_marked_on_both_sides(compared):
    add = next(cell for cell in compared.by_lesson[LESSON][0].cells
               if cell.grade_id == "buffer_add")
    for side in (add.first, add.second):
        marked = "".join(text for text, copied in side if copied)
        assert "del self." in marked and "np.array(obs_tp1)" in marked
        unmarked = "".join(text for text, copied in side if not copied)
        assert "def add(self, obs_t" in unmarked  # the stub's lines are never marked


def test_a_student_equal_to_the_solution_is_flagged_and_no_one_else(compared):
    assert [(m.first, m.lesson) for m in compared.solution_matches] == [("sol", LESSON)]
    assert compared.solution_matches[0].score == 1.0
    assert compared.solution_matches[0].second is None  # the other side is the solution


def test_stub_code_alone_gives_no_match(compared):
    assert compared.unanswered[LESSON] == ["una"]
    assert all("una" not in pair_of(match) for match in compared.by_lesson[LESSON])


def test_unanswered_and_short_answers_never_match_each_other():
    stubs = answer_stubs(LESSON)
    passed = {grade_id: stub.replace("raise NotImplementedError()", "pass")
              for grade_id, stub in stubs.items()}
    short = {"buffer_add": stubs["buffer_add"].replace(
        STUB_BODY, "    self.items.append(tuple(np.array(x) for x in (obs_t, action)))")}
    answers = [StudentAnswers("una", LESSON, dict(stubs)), StudentAnswers("uma", LESSON, {}),
               StudentAnswers("pia", LESSON, passed), StudentAnswers("pam", LESSON, passed),
               StudentAnswers("sid", LESSON, short), StudentAnswers("sam", LESSON, short)]
    result = compare(answers)
    assert result.by_lesson[LESSON] == [] and result.overall == []
    assert result.solution_matches == []
    assert result.unanswered[LESSON] == ["pam", "pia", "sam", "sid", "uma", "una"]
    # the same one line in two notebooks is too short to count; a few lines more count
    longer = {"buffer_add": short["buffer_add"] + "\n    if len(self.items) > self.size:"
              "\n        del self.items[0]\n    self.count = min(self.count + 1, self.size)"}
    answers += [StudentAnswers("lea", LESSON, longer), StudentAnswers("lou", LESSON, longer)]
    result = compare(answers)
    assert [pair_of(match) for match in result.by_lesson[LESSON]] == [{"lea", "lou"}]
    assert MIN_FINGERPRINTS <= result.by_lesson[LESSON][0].shared


def test_solution_copiers_are_listed_apart_and_never_bury_a_copy_between_students():
    """Twelve students hand in the released solution, each renamed and reordered its own
    way: paired, they share only the solution, so no pair of them is listed above (or at
    all beside) ana and her renamed copy; each is listed against the solution instead."""
    rng = random.Random(SEED + 1)
    cells = class_answers()
    solution = cells["sol"]
    answers = [StudentAnswers(f"copier{number:02d}", LESSON, copied(solution, rng))
               for number in range(12)]
    answers += [StudentAnswers(name, LESSON, cells[name]) for name in ("ana", "ben", "cat")]
    result = compare(answers, top=5)
    pairs = result.by_lesson[LESSON]
    assert pair_of(pairs[0]) == {"ana", "ben"} and pairs[0].score >= 0.8
    assert all(not {match.first, match.second} <= {a.student for a in answers[:12]}
               for match in pairs + result.overall)
    assert sorted(match.first for match in result.solution_matches) == \
        [f"copier{number:02d}" for number in range(12)]


def test_the_stubs_fingerprints_are_dropped_and_only_they():
    """copydetect drops the boilerplate given (a line the stub holds, repeated by the
    student, included) and keeps every other fingerprint, repeated ones too."""
    import copydetect

    from grader.outputs.similarity import K, WINDOW, Fingerprinter

    stub = answer_stubs(LESSON)["buffer_add"]
    answer = answer_cells(ANA)["buffer_add"] + "\n    del self.items[0]\n    \"\"\"Copies.\"\"\""
    whole = copydetect.CodeFingerprint("x", K, WINDOW, fp=io.StringIO(answer),
                                       language="python").hashes
    given = copydetect.CodeFingerprint("x", K, WINDOW, fp=io.StringIO(stub),
                                       language="python").hashes
    own = Fingerprinter().hashes(answer, stub)
    assert set(own.tolist()) == whole - given and len(own) >= MIN_FINGERPRINTS
    assert len(Fingerprinter().hashes(stub, stub)) == 0


def test_the_scores_do_not_depend_on_the_order_answers_come_in(classroom, compared):
    jobs, _ = notebooks_to_compare(classroom)
    answers, _ = answers_of(list(reversed(jobs)))
    again = compare(answers)
    assert [(m.first, m.second, m.shared, m.smaller) for m in again.by_lesson[LESSON]] == \
        [(m.first, m.second, m.shared, m.smaller) for m in compared.by_lesson[LESSON]]


# --- the command and its page ------------------------------------------------------------

@pytest.fixture(scope="module")
def page(classroom, tmp_path_factory):
    out = tmp_path_factory.mktemp("page") / "similar.html"
    before = tree_state(classroom)
    assert main(["similarity", str(classroom), "--html", str(out), "--top", "5"]) == 0
    assert tree_state(classroom) == before  # the command changes nothing it reads
    assert sorted(path.name for path in out.parent.iterdir()) == ["similar.html"]
    return out


@pytest.mark.xdist_group("browser")
def test_the_page_passes_axe_cores_wcag_2_1_aa_rules(page):
    with headless_chromium() as driver:
        driver.get(page.resolve().as_uri())
        assert accessibility_violations(driver) == []


def first_row(driver, section):
    cells = driver.find_elements("css selector", f"section[id='{section}'] table.pairs "
                                                 "tbody tr:first-child td")
    return cells[2].text, cells[3].text


@pytest.mark.xdist_group("browser")
def test_the_copied_pair_comes_first_on_the_page_in_a_browser(page):
    with headless_chromium() as driver:
        driver.get(page.resolve().as_uri())
        assert set(first_row(driver, LESSON)) == {"ana", "ben"}
        assert set(first_row(driver, "overall")) == {"ana", "ben"}
        notice = driver.find_element("css selector", ".notice").text
        assert notice.startswith("This page changes no grade.")
        flagged = driver.find_elements("css selector", "section#solution table tbody td.first")
        assert [cell.text for cell in flagged] == ["sol"]
        first_pair = driver.find_element("css selector", f"article[id='{LESSON}-1']")
        marks = first_pair.find_elements("tag name", "mark")
        assert marks and all(mark.is_displayed() for mark in marks)
        sides = first_pair.find_elements("css selector", ".side h5")
        assert {side.text for side in sides[:2]} == {"ana", "ben"}
        assert HOSTILE in driver.find_element("tag name", "body").text  # shown as text
        assert driver.find_elements("css selector", "img, script") == []
        assert [entry for entry in driver.get_log("browser")
                if entry["level"] == "SEVERE"] == []
        driver.set_window_size(*PHONE)  # cells stack; long lines scroll inside their box
        assert driver.execute_script(
            "const page = document.documentElement; return page.scrollWidth - page.clientWidth"
        ) <= 0
    text = page.read_text()
    assert "eve&lt;img src=x&gt;" in text and "<img" not in text


def test_the_command_prints_what_it_compared_and_how_long_it_took(classroom, tmp_path,
                                                                 capsys):
    out = tmp_path / "page.html"
    assert main(["similarity", str(classroom), "--html", str(out), "--lessons", "02"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"compared 7 notebook\(s\) of 7 student\(s\) in 1 lesson\(s\) "
                     r"\(02_replay_buffer\): 21 pair\(s\) .* in [0-9.]+ s \([0-9.]+ s of CPU\)",
                     printed), printed
    assert "most similar pair: ana and ben" in printed
    assert "1 notebook(s) match the released solution: sol (02_replay_buffer, 100%)" in printed
    assert "it changes no grade" in printed


def test_a_results_folder_gives_the_latest_graded_notebook_per_student(classroom, tmp_path,
                                                                       capsys):
    """A results folder of ``grade --out``: each line names its notebook; ben's first
    notebook was the stub, and the one graded last is his copy."""
    from grader.judge.submission_file import notebook_hash

    jobs, _ = notebooks_to_compare(classroom)
    early = tmp_path / "early" / f"{LESSON}.ipynb"
    early.parent.mkdir()
    nbformat.write(submission(LESSON, answer_stubs(LESSON)), early)
    out = tmp_path / "results"
    store = ResultStore(out)
    store.save(store.entry_for(NotebookJob("ben", early, LESSON), notebook_hash(early), "s",
                               "v", {}), NotebookResult(LESSON))
    for job in jobs:
        store.save(store.entry_for(job, notebook_hash(job.path), "s", "v", {}),
                   NotebookResult(LESSON))
    store.close()
    lines = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert all(Path(line["path"]).is_absolute() for line in lines)
    before, class_before = tree_state(out), tree_state(classroom)
    page = tmp_path / "page.html"
    assert main(["similarity", str(out), "--html", str(page)]) == 0
    assert "most similar pair: ana and ben" in capsys.readouterr().out
    assert tree_state(out) == before and tree_state(classroom) == class_before


@pytest.mark.parametrize("arguments, expected", [
    (["missing-class", "--html", "{tmp}/p.html"], "no such file or folder: missing-class"),
    (["{tmp}/report.json", "--html", "{tmp}/p.html"],
     "a report of grade --json holds scores, not answers: pass the class folder, or the "
     "folder given to grade --out"),
    (["{class}", "--html", "{tmp}/no-folder/p.html"], "--html"),
    (["{class}", "--html", "{tmp}/p.html", "--top", "0"], "--top 0: show at least 1 pair"),
    (["{class}", "--html", "{tmp}/p.html", "--lessons", "09"], "--lessons: no lesson '09'"),
    (["{class}", "--html", "{tmp}/p.html", "--lessons", ","], "--lessons names no lesson"),
    (["{class}", "--html", "{tmp}/p.html", "--lessons", "01"],
     "nothing to compare: no readable notebook of --lessons 01_qlearning"),
    (["{tmp}/old-results", "--html", "{tmp}/p.html"],
     "were stored before the grader recorded where each notebook was: pass the class "
     "folder instead"),
    (["{tmp}/empty", "--html", "{tmp}/p.html"], "no notebooks found under"),
])
def test_bad_input_gets_one_line_and_exit_2(classroom, tmp_path, capsys, arguments,
                                            expected):
    (tmp_path / "report.json").write_text(json.dumps({"lessons": {}, "submissions": []}))
    (tmp_path / "empty").mkdir()
    (tmp_path / "old-results").mkdir()  # a manifest line written before paths were kept
    (tmp_path / "old-results" / "manifest.jsonl").write_text(json.dumps(
        {"key": "k", "student": "ana", "lesson": LESSON, "notebook_sha256": "h"}) + "\n")
    filled = [part.format(tmp=tmp_path, **{"class": classroom}) for part in arguments]
    assert main(["similarity", *filled]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("grader: "), captured.err
    assert expected in lines[0], lines[0]
    assert not (tmp_path / "p.html").exists()
