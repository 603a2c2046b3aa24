"""Feedback pages, opened in a real headless browser as a student would open theirs."""

import sys
from pathlib import Path

import pytest

from checks.framework import comparison
from grader.class_run.submissions import find_jobs
from grader.outputs.feedback_pages import write_feedback_pages
from grader.outputs.report import class_report, lesson_maxima
from grader.results import CheckResult, NotebookResult, WrittenAnswer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from browser import PHONE, accessibility_violations, headless_chromium  # noqa: E402

pytestmark = pytest.mark.xdist_group('browser')

SALT = "secret-salt-that-must-not-show"
HIDDEN_CODE = 'lesson_checks.run("test_update", globals(), hidden=True)'


def a_class(folder):
    """Three students: one with a learning figure, a failure, notes and a written answer;
    one whose folder name is hostile and who submitted a single lesson; one who handed in
    the two lessons set so far at full marks, and a third lesson's notebook that is not
    JSON (found in ``folder`` as the grader finds files)."""
    learning = comparison("Taxi start states solved", "share solved", ["seed 1", "seed 2"],
                          {"your loop": [0.48, 0.51], "reference loop": [0.49, 0.50]})
    ada = NotebookResult("01_qlearning", isolation="namespaces",
                         notes=["Your answer cell 'update' raised ValueError: bad."])
    ada.add(CheckResult("test_update", 0.0, 3.0, "failed",
                        "update on fixed transitions: Q(2,1) should be 0.5 but is 1.0."))
    ada.add(CheckResult("test_learning", 2.0, 2.0, "passed", "learning on Taxi: fine.",
                        learning))
    capstone = NotebookResult("06_capstone", isolation="namespaces",
                              written=[WrittenAnswer("conclusion", 3.0, "Replay helps <b>"
                                                     "because</b> & so on.", True)])
    capstone.add(CheckResult("test_confidence_interval", 1.0, 1.0, "passed", "ok"))
    bob = NotebookResult("02_replay_buffer", isolation="namespaces")
    bob.add(CheckResult("test_fifo_eviction", 0.0, 2.0, "timeout", "did not finish"))
    cam = [NotebookResult("01_qlearning", isolation="namespaces"),
           NotebookResult("02_replay_buffer", isolation="namespaces")]
    cam[0].add(CheckResult("test_update", 3.0, 3.0, "passed", "fine"))
    cam[1].add(CheckResult("test_fifo_eviction", 2.0, 2.0, "passed", "fine"))
    (folder / "cam").mkdir()
    (folder / "cam" / "03_prioritized_replay.ipynb").write_text("my notes, not a notebook")
    skipped = find_jobs(folder / "cam").skipped
    return class_report({"ada": [ada, capstone], "bob<script>x</script>": [bob],
                               "cam": cam}, skipped, lessons=lesson_maxima())


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("feedback")
    return write_feedback_pages(a_class(tmp_path_factory.mktemp("class")), folder)


def test_pages_hold_no_hidden_code_inputs_or_salt(pages):
    for page in pages:
        text = page.read_text()
        assert SALT not in text and HIDDEN_CODE not in text and "BEGIN HIDDEN" not in text
        assert "<script" not in text  # a hostile name is escaped, and pages need no script


def test_a_page_in_a_browser_shows_every_lesson_scores_and_decoded_images(pages, tmp_path):
    ada = next(page for page in pages if page.name == "ada.html")
    with headless_chromium() as driver:
        driver.get(ada.resolve().as_uri())
        sections = driver.find_elements("css selector", "main section")
        assert [s.find_element("tag name", "h2").text for s in sections] == list(lesson_maxima())
        body = driver.find_element("tag name", "body").text
        course_total = sum(lesson_maxima().values())
        # the score of what was handed in, out of its points, beside the course's total
        # (the capstone's 3 points of written answer count, awaiting a person)
        assert "3 / 9 points for the 2 lessons you handed in" in body, body
        assert (f"The course's total is {course_total:g} points over "
                f"{len(lesson_maxima())} lessons") in body
        assert "0 / 3 points" in body and "not passed" in body
        assert "Not submitted" in body and "awaiting a person" in body
        assert "because</b>" not in driver.page_source  # the answer is shown as text
        images = driver.find_elements("css selector", "img")
        assert len(images) == 1
        assert driver.execute_script("return arguments[0].complete && "
                                     "arguments[0].naturalWidth", images[0]) > 100
        assert "seed 1" in images[0].get_attribute("alt")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert errors == []
        driver.save_screenshot(str(tmp_path / "ada.png"))
    assert (tmp_path / "ada.png").stat().st_size > 10_000


def test_every_page_passes_axe_cores_wcag_2_1_aa_rules(pages):
    """Each student's page (a failure, a figure, a written answer, a hostile name, a file
    that is not a notebook) has no WCAG 2.1 A or AA violation that axe-core finds."""
    assert len(pages) == 3
    with headless_chromium() as driver:
        for page in pages:
            driver.get(page.resolve().as_uri())
            assert accessibility_violations(driver) == [], page.name


def test_a_page_reads_on_a_phone_without_sideways_scrolling(pages, tmp_path):
    with headless_chromium(PHONE) as driver:
        for page in pages:
            driver.get(page.resolve().as_uri())
            overflow = driver.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, page.name
        driver.save_screenshot(str(tmp_path / "phone.png"))


def test_the_headline_scores_what_was_handed_in_beside_the_course_total(pages):
    cam = next(page for page in pages if page.name == "cam.html")
    course_total = sum(lesson_maxima().values())
    with headless_chromium() as driver:
        driver.get(cam.resolve().as_uri())
        headline = driver.find_element("css selector", "main p").text
        assert headline.startswith("5 / 5 points for the 2 lessons you handed in "
                                   "(01_qlearning, 02_replay_buffer)"), headline
        assert f"The course's total is {course_total:g} points" in headline, headline
        assert "03_prioritized_replay below" in headline  # handed in, not graded
        section = next(section for section in driver.find_elements("css selector", "section")
                       if section.find_element("tag name", "h2").text == "03_prioritized_replay")
        assert "Not graded" in section.text and "not JSON" in section.text, section.text
        table = driver.find_element("tag name", "table").text
        assert "03_prioritized_replay not graded" in table, table


def test_the_hostile_folder_name_gets_a_safe_file_name_and_escaped_text(pages):
    hostile = next(page for page in pages if page.name.startswith("bob"))
    assert "/" not in hostile.name and hostile.name.endswith(".html")
    assert "bob&lt;script&gt;" in hostile.read_text()


def test_each_check_on_a_page_says_what_it_asks(pages):
    from checks import checks_for_lesson

    asks = checks_for_lesson("02_replay_buffer")["test_fifo_eviction"].asks
    cam = next(page for page in pages if page.name == "cam.html")
    with headless_chromium() as driver:
        driver.get(cam.resolve().as_uri())
        shown = [element.text for element in driver.find_elements("css selector", "p.asks")]
    assert f"It asks: {asks}" in shown, shown
