"""How the files under a path become jobs (grader/class_run/submissions.py): a student per
folder of a class, a lesson per notebook (by its name, else its metadata or cells), one
notebook graded per student and lesson, and every file not graded named with its reason.

The class folders are built on disk as instructors receive them; the notebooks are the
released ones (nothing written) and submissions made from the instructors' answers.
"""

import os
import shutil

import nbformat
import pytest

from grader.class_run.submissions import find_jobs
from grader.lessons import answer_stubs
from submission_factory import REPOSITORY, write_submission

LESSON = "02_replay_buffer"
RELEASED = REPOSITORY / "notebooks" / f"{LESSON}.ipynb"


@pytest.fixture(scope="module")
def complete(tmp_path_factory):
    """Complete notebooks of lessons 01 and 02, to copy into the folders of a test."""
    folder = tmp_path_factory.mktemp("complete")
    return {lesson: write_submission(folder, lesson) for lesson in ("01_qlearning", LESSON)}


def put(source, path, saved=None):
    """Copy the notebook ``source`` to ``path``, last saved at ``saved`` (seconds)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, path)
    if saved is not None:
        os.utime(path, (saved, saved))
    return path


def jobs_of(found):
    return {(job.student, job.lesson): job.path.name for job in found.jobs}


def reasons(found):
    return [entry.reason for entry in found.skipped]


def one_reason(found, path):
    (reason,) = [reason for reason in reasons(found) if reason.startswith(f"{path}:")]
    return reason


def test_a_class_has_a_student_per_folder_and_a_job_per_lesson_in_it(tmp_path, complete):
    put(complete["01_qlearning"], tmp_path / "ana" / "01_qlearning.ipynb")
    put(complete[LESSON], tmp_path / "ana" / "work" / f"{LESSON}.ipynb")  # any depth
    put(RELEASED, tmp_path / "ben" / f"{LESSON}.ipynb")  # nothing written: still graded
    (tmp_path / "cy").mkdir()  # handed in nothing: a student all the same
    (tmp_path / "dee").mkdir()
    (tmp_path / "dee" / "notes.txt").write_text("not a notebook: never looked at")
    found = find_jobs(tmp_path)
    assert found.students == ["ana", "ben", "cy", "dee"]
    assert jobs_of(found) == {("ana", "01_qlearning"): "01_qlearning.ipynb",
                              ("ana", LESSON): f"{LESSON}.ipynb",
                              ("ben", LESSON): f"{LESSON}.ipynb"}
    assert [(job.student, job.lesson) for job in found.jobs] == sorted(jobs_of(found))
    assert all(job.choice is None for job in found.jobs)
    for student in ("cy", "dee"):
        assert one_reason(found, tmp_path / student).endswith(
            "no notebook (.ipynb) in this student's folder, nothing graded")
    assert len(found.skipped) == 2


def test_a_notebook_is_the_lesson_its_name_names_else_its_metadata_else_its_cells(
        tmp_path, complete):
    put(complete[LESSON], tmp_path / "ana" / "Replay Buffer (2).ipynb")  # the name, loosely
    put(complete[LESSON], tmp_path / "ben" / "homework.ipynb")  # the metadata
    notebook = nbformat.read(complete[LESSON], as_version=4)
    notebook.metadata.pop("course")  # an editor that keeps the cells but not the metadata
    (tmp_path / "cy").mkdir()
    nbformat.write(notebook, tmp_path / "cy" / "homework.ipynb")  # the cells
    found = find_jobs(tmp_path)
    assert jobs_of(found) == {("ana", LESSON): "Replay Buffer (2).ipynb",
                              ("ben", LESSON): "homework.ipynb",
                              ("cy", LESSON): "homework.ipynb"}
    assert not found.skipped


def test_every_file_not_graded_is_named_in_one_line_with_its_reason(tmp_path, complete):
    put(complete[LESSON], tmp_path / "ana" / f"{LESSON}.ipynb")
    stray = put(complete[LESSON], tmp_path / f"{LESSON}.ipynb")
    lesson_folder = tmp_path / "01_qlearning"
    put(complete["01_qlearning"], lesson_folder / "01_qlearning.ipynb")
    unknown = tmp_path / "ana" / "scratch.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), unknown)
    garbled = tmp_path / "ana" / "draft.ipynb"
    garbled.write_text("my notes, not JSON")
    link = tmp_path / "ana" / "01_qlearning.ipynb"
    link.symlink_to(REPOSITORY / "solutions" / "01_qlearning.ipynb")  # the answers, linked
    pipe = tmp_path / "ana" / "03_prioritized_replay.ipynb"
    os.mkfifo(pipe)  # a reader would wait for ever
    found = find_jobs(tmp_path)
    assert found.students == ["ana"]
    assert jobs_of(found) == {("ana", LESSON): f"{LESSON}.ipynb"}
    expected = {
        stray: "a notebook at the top of a class folder belongs to no student, skipped",
        lesson_folder: "a folder named like a lesson or a notebook at the top of a class "
                       "folder belongs to no student, skipped",
        unknown: "not a lesson of this course",
        garbled: "cannot be read as a notebook (it is not JSON",
        link: "a symbolic link (submit the notebook itself), skipped",
        pipe: "not a regular file, skipped",
    }
    for path, why in expected.items():
        assert why in one_reason(found, path), (path, reasons(found))
    assert len(found.skipped) == len(expected)
    assert all("\n" not in reason for reason in reasons(found))
    assert {entry.student for entry in found.skipped} == {None, "ana"}
    assert [entry.student for entry in found.skipped
            if entry.reason.startswith(str(stray))] == [None]


def test_several_notebooks_of_a_lesson_the_most_answered_then_the_latest_saved(tmp_path):
    student = tmp_path / "ann"
    student.mkdir()
    stub = answer_stubs(LESSON)["buffer_sample"]  # as released: not written
    half = write_submission(tmp_path / "half", LESSON, {"buffer_sample": stub})
    half.rename(student / f"{LESSON}.ipynb")  # named like the lesson, saved last
    for name, when in (("final.ipynb", 1_700_000_000), ("final (copy).ipynb", 1_700_000_100)):
        copy = write_submission(tmp_path / "drafts" / name, LESSON)
        copy.rename(student / name)
        os.utime(student / name, (when, when))
    (job,) = find_jobs(student).jobs
    assert job.path.name == "final (copy).ipynb"  # all answers, like final, but later saved
    reasons = " ".join(entry.reason for entry in find_jobs(student).skipped)
    assert "final.ipynb: not graded" in reasons and "it was saved later" in reasons
    assert f"{LESSON}.ipynb: not graded" in reasons and "3 here" in reasons


def test_two_worked_notebooks_are_told_apart_by_content_not_by_save_time(tmp_path):
    """Both notebooks have every answer cell changed; the draft's sample is a one-line
    start, saved later (an unzip sets such times): the finished one is graded, and the
    reason says so."""
    student = tmp_path / "ann"
    stub = answer_stubs(LESSON)["buffer_sample"]
    start = stub.replace("raise NotImplementedError()", "return None")
    finished = put(write_submission(tmp_path / "a", LESSON), student / "finished.ipynb",
                   saved=1_700_000_000)
    put(write_submission(tmp_path / "b", LESSON, {"buffer_sample": start}),
        student / "draft.ipynb", saved=1_700_000_500)
    found = find_jobs(student)
    (job,) = found.jobs
    assert job.path == finished
    assert "it holds more of the student's code" in one_reason(found, student / "draft.ipynb")
    assert "then the most code of your own in them" in job.choice


def test_the_graded_notebooks_note_names_the_others_and_why_one_unreadable_is_not_graded(
        tmp_path, complete):
    chosen = put(complete[LESSON], tmp_path / "ann" / "finished.ipynb", saved=1_700_000_000)
    put(RELEASED, tmp_path / "ann" / f"{LESSON}.ipynb", saved=1_700_000_100)  # later, empty
    broken = tmp_path / "ann" / f"{LESSON} (1).ipynb"
    broken.write_text("{}")
    found = find_jobs(tmp_path)
    (job,) = found.jobs
    total = len(answer_stubs(LESSON))
    assert job.path == chosen and job.lesson == LESSON
    assert job.choice.startswith(f"Your folder held 3 notebooks of this lesson: finished.ipynb "
                                 f"was graded ({total} of {total} answer cells changed")
    assert f"not {LESSON}.ipynb (0 changed), {broken.name} (it cannot be read)" in job.choice
    assert one_reason(found, broken).endswith(f"; {LESSON} was graded from another file")
    untouched = one_reason(found, tmp_path / "ann" / f"{LESSON}.ipynb")
    assert "since it holds more of the student's work" in untouched
    assert all(entry.lesson == LESSON for entry in found.skipped)


def test_a_lesson_whose_only_notebook_cannot_be_read_says_so_on_the_lessons_entry(tmp_path):
    (tmp_path / "ann").mkdir()
    (tmp_path / "ann" / f"{LESSON}.ipynb").write_text("{}")
    found = find_jobs(tmp_path)
    assert found.jobs == [] and found.students == ["ann"]
    (entry,) = found.skipped
    assert entry.student == "ann" and entry.lesson == LESSON
    assert "not graded: it cannot be read as a notebook" in entry.reason
    assert entry.lesson_note.startswith(f"{LESSON}.ipynb could not be read: ")


def test_in_nbgrader_layout_a_lesson_folder_is_never_taken_for_a_student(tmp_path):
    submitted = tmp_path / "submitted"
    for student, lesson in (("ann", LESSON), ("ann", "01_qlearning"), ("bo", "01_qlearning")):
        write_submission(submitted / student, lesson, student=lesson)  # <student>/<lesson>/
    assert find_jobs(submitted).students == ["ann", "bo"]
    for path in (submitted / "ann", submitted / "ann" / LESSON,
                 submitted / "ann" / LESSON / f"{LESSON}.ipynb"):
        assert {job.student for job in find_jobs(path).jobs} == {"ann"}, path
    assert len(find_jobs(submitted / "ann").jobs) == 2


def test_a_link_to_a_folder_inside_a_class_is_never_followed(tmp_path, complete):
    put(complete[LESSON], tmp_path / "ann" / f"{LESSON}.ipynb")
    (tmp_path / "ann" / "answers").symlink_to(REPOSITORY / "solutions")
    found = find_jobs(tmp_path)
    assert jobs_of(found) == {("ann", LESSON): f"{LESSON}.ipynb"}
    assert one_reason(found, tmp_path / "ann" / "answers").endswith(
        "a symbolic link to a folder, not followed")


def test_a_canvas_download_is_a_student_per_user_id_not_one_student(tmp_path, complete):
    """Canvas's "Download Submissions" is one flat folder, every file named
    <name>_[LATE_]<user id>_<file id>_<file name>: each file is its student's, the user id
    telling apart two students of one name; a file not named so is nobody's."""
    put(complete[LESSON], tmp_path / f"doejane_101_9001_{LESSON}.ipynb")
    put(complete["01_qlearning"], tmp_path / "doejane_101_9002_01_qlearning-1.ipynb")
    put(RELEASED, tmp_path / f"doejane_103_9003_{LESSON}.ipynb")  # another Jane Doe
    put(complete[LESSON], tmp_path / f"smithbob_LATE_102_9004_{LESSON}.ipynb")
    put(complete[LESSON], tmp_path / "mine.ipynb")
    (tmp_path / "empty").mkdir()
    found = find_jobs(tmp_path)
    assert found.students == ["doejane_101", "doejane_103", "smithbob_102"]
    assert jobs_of(found) == {
        ("doejane_101", LESSON): f"doejane_101_9001_{LESSON}.ipynb",
        ("doejane_101", "01_qlearning"): "doejane_101_9002_01_qlearning-1.ipynb",
        ("doejane_103", LESSON): f"doejane_103_9003_{LESSON}.ipynb",
        ("smithbob_102", LESSON): f"smithbob_LATE_102_9004_{LESSON}.ipynb"}
    assert "belongs to no student" in one_reason(found, tmp_path / "mine.ipynb")
    assert "empty folder" in one_reason(found, tmp_path / "empty")


def test_one_students_folder_is_not_a_canvas_download(tmp_path, complete):
    """One file named like Canvas's beside one that is not: one student's folder, as
    before (a download holds two students' files or only Canvas's names)."""
    put(complete[LESSON], tmp_path / "ana" / f"doejane_101_9001_{LESSON}.ipynb")
    put(complete["01_qlearning"], tmp_path / "ana" / "01_qlearning.ipynb")
    found = find_jobs(tmp_path / "ana")
    assert found.students == ["ana"]
    assert set(jobs_of(found)) == {("ana", LESSON), ("ana", "01_qlearning")}


GRADESCOPE = """\
submission_1001:
  :submitters:
  - :name: Jane Doe
    :sid: '5551'
    :email: Jane.Doe@uni.example
  :created_at: 2026-09-20 10:00:00.000000000 -07:00
submission_1002:
  :submitters:
  - :name: Bo Pair
    :sid: '5552'
    :email: bo@uni.example
  - :name: Cy Pair
    :sid: '5553'
    :email: cy@uni.example
submission_1003:
  :submitters:
  - :name: Di Absent
    :email: di@uni.example
"""


def test_a_gradescope_export_is_a_student_per_submitter_keyed_by_e_mail(tmp_path, complete):
    """Gradescope's export: a submission_<id>/ folder per submission and the metadata
    naming its submitters; a group submission is graded for each member, a submission
    folder the metadata does not name is nobody's, one it names but lacks is said."""
    (tmp_path / "submission_metadata.yml").write_text(GRADESCOPE)
    put(complete[LESSON], tmp_path / "submission_1001" / f"{LESSON}.ipynb")
    put(complete["01_qlearning"], tmp_path / "submission_1002" / "work.ipynb")
    put(complete[LESSON], tmp_path / "submission_9999" / f"{LESSON}.ipynb")
    found = find_jobs(tmp_path)
    assert found.students == ["bo@uni.example", "cy@uni.example", "di@uni.example",
                              "jane.doe@uni.example"]
    assert jobs_of(found) == {("jane.doe@uni.example", LESSON): f"{LESSON}.ipynb",
                              ("bo@uni.example", "01_qlearning"): "work.ipynb",
                              ("cy@uni.example", "01_qlearning"): "work.ipynb"}
    assert found.identities["jane.doe@uni.example"] == {"email": "Jane.Doe@uni.example",
                                                        "sis_user_id": "5551"}
    assert found.identities["di@uni.example"] == {"email": "di@uni.example"}
    assert "names no submitter of" in one_reason(found, tmp_path / "submission_9999")
    assert "not in the download" in one_reason(found, tmp_path / "submission_1003")


@pytest.mark.parametrize("metadata, says", [
    ("submission_1: [unclosed", "cannot be read as Gradescope's metadata"),
    ("- a list", "not Gradescope's metadata"),
    ("notes_1:\n  :submitters: []\n", "notes_1: not a submission folder"),
    ("submission_1:\n  :created_at: now\n", "submission_1: names no submitters"),
    ("submission_1:\n  :submitters:\n  - :name: No Mail\n", "a submitter without an e-mail"),
])
def test_gradescope_metadata_that_cannot_be_read_whole_is_refused_in_one_line(
        tmp_path, complete, metadata, says):
    from grader.class_run.submissions import CannotGrade

    (tmp_path / "submission_metadata.yml").write_text(metadata)
    put(complete[LESSON], tmp_path / "submission_1" / f"{LESSON}.ipynb")
    with pytest.raises(CannotGrade, match=says) as refused:
        find_jobs(tmp_path)
    assert "\n" not in str(refused.value)


def test_a_moodle_download_gives_a_student_all_their_plugin_folders(tmp_path, complete):
    """Moodle's download: a folder per student and plugin, <full name>_<participant
    id>_assignsubmission_<plugin>_; the student is <full name>_<participant id>."""
    put(complete[LESSON], tmp_path / "Ada Lovelace_301_assignsubmission_file_" /
        f"{LESSON}.ipynb")
    (tmp_path / "Ada Lovelace_301_assignsubmission_onlinetext_").mkdir()
    (tmp_path / "Ada Lovelace_301_assignsubmission_onlinetext_" / "onlinetext.html").write_text(
        "<p>see the notebook</p>")
    put(complete["01_qlearning"], tmp_path / "Ben Ample_302_assignsubmission_file_" /
        "01_qlearning.ipynb")
    found = find_jobs(tmp_path)
    assert found.students == ["Ada Lovelace_301", "Ben Ample_302"]
    assert jobs_of(found) == {("Ada Lovelace_301", LESSON): f"{LESSON}.ipynb",
                              ("Ben Ample_302", "01_qlearning"): "01_qlearning.ipynb"}
