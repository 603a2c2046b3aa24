"""The instructor's progress bar: an estimate of the time left from the first second, then
from the rate this run measures; failures counted as they happen."""

import io

from grader.class_run.class_progress import TYPICAL_SECONDS, ClassProgress


def progress_of(lessons, reused=0, workers=1):
    stream = io.StringIO()
    progress = ClassProgress(len(lessons) + reused, reused, 0, stream=stream,
                             lessons_to_grade=lessons, workers=workers)
    now = [100.0]
    progress.clock = lambda: now[0]
    progress.started = now[0]
    return progress, stream, now


def test_before_anything_is_graded_the_estimate_comes_from_typical_lesson_times():
    lessons = ["02_replay_buffer", "02_replay_buffer", "07_neural_replay", "06_capstone"]
    progress, stream, _ = progress_of(lessons)
    typical = sum(TYPICAL_SECONDS[lesson] for lesson in lessons)
    assert progress.time_left(0) == "~00:" + f"{typical:02d}"
    progress.set_workers(2)
    assert progress.time_left(0) == "~00:" + f"{typical // 2:02d}"
    progress.tick()
    assert "~00:" in stream.getvalue()  # shown on the bar, not only computed
    progress.close()


def test_once_checks_finish_the_estimate_is_the_measured_rate():
    progress, _, now = progress_of(["01_qlearning"] * 10)
    now[0] += 30.0
    progress.check_done("a", 1, 2)  # half a notebook in 30 s: 60 s per notebook
    assert progress.time_left(0.5) == "09:30"  # 9.5 notebooks left
    now[0] += 30.0
    progress.notebook_done("a", "ada/01_qlearning.ipynb")
    assert progress.time_left(1) == "09:00"
    assert progress.time_left(10) == "00:00"
    progress.close()


def test_notebooks_from_an_earlier_run_are_not_counted_as_graded_in_this_one():
    progress, stream, now = progress_of(["03_prioritized_replay"] * 2, reused=8)
    now[0] += 10.0
    assert progress.time_left(1) == "00:10"  # 1 of 2 in 10 s, not 9 of 10
    progress.notebook_done("b", "cy/03_prioritized_replay.ipynb", problem="its worker died")
    progress.tick()
    shown = stream.getvalue()
    assert "cy/03_prioritized_replay.ipynb: not graded: its worker died" in shown
    assert "8 from an earlier run, 1 not graded" in shown
    progress.close()


def test_the_bar_reads_as_words_elapsed_then_left():
    progress, stream, now = progress_of(["01_qlearning"] * 4)
    now[0] += 30.0
    progress.notebook_done("a", "ada/01_qlearning.ipynb")
    progress.tick()
    shown = stream.getvalue().split("\r")[-1]
    assert "elapsed, 01:30 left, 1/4 notebooks]" in shown, shown
    assert "<," not in stream.getvalue()  # tqdm's ", " no longer follows a bare "<"
    progress.close()
