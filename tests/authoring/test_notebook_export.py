"""``grader.authoring.notebook_export``: a notebook's ``#| export`` cells become a plain
Python module.

Each test builds a small notebook in memory with the cell factories below (as
nbgrader's own tests do), so a failure points at one rule of the export.
"""

import ast
import textwrap

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from grader.authoring.notebook_export import export_target, module_source

NOTEBOOK_PATH = "solutions/99_demo.ipynb"
TITLE = "Lesson 99: a demonstration"


def make_notebook(*cells, exports_to="demo.py"):
    return new_notebook(cells=list(cells),
                        metadata={"course": {"title": TITLE, "exports_to": exports_to}})


def exported(source):
    return new_code_cell("#| export\n" + textwrap.dedent(source).strip("\n"))


def not_exported(source):
    return new_code_cell(textwrap.dedent(source).strip("\n"))


def answer(source):
    """An nbgrader answer cell (its metadata does not matter to the export)."""
    cell = exported(source)
    cell.metadata["nbgrader"] = {"grade_id": "answer", "solution": True, "grade": False,
                                 "locked": False, "schema_version": 3, "task": False}
    return cell


def body_after_header(module):
    """The generated module without its docstring header."""
    tree = ast.parse(module)
    assert isinstance(tree.body[0], ast.Expr), "the module must start with its docstring"
    return module.split('"""', 2)[2].strip("\n")


def load(module):
    namespace = {}
    exec(compile(module, "demo.py", "exec"), namespace)
    return namespace


AGENT_CLASS = exported('''
    class Agent:
        """An agent grown one method per cell."""

        def __init__(self, start):
            self.start = start
''')

STEP_METHOD = answer('''
    @add_to_class(Agent)
    def step(self, value):
        """Add ``value`` to the start, twice if it is even."""
        ### BEGIN SOLUTION
        if value % 2 == 0:
            value *= 2
        return self.start + value
        ### END SOLUTION
''')

RESET_METHOD = exported('''
    @add_to_class(Agent)
    def reset(self):
        self.start = 0
        return self
''')


def test_export_target_is_read_from_the_notebook_metadata():
    assert export_target(make_notebook(exports_to="qlearning.py")) == "qlearning.py"
    assert export_target(new_notebook()) is None


def test_solution_markers_are_stripped_and_the_solution_kept():
    notebook = make_notebook(answer('''
        def double(x):
            ### BEGIN SOLUTION
            return 2 * x
            ### END SOLUTION
    '''))
    module = module_source(notebook, NOTEBOOK_PATH)
    assert "BEGIN SOLUTION" not in module and "END SOLUTION" not in module
    assert body_after_header(module) == "def double(x):\n    return 2 * x"


def test_export_mark_line_is_stripped():
    module = module_source(make_notebook(exported("import math")), NOTEBOOK_PATH)
    assert "#| export" not in module
    assert body_after_header(module) == "import math"


def test_cells_without_the_export_mark_are_ignored():
    notebook = make_notebook(
        not_exported("SCRATCH = 1"),
        new_markdown_cell("#| export\nMARKDOWN = 2"),  # only code cells are exported
        not_exported("print('hello')\n#| export"),  # the mark counts on the first line only
        exported("KEPT = 3"),
    )
    module = module_source(notebook, NOTEBOOK_PATH)
    assert body_after_header(module) == "KEPT = 3"
    for ignored in ("SCRATCH", "MARKDOWN", "hello"):
        assert ignored not in module, f"{ignored!r} came from a cell that is not exported"


def test_exported_blocks_keep_notebook_order_separated_by_two_blank_lines():
    notebook = make_notebook(exported("import math"), exported("FIRST = 1"),
                             exported("SECOND = 2"))
    module = module_source(notebook, NOTEBOOK_PATH)
    assert body_after_header(module) == "import math\n\n\nFIRST = 1\n\n\nSECOND = 2"
    assert module.endswith("SECOND = 2\n"), "the module must end with exactly one newline"


def test_methods_are_folded_into_the_class_body_with_method_indentation():
    notebook = make_notebook(AGENT_CLASS, STEP_METHOD, RESET_METHOD)
    module = module_source(notebook, NOTEBOOK_PATH)
    expected = textwrap.dedent('''
        class Agent:
            """An agent grown one method per cell."""

            def __init__(self, start):
                self.start = start

            def step(self, value):
                """Add ``value`` to the start, twice if it is even."""
                if value % 2 == 0:
                    value *= 2
                return self.start + value

            def reset(self):
                self.start = 0
                return self
    ''').strip("\n")
    assert body_after_header(module) == expected
    assert "add_to_class" not in module, "the decorator must not survive in the module"


def test_generated_module_compiles_and_the_class_has_the_methods():
    notebook = make_notebook(exported("import math"), AGENT_CLASS, STEP_METHOD,
                             not_exported("agent = Agent(1)"), RESET_METHOD,
                             exported("def helper():\n    return math.pi"))
    module = module_source(notebook, NOTEBOOK_PATH)
    namespace = load(module)
    tree = ast.parse(module)
    (agent_class,) = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    methods = [node.name for node in agent_class.body if isinstance(node, ast.FunctionDef)]
    assert methods == ["__init__", "step", "reset"], "methods must be defined in the class body"
    agent = namespace["Agent"](10)
    assert agent.step(3) == 13 and agent.step(4) == 18
    assert agent.reset().start == 0
    assert namespace["helper"]() == pytest.approx(3.14159, abs=1e-5)


def test_methods_go_to_the_class_they_name():
    notebook = make_notebook(
        exported("class First:\n    pass"),
        exported("class Second:\n    pass"),
        exported("@add_to_class(First)\ndef name(self):\n    return 'first'"),
        exported("@add_to_class(Second)\ndef name(self):\n    return 'second'"),
    )
    namespace = load(module_source(notebook, NOTEBOOK_PATH))
    assert namespace["First"]().name() == "first"
    assert namespace["Second"]().name() == "second"


def test_class_followed_by_top_level_code_does_not_receive_methods():
    # Appending a method after `LIMIT = 3` would indent it into the wrong place; the
    # export must refuse instead of writing a module that means something else.
    notebook = make_notebook(
        exported("class Agent:\n    pass\n\n\nLIMIT = 3"),
        exported("@add_to_class(Agent)\ndef act(self):\n    return LIMIT"),
    )
    with pytest.raises(ValueError, match=r"@add_to_class\(Agent\)"):
        module_source(notebook, NOTEBOOK_PATH)


def test_only_the_last_class_of_a_cell_receives_methods():
    notebook = make_notebook(
        exported("class First:\n    pass\n\n\nclass Second:\n    pass"),
        exported("@add_to_class(Second)\ndef name(self):\n    return 'second'"),
    )
    assert load(module_source(notebook, NOTEBOOK_PATH))["Second"]().name() == "second"
    notebook.cells.append(exported("@add_to_class(First)\ndef name(self):\n    return 1"))
    with pytest.raises(ValueError, match=r"@add_to_class\(First\)"):
        module_source(notebook, NOTEBOOK_PATH)


def test_method_before_its_class_is_an_error_naming_the_notebook():
    notebook = make_notebook(RESET_METHOD, AGENT_CLASS)
    with pytest.raises(ValueError, match=r"@add_to_class\(Agent\)") as error:
        module_source(notebook, NOTEBOOK_PATH)
    assert NOTEBOOK_PATH in str(error.value), "the error must say which notebook to fix"


def test_method_for_a_class_never_exported_is_an_error():
    notebook = make_notebook(not_exported("class Agent:\n    pass"), RESET_METHOD)
    with pytest.raises(ValueError, match=r"@add_to_class\(Agent\)"):
        module_source(notebook, NOTEBOOK_PATH)


def test_header_names_the_title_and_the_source_notebook():
    module = module_source(make_notebook(exported("X = 1")), NOTEBOOK_PATH)
    docstring = ast.get_docstring(ast.parse(module))
    assert docstring.splitlines()[0] == f"{TITLE}."
    assert f"AUTOGENERATED from {NOTEBOOK_PATH}" in docstring
    assert "python -m grader release" in docstring, "the header must say how to regenerate"


def exported_or_refused(notebook):
    """The namespace of the generated module, or None if the export refused the notebook.

    Either is acceptable; a module that silently means something else is not.
    """
    try:
        module = module_source(notebook, NOTEBOOK_PATH)
    except ValueError:
        return None
    return load(module)


def test_top_level_code_after_a_method_stays_at_module_level():
    # In the notebook LIMIT is a global; folding it into the class would make it A.LIMIT.
    namespace = exported_or_refused(make_notebook(
        exported("class Agent:\n    pass"),
        exported("@add_to_class(Agent)\ndef act(self):\n    return LIMIT\n\n\nLIMIT = 3"),
    ))
    if namespace is not None:
        assert "LIMIT" in namespace, "top-level code after a method was moved into the class"
        assert namespace["Agent"]().act() == 3


def test_comment_above_add_to_class_does_not_leave_the_decorator_in_the_module():
    # The module does not import add_to_class, so a decorator left in it fails at import.
    namespace = exported_or_refused(make_notebook(
        exported("class Agent:\n    pass"),
        exported("# the agent acts\n@add_to_class(Agent)\ndef act(self):\n    return 1"),
    ))
    if namespace is not None:
        assert namespace["Agent"]().act() == 1
