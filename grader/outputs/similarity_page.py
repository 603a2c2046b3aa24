"""The similarity report as one self-contained HTML page (no scripts, no network).

Most similar first: the answers that match the released solution, the pairs over all
lessons together, then each lesson's pairs; every entry shows its score, both students
and their answer cells side by side, the lines both wrote marked. Text from submissions
(names, code) is escaped by the template and stripped of control characters. The page
says, at its top, that it changes no grade.
"""

from jinja2 import Environment
from markupsafe import Markup, escape

from grader.outputs.feedback_pages import CSS as FEEDBACK_CSS
from grader.outputs.similarity import K, MIN_FINGERPRINTS, SOLUTION_MATCH
from grader.safe_text import printable

CSS = FEEDBACK_CSS + """
body { max-width: 80rem; }
.notice { border-left: .35rem solid #1f5fa8; background: #eef4fb; padding: .5rem .75rem; }
.pair { border-top: 1px solid #d0d0d0; margin-top: 1.5rem; }
.sides { display: grid; grid-template-columns: 1fr 1fr; gap: .75rem; }
.side { min-width: 0; }
.side h5 { margin: .25rem 0; font-size: .95rem; }
/* tabindex: a code block that scrolls sideways can be scrolled from the keyboard */
pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; font-size: .8rem;
      line-height: 1.35; margin: 0; }
mark { background: #ffe08a; color: inherit; }
td { overflow-wrap: anywhere; }  /* a long name wraps instead of widening a phone's page */
td.score, th.score { text-align: right; white-space: nowrap; }
@media (max-width: 50rem) { .sides { grid-template-columns: 1fr; } }
"""

TEMPLATE = """{% macro pairs_table(matches, prefix, pooled) %}
{% if matches %}
<table class="pairs"><caption>The {{ matches|length }} most similar
pair{{ "s" if matches|length != 1 }}, most similar first</caption>
<thead><tr><th scope="col">#</th><th scope="col" class="score">score</th>
<th scope="col">student</th><th scope="col">student</th>
<th scope="col">{{ "per lesson" if pooled else "shared" }}</th></tr></thead><tbody>
{% for match in matches %}<tr>
<td><a href="#{{ prefix }}-{{ loop.index }}">{{ loop.index }}</a></td>
<td class="score">{{ match.score|percent }}</td>
<td class="first">{{ match.first|shown }}</td><td class="second">{{ match.second|shown }}</td>
<td>{{ match|per_lesson if pooled else match.shared ~ " of " ~ match.smaller }}</td>
</tr>{% endfor %}</tbody></table>
{% else %}<p>No two students' answers have anything in common here.</p>{% endif %}
{% endmacro %}
{% macro pair(match, anchor, rank) %}
<article class="pair" id="{{ anchor }}">
<h3>{{ rank }}. {{ match.first|shown }} and {{ match.second|shown }}:
{{ match.score|percent }}{{ " in " ~ match.lesson if match.lesson }}</h3>
<p>{{ match.shared }} of {{ match.smaller }} fingerprints of the shorter answers shared.
{% if match.not_compared %}Not compared (unanswered or too short on one side):
{{ match.not_compared|join(", ") }}.{% endif %}
{% if match.both_match_solution %}Both match the released solution in
{{ match.both_match_solution|join(", ") }}: they may have copied it rather than each
other.{% endif %}</p>
{% for cell in match.cells %}
<h4>{{ cell.lesson }} · <code>{{ cell.grade_id }}</code>: {{ cell.score|percent }}</h4>
<div class="sides">
<div class="side"><h5>{{ match.first|shown }}</h5><pre tabindex="0">{{ cell.first|marked }}</pre></div>
<div class="side"><h5>{{ match.second|shown }}</h5><pre tabindex="0">{{ cell.second|marked }}</pre></div>
</div>
{% endfor %}
</article>
{% endmacro %}
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ course }}: similar answers</title>
<style>{{ css }}</style></head>
<body><main>
<h1>{{ course }}: similar answers</h1>
<p class="notice"><strong>This page changes no grade.</strong> It lists answers that look
alike, for a person to read and judge: similar code can be honest (a short function has
few ways to be written, the lesson's hints lead there, students may have worked together
where that is allowed).</p>
<p>Compared: {{ result.notebooks }} notebook{{ "s" if result.notebooks != 1 }} of
{{ result.students|length }} student{{ "s" if result.students|length != 1 }} in
{{ result.lessons|length }} lesson{{ "s" if result.lessons|length != 1 }}
({{ result.lessons|join(", ") }}): {{ result.pairs }} pair{{ "s" if result.pairs != 1 }}
of students, lesson by lesson, and every notebook against the released solution.</p>
<p>Only the answer cells are compared, cell by cell, after the code each cell was given
(its stub) is taken out. Names of variables, functions and classes, strings, comments and
spacing do not count, so a copy with names changed scores like the original. A
<em>score</em> is the share of the shorter of two answers that is found in the other
(fingerprints of {{ k }} characters of code with names taken out, about a line, summed
over the cells both answered). An answer cell with fewer than {{ min_fingerprints }}
fingerprints of its own (left as given, or a line or two) is not compared. Marked lines
are code both wrote. A student is listed as matching the released solution from a score
of {{ solution_match }} against it.</p>
<nav><ul>
<li><a href="#solution">Answers that match the released solution</a>
({{ result.solution_matches|length }})</li>
<li><a href="#overall">Most similar pairs, all lessons together</a></li>
{% for lesson in result.lessons %}<li><a href="#{{ lesson }}">{{ lesson }}</a></li>
{% endfor %}</ul></nav>

<section id="solution"><h2>Answers that match the released solution</h2>
{% if result.solution_matches %}
<table class="matches"><thead><tr><th scope="col">#</th><th scope="col">student</th>
<th scope="col">lesson</th><th scope="col" class="score">score</th></tr></thead><tbody>
{% for match in result.solution_matches %}<tr>
<td><a href="#solution-{{ loop.index }}">{{ loop.index }}</a></td>
<td class="first">{{ match.first|shown }}</td><td>{{ match.lesson }}</td>
<td class="score">{{ match.score|percent }}</td></tr>
{% endfor %}</tbody></table>
{% for match in result.solution_matches %}
{{ pair(match, "solution-" ~ loop.index, loop.index) }}
{% endfor %}
{% else %}<p>None: no student's answers match the released solution from a score of
{{ solution_match }}.</p>{% endif %}
</section>

<section id="overall"><h2>Most similar pairs, all lessons together</h2>
{{ pairs_table(result.overall, "overall", True) }}
{% for match in result.overall %}
{{ pair(match, "overall-" ~ loop.index, loop.index) }}
{% endfor %}
</section>

{% for lesson in result.lessons %}
<section id="{{ lesson }}" class="lesson"><h2>{{ lesson }}</h2>
{{ pairs_table(result.by_lesson[lesson], lesson, False) }}
{% if result.unanswered[lesson] %}<p class="note">Not compared (every answer cell left as
given or too short): {{ result.unanswered[lesson]|map("shown")|join(", ") }}.</p>{% endif %}
{% for match in result.by_lesson[lesson] %}
{{ pair(match, lesson ~ "-" ~ loop.index, loop.index) }}
{% endfor %}
</section>
{% endfor %}
</main></body></html>
"""


def _shown(student):
    """A student's name as shown: control characters out (the template escapes it);
    ``None`` is the released solution's side of a match."""
    return "the released solution" if student is None else printable(student, 200)


def _marked(pieces):
    """A cell's ``(text, copied)`` pieces as HTML: each piece escaped, control characters
    out (line breaks and tabs kept), the copied ones in ``<mark>``."""
    shown = (escape(printable(text.replace("\r\n", "\n"), 10**6)) for text, _ in pieces)
    return Markup("").join(Markup("<mark>%s</mark>") % text if copied else text
                           for text, (_, copied) in zip(shown, pieces))


def _per_lesson(match):
    """A pooled match's score in each lesson: "02: 90%, 03: 12%"."""
    return ", ".join(f"{lesson[:2]}: {_percent(score)}" for lesson, score in
                     match.by_lesson.items())


def _percent(score):
    return f"{100 * score:.0f}%"


def page(result, course="Experience replay"):
    """The HTML page of a :class:`grader.outputs.similarity.Similarity`."""
    environment = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    environment.filters.update(shown=_shown, marked=_marked, per_lesson=_per_lesson,
                               percent=_percent)
    return environment.from_string(TEMPLATE).render(
        result=result, course=course, css=Markup(CSS), k=K,
        min_fingerprints=MIN_FINGERPRINTS, solution_match=f"{100 * SOLUTION_MATCH:.0f}%")
