"""One self-contained feedback page per student: what was checked, what came of it.

A page is a single HTML file with its CSS and images inline (no network, no scripts), so
it can be mailed or uploaded to an LMS as it is. Its headline gives the score of the
lessons handed in, out of their points, beside the course's total. Per lesson it shows
the score (or why a file handed in could not be graded), every check's status and
feedback in words, the notes (which file was graded when there were several, time
limits, cells that failed), the files that were not graded, written answers awaiting a
person, and for each learning check a plot of the student's run next to the baseline the
grader trained. It never shows the hidden tests' code, their inputs as data, or the
salt: feedback messages describe the first case that failed in words, which is what a
student can act on. Headings, alt text, text with every status colour and a layout that
fits a phone keep it accessible.
"""

import base64
import html
import io
from pathlib import Path

from grader.outputs.spec import asks_of
from grader.results import Status, WrittenStatus
from grader.safe_text import printable

STATUS_WORDS = {Status.PASSED: "passed", Status.FAILED: "not passed", Status.ERROR: "error",
                Status.TIMEOUT: "time limit", Status.NOT_WRITTEN: "not written yet"}

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 46rem; padding: 1rem; line-height: 1.5; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2rem;
     border-bottom: 2px solid #d0d0d0; padding-bottom: .25rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #d0d0d0; }
.check { border-left: .35rem solid #767676; padding: .4rem .75rem; margin: .6rem 0;
         background: #f6f6f6; overflow-wrap: anywhere; }
.passed { border-color: #1b7f3b; } .failed { border-color: #b3261e; }
.error, .timeout { border-color: #8a5a00; } .not-written { border-color: #555; }
.status { font-weight: 700; } .passed .status { color: #1b7f3b; }
.failed .status { color: #b3261e; } .error .status, .timeout .status { color: #8a5a00; }
img { max-width: 100%; height: auto; }
.note, .late { color: #3d3d3d; } .comment { border-left: .35rem solid #1f4e9e;
        padding: .25rem .75rem; } .written { white-space: pre-wrap; background: #f6f6f6;
        padding: .5rem; }
"""

WHAT_WAS_CHECKED = (
    "The grader rebuilt each notebook from the course, took only your answer cells, and "
    "ran them in a sandbox. Each check then called your code with inputs of its own "
    "(not the ones of your notebook's visible tests) and judged what it returned. "
    "Learning checks trained the course's agent with your code and compared the result "
    "with a baseline the grader trained itself.")


def comparison_figure(figure):
    """A learning check's figure (``checks.framework.comparison``) drawn with matplotlib:
    a bar per series and group, the legend beside the bars, not over them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from course.plotting import legend_beside

    groups, series = figure["groups"], figure["series"]
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=110)
    width = 0.8 / max(1, len(series))
    positions = np.arange(len(groups))
    for offset, (name, values) in enumerate(series.items()):
        heights = [np.nan if value is None else value for value in values]
        ax.bar(positions + offset * width, heights, width, label=name)
    ax.set_xticks(positions + width * (len(series) - 1) / 2, groups)
    ax.set_ylabel(figure["ylabel"])
    ax.set_title(figure["title"], fontsize=9, wrap=True)
    legend_beside(ax, fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return fig


def figure_png(figure):
    """A learning check's figure as PNG bytes."""
    import matplotlib.pyplot as plt

    fig = comparison_figure(figure)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def figure_alt(figure):
    """The figure in words, for screen readers and for anyone without images."""
    parts = []
    for name, values in figure["series"].items():
        shown = ", ".join("none" if value is None else f"{value:.3g}" for value in values)
        parts.append(f"{name}: {shown}")
    return (f"{figure['title']}. {figure['ylabel']} for {', '.join(figure['groups'])}: "
            + "; ".join(parts) + ".")


def _text(value, limit=4000):
    return html.escape(printable(value, limit))


def _check_html(check, lesson):
    status = check.status
    asks = asks_of(lesson, check.id)
    parts = [f'<div class="check {html.escape(status.replace(" ", "-"))}"><p><span class="status">'
             f'{html.escape(STATUS_WORDS[status])}</span> · '
             f'<code>{_text(check.id, 100)}</code> · {check.score:g} / '
             f'{check.max_score:g} points</p>'
             + (f'<p class="asks">It asks: {_text(asks)}</p>' if asks else "")
             + f'<p>{_text(check.feedback)}</p>']
    override = check.override
    if override:
        parts.append(f'<p class="comment"><strong>Regraded by a person: '
                     f'{override.points:g} / {check.max_score:g} points</strong> '
                     f'(in place of the {check.score:g} above).'
                     + (f' {_text(override.comment)}' if override.comment else "")
                     + "</p>")
    if check.figure:
        png = base64.b64encode(figure_png(check.figure)).decode("ascii")
        parts.append(f'<img src="data:image/png;base64,{png}" '
                     f'alt="{html.escape(figure_alt(check.figure))}">')
    parts.append("</div>")
    return "".join(parts)


def _excused_html(notebook, title):
    comment = notebook.excused_comment
    return (f'<section><h2 id="{title}">{title}</h2><p><strong>Excused</strong> by your '
            f'instructor: this lesson counts in no total.'
            + (f' {_text(comment)}' if comment else "") + "</p></section>")


def _written_html(answer):
    """A written answer, with a person's grade and comment once given."""
    if answer.status == WrittenStatus.GRADED:
        verdict = f"graded by a person: {answer.score:g} / {answer.max_score:g} points"
    elif answer.status == WrittenStatus.AWAITING:
        verdict = f"{answer.max_score:g} points, awaiting a person"
    else:
        verdict = f"{answer.max_score:g} points, not answered"
    comment = (f'<p class="comment"><strong>Comment:</strong> {_text(answer.comment)}</p>'
               if answer.comment else "")
    return (f"<h3>Written answer <code>{_text(answer.id, 100)}</code> ({verdict})</h3>"
            f'<div class="written">{_text(answer.answer, 20000)}</div>{comment}')


def _score_words(notebook):
    """How the lesson's score was made: the checks, a person's grades, any late penalty."""
    words = [f'<p><strong>{notebook.score:g} / {notebook.max_score:g} points</strong>']
    graded = [a for a in notebook.written if a.status == WrittenStatus.GRADED]
    waiting = notebook.awaiting_points
    regraded = [check for check in notebook.checks if check.override]
    parts = ["the automatic checks"]
    if regraded:
        parts.append(f"{len(regraded)} check{'s' if len(regraded) != 1 else ''} regraded by "
                     "a person")
    if graded:
        parts.append("written answers graded by a person")
    words.append(" for " + ", ".join(parts) + ".")
    if waiting:
        words.append(f" {waiting:g} more points await a person's grading of your written "
                     "answers.")
    words.append("</p>")
    if notebook.late:
        words.append(f'<p class="late">{_text(notebook.late.explanation)}'
                     + (f' Before the penalty: {notebook.raw_score:g} points; after it: '
                        f'{notebook.score:g}.' if notebook.penalty_fraction else "") + "</p>")
    return "".join(words)


def _lesson_html(notebook):
    title = _text(notebook.name, 100)
    if notebook.excused:
        return _excused_html(notebook, title)
    if not notebook.submitted and notebook.notes:
        reasons = "".join(f'<li class="note">{_text(note)}</li>' for note in notebook.notes)
        return (f'<section><h2 id="{title}">{title}</h2><p><strong>Not graded</strong>: '
                f'you handed in a file of this lesson, but it could not be graded (worth '
                f'{notebook.max_score:g} points):</p>'
                f'<ul>{reasons}</ul></section>')
    if not notebook.submitted:
        return (f'<section><h2 id="{title}">{title}</h2><p>Not submitted (worth '
                f'{notebook.max_score:g} points).</p></section>')
    parts = [f'<section><h2 id="{title}">{title}</h2>', _score_words(notebook)]
    parts += [_check_html(check, notebook.name) for check in notebook.checks]
    if notebook.notes:
        parts.append("<h3>Notes</h3><ul>")
        parts += [f'<li class="note">{_text(note)}</li>' for note in notebook.notes]
        parts.append("</ul>")
    parts += [_written_html(answer) for answer in notebook.written]
    parts.append("</section>")
    return "".join(parts)


def headline(submission, lessons):
    """The score of what was handed in, beside the course's total (of ``lessons``,
    ``{name: points}``): a student who handed in the two lessons set so far, both at full
    marks, reads 26 / 26, not 26 / 89."""
    notebooks = submission.notebooks
    handed_in = submission.counted
    not_graded = [n for n in notebooks if not n.submitted and n.notes]
    total = (f'The course\'s total is {submission.max_score(lessons):g} points over '
             f'{len(notebooks)} lessons.')
    unread = (f' ({len(not_graded)} more handed in could not be graded: see '
              f'{", ".join(_text(n.name, 100) for n in not_graded)} below.)'
              if not_graded else "")
    if not handed_in:
        return f"<strong>No lesson graded yet.</strong>{unread} {total}"
    names = ", ".join(_text(notebook.name, 100) for notebook in handed_in)
    count = f'{len(handed_in)} lesson{"s" if len(handed_in) != 1 else ""}'
    waiting = sum(notebook.awaiting_points for notebook in handed_in)
    pending = (f" {waiting:g} of those points await a person's grading of your written "
               "answers." if waiting else "")
    return (f'<strong>{submission.score:g} / {submission.max_score_handed_in:g} points'
            f'</strong> for the {count} you handed in ({names}).{pending}{unread} {total}')


def _score_cell(notebook):
    if notebook.excused:
        return "<td>excused</td>"
    if notebook.submitted:
        return f'<td>{notebook.score:g} / {notebook.max_score:g}</td>'
    return "<td>not graded</td>" if notebook.notes else "<td>not submitted</td>"


def page(submission, lessons, course_title="Experience replay"):
    """The HTML page of one student's ``submission`` (a StudentResult of a report whose
    lessons are ``lessons``, ``{name: points}``)."""
    student = _text(submission.student, 200)
    rows = "".join(
        f'<tr><td><a href="#{_text(n.name, 100)}">{_text(n.name, 100)}</a></td>'
        + _score_cell(n) + "</tr>" for n in submission.notebooks)
    notes = "".join(f'<li class="note">{_text(note)}</li>' for note in submission.notes)
    body = "".join(_lesson_html(notebook) for notebook in submission.notebooks)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(course_title)}: feedback for {student}</title>
<style>{CSS}</style></head>
<body><main>
<h1>{html.escape(course_title)}: feedback for {student}</h1>
<p>{headline(submission, lessons)}</p>
<p>{WHAT_WAS_CHECKED}</p>
<table><caption>Score per lesson</caption><thead><tr><th scope="col">lesson</th>
<th scope="col">score</th></tr></thead><tbody>{rows}</tbody></table>
{f'<h2>Files that were not graded</h2><ul>{notes}</ul>' if notes else ''}
{body}
</main></body></html>
"""


def page_name(student):
    """A file name for a student's page that is safe whatever the folder was called."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in student)
    return f"{safe.strip('.') or 'student'}.html"


def write_feedback_pages(report, folder):
    """Write one page per student of ``report`` (a ClassReport) into ``folder``; return
    their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written, used = [], set()
    for submission in report.submissions:
        name = page_name(submission.student)
        while name in used:  # two folders that differ only in unsafe characters
            name = name.replace(".html", "_.html")
        used.add(name)
        path = folder / name
        path.write_text(page(submission, report.lessons), encoding="utf-8")
        written.append(path)
    return written
