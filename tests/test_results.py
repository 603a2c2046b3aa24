"""Typed results (grader/results.py): one data form, the JSON report's, for every result,
and scores that are always made from their parts, so a person's grades and a late policy
can be applied, cleared and applied again."""

import json

import pytest

from grader.results import (CheckResult, ClassReport, HandIn, Lateness, NotebookResult,
                            NotebookStatus, Override, Status, StudentResult, WrittenAnswer,
                            WrittenStatus)

LESSONS = {"01_qlearning": 12.0, "06_capstone": 8.0}


def capstone(answered=True):
    result = NotebookResult("06_capstone", isolation={"level": "namespaces"},
                            notes=["a note"],
                            written=[WrittenAnswer("conclusion", 3.0, "Replay helps.", answered)])
    result.add(CheckResult("test_confidence_interval", 2.0, 2.0, "passed", "ok"))
    result.add(CheckResult("test_compare", 0.0, 3.0, Status.FAILED, "the order is wrong",
                           figure={"title": "t", "groups": ["a"], "series": {"x": [1.0]},
                                   "ylabel": "y"}, usage={"cpu_seconds": 0.5}))
    return result


def qlearning(score=12.0):
    result = NotebookResult("01_qlearning", isolation={"level": "namespaces"})
    result.add(CheckResult("test_update", score, 12.0,
                           Status.PASSED if score == 12.0 else Status.FAILED, "update"))
    return result


def a_report():
    return ClassReport(dict(LESSONS), [
        StudentResult("ada", [qlearning(), capstone()]),
        StudentResult("ben", [NotebookResult.not_submitted("01_qlearning", 12.0,
                                                           ["it is not JSON"]),
                              NotebookResult.not_submitted("06_capstone", 8.0)],
                      ["a file that belongs to no lesson"])],
        ["a file outside every student's folder"])


def round_trip(report):
    return ClassReport.from_data(json.loads(json.dumps(report.to_data())))


def test_statuses_are_the_reports_words_and_compare_equal_to_them():
    assert Status.PASSED == "passed" and Status("not written") is Status.NOT_WRITTEN
    assert json.dumps([Status.TIMEOUT, WrittenStatus.AWAITING, NotebookStatus.NOT_GRADED]) \
        == '["timeout", "awaiting manual grading", "not graded"]'
    assert CheckResult("x", 0.0, 1.0, "error", "raised").status is Status.ERROR
    with pytest.raises(ValueError):
        CheckResult("x", 0.0, 1.0, "passed!", "a status no check gives")


def test_every_part_survives_the_data_form():
    report = a_report()
    ada = report.student("ada")
    ada.notebook("01_qlearning").checks[0].override = Override(10.0, "regraded")
    ada.notebook("06_capstone").written[0].grade(2.5, "good")
    ada.notebook("06_capstone").handed_in = HandIn("2026-09-30T04:20:00+00:00", "a file")
    ada.notebook("06_capstone").late = Lateness("2026-09-28T22:59:00+00:00", True, True, 0.2,
                                                "late", periods_late=2)
    ada.notebook("01_qlearning").excused, ada.notebook("01_qlearning").excused_comment = \
        True, "leave"
    report.late_policy = {"lateness": "grader", "percent": 10.0}
    again = round_trip(report)
    assert again == report
    assert again.to_data() == report.to_data()


def test_a_notebooks_scores_are_made_from_its_parts():
    result = capstone()
    assert (result.score, result.raw_score, result.max_score) == (2.0, 2.0, 8.0)
    assert result.automatic_max_score == 5.0 and result.awaiting_points == 3.0
    result.written[0].grade(2.5, "clear")
    result.checks[1].override = Override(1.0, "half right")
    assert result.raw_score == 5.5 and result.automatic_score == 3.0
    # Canvas's rule: 20% of the lesson's 8 points off (1.6), never below 50% of them (4)
    result.late = Lateness("2026-01-01T00:00:00+00:00", False, True, 0.2, "a day late",
                           1, floor_fraction=0.5)
    assert result.score == pytest.approx(4.0) and result.raw_score == 5.5
    result.late.floor_fraction = 0.0
    assert result.score == pytest.approx(3.9)
    result.late.floor_fraction = 0.75  # already below the floor: nothing off
    assert result.score == pytest.approx(5.5)
    result.written[0].ungrade()  # a person's grade cleared: awaiting again, no points
    assert result.written[0].status == WrittenStatus.AWAITING and result.written[0].score is None
    assert result.raw_score == 3.0


def test_an_unanswered_written_answer_is_zero_and_awaits_nobody():
    answer = capstone(answered=False).written[0]
    assert answer.status == WrittenStatus.UNANSWERED and answer.score == 0.0
    assert capstone(answered=False).awaiting_points == 0


def test_a_lesson_not_graded_has_no_score_and_everyones_maximum():
    data = a_report().to_data()
    ben = data["submissions"][1]
    first, second = ben["notebooks"]
    assert first["status"] == "not graded" and first["notes"] == ["it is not JSON"]
    assert second["status"] == "not submitted"
    assert first["score"] is first["raw_score"] is None and first["max_score"] == 12.0
    assert ben["score"] == 0 and ben["max_score_handed_in"] == 0 and ben["max_score"] == 20.0


def test_a_students_totals_leave_out_excused_lessons():
    report = a_report()
    ada = report.student("ada")
    assert (ada.score, ada.max_score_handed_in, ada.max_score(LESSONS)) == (14.0, 20.0, 20.0)
    ada.notebook("06_capstone").excused = True
    assert (ada.score, ada.max_score_handed_in, ada.max_score(LESSONS)) == (12.0, 12.0, 12.0)
    assert round_trip(report).to_data()["submissions"][0]["max_score"] == 12.0


def test_optional_parts_stay_out_of_the_data_until_given():
    data = capstone().to_data()
    assert not {"handed_in", "late", "excused", "excused_comment"} & set(data)
    assert "override" not in data["checks"][0] and "comment" not in data["manual"][0]
    assert "notes" not in ClassReport(dict(LESSONS)).to_data()
