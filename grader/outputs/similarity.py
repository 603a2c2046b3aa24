"""Similarity of students' answers: which pairs wrote the same code, and who handed in
the released solution.

Only the answer cells are compared (nbgrader solution code cells, by ``grade_id``): the
rest of a notebook is the course's. Each answer cell is tokenised and fingerprinted by
``copydetect``: names become ``V`` (functions ``F``, classes ``O``), strings ``S``,
comments and white space go, so renamed variables and reformatting do not hide a copy;
a fingerprint is a hash of ``K`` consecutive characters of that text (about a line of
code). The fingerprints of the cell's released stub (its signature, docstring, imports,
``raise NotImplementedError()``) are given to copydetect as boilerplate and dropped:
code every student was given never counts. An answer cell with fewer than
``MIN_FINGERPRINTS`` fingerprints of its own (unanswered, ``pass``, a one-line
``return``) is not compared at all: short answers written independently look alike.

Cell by cell, not concatenated: each cell answers one question and has its own stub to
strip; a fingerprint counts only when both students wrote it in the same cell (an idiom
shared across a lesson's functions is not a copy); and the page can set the two
students' cells side by side. A lesson's score pools its cells, so a long answer weighs
more than a short one: over the cells both students answered,

    score = shared fingerprints / fingerprints of the smaller answer, cell by cell summed

that is, the share of the shorter code that is found in the other's. In the tests and
``benchmarks/similarity.py``, copies with renamed variables and lines swapped score 0.7
to 0.9, answers written apart 0.4 at most. The pooled score of all lessons ("overall")
sums the same counts over lessons. Two students are scored on what they share beyond
the released solution: its fingerprints, like the stub's, are dropped from both sides,
since a public self-study edition exists and students who each handed it in copied it,
not each other (before, such pairs filled the top of the page and buried a renamed copy
between two students). Each student is also scored against the solution on everything;
one whose score is ``SOLUTION_MATCH`` or more is listed apart, as matching it.

Every pair is scored at once from the fingerprints' hash sets: per cell, a sparse
student-by-fingerprint matrix ``M`` gives every pair's shared count as ``M @ M.T`` (for
500 students, under a second for the whole course, where ``compare_files`` on every pair
and cell would take minutes; tokenising the answers costs the rest). Only the pairs shown
on the page go through ``copydetect.compare_files``, for the copied slices to mark. The
report changes no grade: it names places for a person to look.
"""

import io
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

K = 20  # characters of tokenised code a fingerprint spans: about one line
# every k-gram is kept (no winnowing): answers are short, and winnowing picks the minima
# of Python's string hashes, which change with each process, so scores would too
WINDOW = 1
MIN_FINGERPRINTS = 40  # an answer cell's own fingerprints below which it says too little
SOLUTION_MATCH = 0.8  # score against the released solution from which a student is flagged
DEFAULT_TOP = 10  # pairs shown per lesson and overall


@dataclass(frozen=True)
class StudentAnswers:
    """One student's answer cells of one lesson, as handed in."""

    student: str
    lesson: str
    cells: dict  # grade_id -> source


@dataclass(frozen=True)
class CellMatch:
    """One answer cell of a pair, both sides cut into (text, copied) segments."""

    lesson: str
    grade_id: str
    shared: int
    smaller: int
    first: tuple  # ((text, copied), ...): the first student's cell
    second: tuple  # the second student's cell, or the released solution's

    @property
    def score(self):
        return self.shared / self.smaller if self.smaller else 0.0


@dataclass
class Match:
    """Two students' answers (``second`` None: one student's against the released
    solution) in one lesson, or in all of them pooled (``lesson`` None)."""

    first: str
    second: str | None
    lesson: str | None
    shared: int
    smaller: int
    by_lesson: dict = field(default_factory=dict)  # lesson -> score, for a pooled match
    cells: list = field(default_factory=list)  # CellMatch, the cells both answered
    # cells not compared: left unanswered or too short by one side or both
    not_compared: list = field(default_factory=list)
    # lessons in which both students match the released solution: they may have copied
    # it rather than each other
    both_match_solution: list = field(default_factory=list)

    @property
    def score(self):
        return self.shared / self.smaller if self.smaller else 0.0


@dataclass
class Similarity:
    """What was compared and what came of it."""

    lessons: list  # lessons compared, in course order
    students: list  # every student with answers, sorted
    notebooks: int  # (student, lesson) answer sets compared
    pairs: int  # pairs of students scored, summed over lessons
    by_lesson: dict  # lesson -> [Match], most similar first
    overall: list  # [Match] pooled over lessons, most similar first
    solution_matches: list  # [Match] flagged as the released solution, highest first
    unanswered: dict  # lesson -> students none of whose cells were long enough to compare
    top: int = DEFAULT_TOP


@lru_cache(maxsize=None)
def answer_cell_ids(lesson):
    """The lesson's answer code cells' ``grade_id``s, in the notebook's order."""
    from grader.nbgrader_cells import is_answer, nbgrader_meta
    from grader.lessons import all_lessons

    return tuple(nbgrader_meta(cell)["grade_id"]
                 for cell in all_lessons()[lesson].source().cells if is_answer(cell))


class Fingerprinter:
    """copydetect's fingerprints of answer cells, the stub's fingerprints dropped; each
    distinct text is fingerprinted once (every unanswered cell is the same stub)."""

    def __init__(self):
        self._boilerplate = {}
        self._hashes = {}
        self._fingerprints = {}

    def boilerplate(self, stub, solution=""):
        """The fingerprints dropped: the stub's, and with ``solution`` the released
        solution's too (what two students share of it is no sign of a copy between them)."""
        key = (stub, solution)
        if key not in self._boilerplate:
            hashes = list(self._fingerprint(stub, np.array([], dtype=np.int64)).hashes)
            if solution:
                hashes += list(self.own_hashes(solution, stub))
            self._boilerplate[key] = np.unique(np.array(hashes, dtype=np.int64))
        return self._boilerplate[key]

    def fingerprint(self, code, stub, solution=""):
        """The ``copydetect.CodeFingerprint`` of ``code`` without ``stub``'s (and without
        ``solution``'s, when given)."""
        key = (code, stub, solution)
        if key not in self._fingerprints:
            self._fingerprints[key] = self._fingerprint(code,
                                                        self.boilerplate(stub, solution))
        return self._fingerprints[key]

    def own_hashes(self, code, stub):
        """``code``'s fingerprints beyond the stub's, as a sorted array, however few."""
        if not code or not code.strip():
            return np.array([], dtype=np.int64)
        key = (code, stub)
        if key not in self._hashes:
            own = self._fingerprint(code, self.boilerplate(stub)).hashes
            self._hashes[key] = np.unique(np.array(list(own), dtype=np.int64))
        return self._hashes[key]

    def hashes(self, code, stub, solution=""):
        """``code``'s own fingerprints (beyond the stub's, and beyond ``solution``'s when
        given) as a sorted array: empty when fewer than ``MIN_FINGERPRINTS`` (nothing, or
        too little, of its own)."""
        own = self.own_hashes(code, stub)
        if solution and len(own):
            own = np.setdiff1d(own, self.own_hashes(solution, stub), assume_unique=True)
        return own if len(own) >= MIN_FINGERPRINTS else np.array([], dtype=np.int64)

    def forget_hashes(self):
        """Drop the hash sets kept so far (a lesson done), keeping the stubs'."""
        self._hashes.clear()

    @staticmethod
    def _fingerprint(code, boilerplate):
        import copydetect

        return copydetect.CodeFingerprint("answer", K, WINDOW, boilerplate=boilerplate,
                                          fp=io.StringIO(code), language="python")


def shared_counts(hash_sets):
    """``(shared, smaller)``: for every two rows of ``hash_sets`` (arrays of distinct
    fingerprints, one per answer, empty for one not compared), how many fingerprints
    they share, and the count of the smaller of the two (0 where either is empty)."""
    from scipy.sparse import csr_matrix

    n = len(hash_sets)
    sizes = np.array([len(hashes) for hashes in hash_sets], dtype=np.int64)
    answered = sizes > 0
    smaller = np.where(answered[:, None] & answered[None, :], np.minimum.outer(sizes, sizes), 0)
    if not answered.any():
        return np.zeros((n, n), dtype=np.int64), smaller
    every = np.concatenate(hash_sets)
    _, columns = np.unique(every, return_inverse=True)
    rows = np.repeat(np.arange(n), sizes)
    holds = csr_matrix((np.ones(len(every), dtype=np.int32), (rows, columns.ravel())),
                       shape=(n, columns.max() + 1))
    shared = (holds @ holds.T).toarray().astype(np.int64)
    return shared, smaller


def ranked_pairs(shared, smaller, top):
    """The ``top`` pairs ``(i, j)``, ``i < j``, with something shared, highest score
    first (then most shared, then by index: the order never depends on chance)."""
    first, second = np.triu_indices(len(shared), 1)
    together, least = shared[first, second], smaller[first, second]
    keep = (together > 0) & (least > 0)
    first, second, together, least = first[keep], second[keep], together[keep], least[keep]
    score = together / least
    order = np.lexsort((second, first, -together, -score))[:top]
    return [(int(first[k]), int(second[k])) for k in order]


def copied_segments(code, slices, stub=""):
    """``code`` cut into ``(text, copied)`` pieces, a line at a time: a line is copied
    when at least half of its visible characters lie in copydetect's ``slices`` (starts
    and ends of shared code, possibly overlapping or past the end), unless the ``stub``
    holds the same line. Whole lines read better than k-grams, which start mid-token
    where the student's code meets the stub's."""
    inside = np.zeros(len(code) + 1, dtype=np.int64)  # +1 at a start, -1 at an end
    for start, end in zip(*(np.asarray(part, dtype=np.int64).ravel() for part in slices)):
        start, end = max(0, int(start)), min(len(code), int(end))
        if end > start:
            inside[start] += 1
            inside[end] -= 1
    covered = np.cumsum(inside)[:len(code)] > 0
    given = {line.strip() for line in stub.splitlines() if line.strip()}
    pieces, at = [], 0
    for line in code.splitlines(keepends=True):
        visible = [at + offset for offset, char in enumerate(line) if not char.isspace()]
        copied = (bool(visible) and line.strip() not in given
                  and 2 * int(covered[visible].sum()) >= len(visible))
        if pieces and pieces[-1][1] == copied:
            pieces[-1] = (pieces[-1][0] + line, copied)
        else:
            pieces.append((line, copied))
        at += len(line)
    return tuple(pieces) or (("", False),)


class LessonComparison:
    """Every pair of one lesson's answer sets scored, the released solution among them:
    ``shared`` and ``smaller`` have a row per answer set, row 0 the solution's. Two
    students are scored on what they share beyond the released solution (it is public:
    students who each handed it in have copied it, not each other, and are listed apart);
    a student against the solution, on everything."""

    def __init__(self, lesson, answers, fingerprinter):
        from grader.lessons import answer_stubs, solution_answers

        self.lesson = lesson
        self.answers = sorted(answers, key=lambda answer: answer.student)
        self.row_of = {answer.student: row for row, answer in enumerate(self.answers, 1)}
        self.cell_ids = answer_cell_ids(lesson)
        self.stubs = answer_stubs(lesson)
        self.solution = solution_answers(lesson)
        self.fingerprinter = fingerprinter
        rows = [self.solution] + [answer.cells for answer in self.answers]
        n = len(rows)
        self.shared = np.zeros((n, n), dtype=np.int64)
        self.smaller = np.zeros((n, n), dtype=np.int64)
        self.compared = np.zeros(n, dtype=bool)  # any cell long enough to compare
        for grade_id in self.cell_ids:
            stub, solution = self.stubs[grade_id], self.solution.get(grade_id, "")
            whole = [fingerprinter.hashes(row.get(grade_id, ""), stub) for row in rows]
            shared, smaller = shared_counts(whole)  # row 0 against the others
            self.shared[0, :] += shared[0, :]
            self.shared[:, 0] += shared[:, 0]
            self.smaller[0, :] += smaller[0, :]
            self.smaller[:, 0] += smaller[:, 0]
            beyond = [fingerprinter.hashes(row.get(grade_id, ""), stub, solution)
                      for row in rows[1:]]
            shared, smaller = shared_counts(beyond)  # student against student
            self.shared[1:, 1:] += shared
            self.smaller[1:, 1:] += smaller
            self.compared |= np.array([len(hashes) > 0 for hashes in whole])

    @property
    def unanswered(self):
        """Students none of whose cells were long enough to compare."""
        return [answer.student for answer in self.answers
                if not self.compared[self.row_of[answer.student]]]

    def top_matches(self, top):
        """The ``top`` pairs of students, most similar first, their cells compared."""
        return [self.match(i + 1, j + 1)
                for i, j in ranked_pairs(self.shared[1:, 1:], self.smaller[1:, 1:], top)]

    def solution_matches(self):
        """The students whose score against the released solution is SOLUTION_MATCH or
        more, their cells compared with the solution's."""
        return [self.match(row, 0) for row in range(1, len(self.shared))
                if self.smaller[row, 0]
                and self.shared[row, 0] / self.smaller[row, 0] >= SOLUTION_MATCH]

    def counts(self, first, second):
        """``(shared, smaller)`` of two students (rows of theirs, or None: no answers)."""
        i, j = self.row_of.get(first), self.row_of.get(second)
        if i is None or j is None:
            return 0, 0
        return int(self.shared[i, j]), int(self.smaller[i, j])

    def match(self, i, j):
        """The :class:`Match` of rows ``i`` and ``j`` (``j`` 0: the solution), its
        cells compared by ``copydetect.compare_files`` for the copied slices."""
        first = self.answers[i - 1]
        second = None if j == 0 else self.answers[j - 1]
        match = Match(first.student, second and second.student, self.lesson,
                      int(self.shared[i, j]), int(self.smaller[i, j]))
        match.cells, match.not_compared = self.cells_of(
            first.cells, self.solution if second is None else second.cells,
            beyond_solution=second is not None)
        return match

    def cells_of(self, first, second, beyond_solution=True):
        """The cells both sides answered, with their copied segments (beyond the released
        solution's, unless ``beyond_solution`` is False); and the others."""
        import copydetect

        cells, not_compared = [], []
        for grade_id in self.cell_ids:
            stub = self.stubs[grade_id]
            solution = self.solution.get(grade_id, "") if beyond_solution else ""
            left, right = first.get(grade_id, ""), second.get(grade_id, "")
            own_left = self.fingerprinter.hashes(left, stub, solution)
            own_right = self.fingerprinter.hashes(right, stub, solution)
            if not (len(own_left) and len(own_right)):
                not_compared.append(grade_id)
                continue
            shared = len(np.intersect1d(own_left, own_right, assume_unique=True))
            if shared:
                _, _, (left_slices, right_slices) = copydetect.compare_files(
                    self.fingerprinter.fingerprint(left, stub, solution),
                    self.fingerprinter.fingerprint(right, stub, solution))
            else:
                left_slices = right_slices = ([], [])
            cells.append(CellMatch(self.lesson, grade_id, shared,
                                   min(len(own_left), len(own_right)),
                                   copied_segments(left, left_slices, stub),
                                   copied_segments(right, right_slices, stub)))
        return cells, not_compared


def pooled_match(first, second, comparisons, solution_copies):
    """The :class:`Match` of two students over all lessons (``comparisons``, lesson by
    lesson), with each lesson's score and the cells of the lessons where they share
    anything."""
    match = Match(first, second, None, 0, 0)
    for lesson, comparison in comparisons.items():
        shared, smaller = comparison.counts(first, second)
        if not smaller:
            continue
        match.shared, match.smaller = match.shared + shared, match.smaller + smaller
        match.by_lesson[lesson] = shared / smaller
        if {(lesson, first), (lesson, second)} <= solution_copies:
            match.both_match_solution.append(lesson)
        if shared:
            cells, not_compared = comparison.cells_of(
                *(comparison.answers[comparison.row_of[name] - 1].cells
                  for name in (first, second)))
            match.cells += cells
            match.not_compared += [f"{lesson}: {grade_id}" for grade_id in not_compared]
    return match


def compare(answers, top=DEFAULT_TOP):
    """Score every pair of students, lesson by lesson and over all lessons, and each
    student against the released solution: a :class:`Similarity` with the ``top`` pairs
    of each list (their cells compared for the page) and every flagged solution match.
    ``answers`` is a list of :class:`StudentAnswers`, one per student and lesson (of
    two for the same, the later is kept)."""
    from grader.lessons import all_lessons

    groups = defaultdict(dict)
    for answer in answers:
        groups[answer.lesson][answer.student] = answer
    lessons = [name for name in all_lessons() if name in groups]
    students = sorted({answer.student for answer in answers})
    index = {student: number for number, student in enumerate(students)}
    shared = np.zeros((len(students), len(students)), dtype=np.int64)
    smaller = np.zeros_like(shared)
    result = Similarity(lessons, students, sum(len(group) for group in groups.values()),
                        0, {}, [], [], {}, top)
    fingerprinter = Fingerprinter()
    comparisons = {}
    for lesson in lessons:
        comparison = LessonComparison(lesson, groups[lesson].values(), fingerprinter)
        comparisons[lesson] = comparison
        rows = np.array([index[answer.student] for answer in comparison.answers])
        shared[np.ix_(rows, rows)] += comparison.shared[1:, 1:]  # pooled over lessons
        smaller[np.ix_(rows, rows)] += comparison.smaller[1:, 1:]
        result.pairs += len(rows) * (len(rows) - 1) // 2
        result.by_lesson[lesson] = comparison.top_matches(top)
        result.solution_matches += comparison.solution_matches()
        result.unanswered[lesson] = comparison.unanswered
        fingerprinter.forget_hashes()  # the next lesson's cells are others
    solution_copies = {(match.lesson, match.first) for match in result.solution_matches}
    for lesson, matches in result.by_lesson.items():
        for match in matches:
            if {(lesson, match.first), (lesson, match.second)} <= solution_copies:
                match.both_match_solution.append(lesson)
    result.solution_matches.sort(key=lambda match: (-match.score, match.lesson, match.first))
    result.overall = [pooled_match(students[i], students[j], comparisons, solution_copies)
                      for i, j in ranked_pairs(shared, smaller, top)]
    return result


class CannotCompare(Exception):
    """Nothing can be compared at this path; the message says why, in one line."""


def notebooks_to_compare(path):
    """``(jobs, notes)``: the notebooks to compare under ``path``, a class folder (each
    student's notebook per lesson, chosen as ``grade`` chooses it) or a results folder of
    ``grade --out`` (the notebook graded last per student and lesson), and one-line notes
    on the files left out. Raises :class:`CannotCompare`."""
    from grader.class_run.result_store import MANIFEST
    from grader.class_run.submissions import CannotGrade, find_jobs
    from grader.safe_text import printable

    path = Path(path)
    if (path / MANIFEST).is_file():
        return _graded_notebooks(path)
    if path.is_file() and path.suffix in (".json", ".jsonl"):
        raise CannotCompare(
            f"{printable(path)} is a JSON file, and a report of grade --json holds scores, "
            "not answers: pass the class folder, or the folder given to grade --out")
    try:
        found = find_jobs(path)
    except CannotGrade as error:
        raise CannotCompare(str(error)) from None
    return found.jobs, [str(skipped) for skipped in found.skipped]


def _graded_notebooks(folder):
    from grader.class_run.result_store import latest_graded
    from grader.class_run.submissions import NotebookJob
    from grader.judge.submission_file import notebook_hash
    from grader.safe_text import printable

    graded = latest_graded(folder)
    if not graded:
        raise CannotCompare(f"{printable(folder)}: its manifest names no graded notebook")
    if all(notebook.path is None for notebook in graded):
        raise CannotCompare(f"{printable(folder)}: its results were stored before the grader "
                            "recorded where each notebook was: pass the class folder instead")
    jobs, notes = [], []
    for notebook in graded:
        whose = f"{printable(notebook.student)}'s {printable(notebook.lesson)}"
        if notebook.path is None:
            notes.append(f"{whose}: graded before the grader recorded where notebooks were, "
                         "left out (pass the class folder to compare it)")
            continue
        if not Path(notebook.path).is_file():
            notes.append(f"{whose}: the notebook graded is no longer at "
                         f"{printable(notebook.path)}, left out")
            continue
        if notebook_hash(notebook.path) != notebook.notebook_sha256:
            notes.append(f"{printable(notebook.path)} changed since it was graded: compared "
                         "as it is now")
        jobs.append(NotebookJob(notebook.student, Path(notebook.path), notebook.lesson))
    return jobs, notes


def answers_of(jobs):
    """``(answers, notes)``: each job's answer cells as :class:`StudentAnswers`, and a
    one-line note for each notebook that cannot be read."""
    from grader.judge.submission_file import UnreadableSubmission, read_submission
    from grader.lessons import all_lessons
    from grader.safe_text import printable

    answers, notes = [], []
    for job in jobs:
        if job.lesson not in all_lessons():  # a results folder of another course version
            notes.append(f"{printable(job.path)}: graded as {printable(job.lesson)}, which is "
                         "no lesson of this course now, left out")
            continue
        try:
            code = read_submission(job.path).code
        except UnreadableSubmission as error:
            notes.append(f"{printable(job.path)}: cannot be read as a notebook "
                         f"({printable(error, 300)}), left out")
            continue
        wanted = answer_cell_ids(job.lesson)
        answers.append(StudentAnswers(job.student, job.lesson,
                                      {grade_id: code[grade_id] for grade_id in wanted
                                       if grade_id in code}))
    return answers, notes
