"""Finding a lesson's answer inside other code, by normalised statements.

An answer is the code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` in a
solution notebook. It is *found* in another text when ``WINDOW`` consecutive statements
of it appear there too, in the same order, and that run is not public anyway (in the
course's helpers, or in what the lesson's own student notebook shows).

Statements are compared after normalising, so that a reformatted or lightly renamed copy
is still found:

- Python's tokenizer reads the text; comments, blank lines, line breaks inside brackets,
  indentation and docstrings are dropped, and every string literal is ``STR``;
- a statement is a logical line, split at ``;`` and after the ``:`` of a compound
  statement's header (``if x: return y`` is two statements, as it is on two lines);
  statements of fewer than ``SHORTEST`` tokens (``else:``, ``break``, ``return x``) say
  too little to count, and are left out;
- a run of statements counts only if it holds ``SMALLEST_RUN`` tokens or more: the
  three-statement tail of any environment loop (``total += reward``, ``state =
  next_state``, ``if terminated or truncated:``) is an idiom, not anyone's answer;
- in each run of statements, the variables are renamed consistently in order of first
  appearance, so ``batch = f(x); return g(batch)`` and ``rows = f(x); return g(rows)``
  are the same run. Keywords, builtins, attribute names (after a dot) and keyword
  arguments keep their names: they are what the code does, not what it calls things.

Text that is not Python (prose in markdown, a README) is tokenized line by line and the
lines that do not tokenize are skipped, so code quoted in prose is still compared.
"""

import builtins
import io
import keyword
import re
import tokenize
from dataclasses import dataclass

WINDOW = 3  # statements: about three lines of code
SHORTEST = 3  # tokens a statement needs to count
SMALLEST_RUN = 15  # tokens a run of WINDOW statements needs to count

SOLUTION_REGION = re.compile(r"### BEGIN SOLUTION[^\n]*\n(.*?)### END SOLUTION", re.DOTALL)
MAGIC_LINE = re.compile(r"^\s*[%!]")  # IPython magics and shell escapes are not Python

COMPOUND = {"if", "elif", "else", "for", "while", "with", "def", "class", "try", "except",
            "finally", "async", "match", "case"}
KEPT_NAMES = set(dir(builtins)) | set(keyword.kwlist) | set(keyword.softkwlist)
_IGNORED = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER, tokenize.ERRORTOKEN}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12 splits f-strings
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)
_OPENING, _CLOSING = set("([{"), set(")]}")


@dataclass(frozen=True)
class Statement:
    tokens: tuple  # (kind, text): kind "name" for a renameable variable, else "kept"
    first_line: int  # 1-based lines of the text it came from
    last_line: int


def _raw_tokens(source):
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def _tolerant_raw_tokens(source):
    """Python's tokens of ``source``, or, where it does not tokenize as a whole, of each
    of its lines that does."""
    try:
        return _raw_tokens(source)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    tokens = []
    for number, line in enumerate(source.splitlines(), start=1):
        indent = len(line) - len(line.lstrip())
        try:
            line_tokens = _raw_tokens(line.strip() + "\n")
        except (tokenize.TokenError, IndentationError, SyntaxError):
            continue  # prose with an apostrophe, half a statement: not comparable code
        tokens += [token._replace(start=(number, token.start[1] + indent),
                                  end=(number, token.end[1] + indent))
                   for token in line_tokens]
    return tokens


def statements(source):
    """The normalised :class:`Statement` list of ``source`` (see the module docstring)."""
    source_lines = ["" if MAGIC_LINE.match(line) else line for line in source.splitlines()]
    source = "\n".join(source_lines) + "\n"
    found, current, lines = [], [], []
    depth = 0  # inside brackets
    fstring = 0  # inside an f-string's parts (3.12), which make one STR

    def close():
        if current and not _is_docstring(current):
            kept = [(kind, text) for kind, text, _ in current]
            if len(kept) >= SHORTEST:
                found.append(Statement(tuple(kept), lines[0], lines[-1]))
        current.clear()
        lines.clear()

    previous = None
    for token in _tolerant_raw_tokens(source):
        kind, text, line = token.type, token.string, token.start[0]
        if kind == _FSTRING_START:
            fstring += 1
            if fstring == 1:
                current.append(("kept", "STR", kind))
                lines.append(line)
            continue
        if fstring:
            fstring -= kind == _FSTRING_END
            continue
        if kind == tokenize.NEWLINE or (kind == tokenize.OP and text == ";" and not depth):
            close()
            depth = 0
            previous = None
            continue
        if kind in _IGNORED:
            continue
        lines.append(line)
        if kind == tokenize.STRING:
            current.append(("kept", "STR", kind))
        elif kind == tokenize.NAME and text not in KEPT_NAMES and previous != "." and not (
                depth and current[0][1] != "def"  # a parameter's default is no keyword
                and _is_keyword_argument(token, source_lines)):
            current.append(("name", text, kind))
        else:
            current.append(("kept", text, kind))
        if kind == tokenize.OP:
            depth += text in _OPENING
            depth -= text in _CLOSING
            depth = max(depth, 0)
            if text == ":" and not depth and current[0][1] in COMPOUND:
                close()  # the header of a compound statement: its body is the next one
        previous = text
    close()
    return found


def _is_docstring(tokens):
    return len(tokens) == 1 and tokens[0][2] == tokenize.STRING


def _is_keyword_argument(token, source_lines):
    """Whether the name ``token`` is followed by ``=`` (not ``==``) on its line."""
    rest = source_lines[token.start[0] - 1][token.end[1]:].lstrip()
    return rest.startswith("=") and not rest.startswith("==")


def run_key(run):
    """A run of statements with its variables renamed in order of first appearance."""
    names = {}
    key = []
    for statement in run:
        for kind, text in statement.tokens:
            if kind == "name":
                text = names.setdefault(text, f"v{len(names)}")
            key.append(text)
        key.append(";")
    return tuple(key)


def counted_runs(found, window=WINDOW):
    """(start, key) of every run of ``window`` consecutive statements of ``found`` that
    holds ``SMALLEST_RUN`` tokens or more."""
    for start in range(len(found) - window + 1):
        run = found[start:start + window]
        if sum(len(statement.tokens) for statement in run) >= SMALLEST_RUN:
            yield start, run_key(run)


def runs(found, window=WINDOW):
    """The keys of every run of ``window`` consecutive statements of ``found`` that
    counts (see :func:`counted_runs`)."""
    return {key for _, key in counted_runs(found, window)}


def runs_of(source, window=WINDOW):
    return runs(statements(source), window)


def answer_regions(notebook):
    """(grade_id, code) of every solution region of a source notebook's code cells."""
    regions = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", cell.get("id"))
        regions += [(grade_id, code) for code in SOLUTION_REGION.findall(cell.source)]
    return regions


def notebook_text(notebook):
    """Every cell's source, prose included: what a notebook shows whoever opens it."""
    return "\n".join(cell.source for cell in notebook.cells)


def found_in(answer, text_runs, public_runs=frozenset(), window=WINDOW):
    """The passages of ``answer`` (code) found in a text whose runs are ``text_runs``
    (from :func:`runs`) and not in ``public_runs``: the lines of each maximal stretch of
    the answer covered by such runs."""
    found = statements(answer)
    covered = [False] * len(found)
    for start, key in counted_runs(found, window):
        if key in text_runs and key not in public_runs:
            covered[start:start + window] = [True] * window
    lines = answer.splitlines()
    passages, index = [], 0
    while index < len(found):
        if not covered[index]:
            index += 1
            continue
        end = index
        while end + 1 < len(found) and covered[end + 1]:
            end += 1
        passages.append([line.strip() for line in
                         lines[found[index].first_line - 1:found[end].last_line]
                         if line.strip()])
        index = end + 1
    return passages
