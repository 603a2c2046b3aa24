"""Code the grader sends into a student's kernel, before any of the student's code.

This file is never imported by the kernel (``grader/`` is hidden from it): its text is
executed as the first cell. Before the student's code can touch anything it

- loads **private copies** of every module a probe may import (``checks``, ``course``,
  earlier lessons' reference modules), then removes them from ``sys.modules``, so the
  notebook imports public copies of its own. While a probe runs, the private copies are
  swapped into ``sys.modules``: a helper the student patched (``course.qtables...``) is
  not the one the probe calls, even through an import inside a function;
- remembers IPython's input, AST and exception hooks and the import machinery, and the
  functions and classes of the modules a probe leans on (``builtins``, ``numpy``,
  ``math``, ``random``, ...). Before each probe whatever was changed is put back and
  named; a change that appears *while* a probe runs (a background thread) voids its
  result.

A probe returns plain data as JSON in a display message of its own MIME type; pass or
fail is decided outside, by the grader.
"""


def _course_grader_install(lesson_module, private_names):
    import importlib
    import json
    import random
    import sys
    import types

    import numpy as np
    from IPython import get_ipython
    from IPython.display import publish_display_data

    shell = get_ipython()
    mime = "application/vnd.course-grader.probe+json"

    # --- private copies of the course's modules ---------------------------------------
    for name in private_names:
        importlib.import_module(name)  # their imports of each other bind to these copies
    private = {name: sys.modules[name] for name in private_names}
    for name in private_names:  # the notebook's own imports will load public copies
        del sys.modules[name]
    checks = private[lesson_module].CHECKS
    ProbeError = private["checks.framework"].ProbeError

    # --- what a probe relies on, as it was before any student code ---------------------
    guarded_modules = ("builtins", "math", "random", "json", "operator", "functools",
                       "itertools", "collections", "copy", "numpy", "numpy.random",
                       "numpy.linalg", "gymnasium", "gymnasium.spaces", "scipy.stats")
    # IPython rebinds these in builtins itself: its output cache, the names its builtin
    # trap adds and removes around each execution, and ipykernel's stdin forwarders
    managed_by_ipython = {"_", "__", "___", "input", "raw_input",
                          *shell.builtin_trap.auto_builtins}

    def guarded(value):
        return callable(value) or isinstance(value, types.ModuleType)

    remembered = {
        module: {key: value for key, value in vars(sys.modules[module]).items()
                 if guarded(value) and key not in managed_by_ipython}
        for module in guarded_modules if module in sys.modules}
    hooks = {
        "input_transformers_post": list(shell.input_transformers_post),
        "input_transformers_cleanup": list(shell.input_transformers_cleanup),
        "ast_transformers": list(shell.ast_transformers),
    }
    import_machinery = {"sys.meta_path": sys.meta_path, "sys.path_hooks": sys.path_hooks}
    machinery_before = {name: list(items) for name, items in import_machinery.items()}

    def changes(restore):
        """Names of what differs from the remembered state; put back if ``restore``."""
        changed = []
        for module, attributes in remembered.items():
            namespace = vars(sys.modules[module])
            for key, value in attributes.items():
                if namespace.get(key) is not value:
                    changed.append(f"{module}.{key}")
                    if restore:
                        setattr(sys.modules[module], key, value)
        for attribute, original in hooks.items():
            current = getattr(shell, attribute)
            if list(current) != original:
                changed.append(attribute)
                if restore:
                    current[:] = original
        for name, items in import_machinery.items():
            if list(items) != machinery_before[name]:
                changed.append(name)
                if restore:
                    items[:] = machinery_before[name]
        if shell.custom_exceptions:
            changed.append("set_custom_exc")
            if restore:
                shell.set_custom_exc((), None)
        if sys.gettrace() is not None or sys.getprofile() is not None:
            changed.append("sys.settrace")
            if restore:
                sys.settrace(None)
                sys.setprofile(None)
        return changed

    def probe_with_private_modules(check, inputs, objects):
        public = {name: sys.modules.get(name) for name in private}
        sys.modules.update(private)
        try:
            return check.probe(inputs, **objects)
        finally:
            for name, module in public.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module

    def run_probe(payload):
        request = json.loads(payload)
        tampering = changes(restore=True)
        check = checks[request["check"]]
        namespace = shell.user_ns
        missing = [name for name in check.needs if name not in namespace]
        if missing:
            result = {"status": "missing", "names": missing}
        else:
            random.seed(request["global_seed"])
            np.random.seed(request["global_seed"] % 2**32)
            try:
                data = probe_with_private_modules(
                    check, request["inputs"], {name: namespace[name] for name in check.needs})
                result = {"status": "ok", "data": data}
            except ProbeError as error:
                result = {"status": "student_error", "message": str(error)}
            except Exception as error:  # the student's objects broke the probe itself
                result = {"status": "student_error",
                          "message": f"checking your code raised {type(error).__name__}: "
                                     f"{error}"[:500]}
            during = changes(restore=True)
            if during:
                result = {"status": "student_error",
                          "message": "while this check ran, your code changed "
                                     + ", ".join(during[:5]) + ", so its result was "
                                     "discarded."}
                tampering += during
        result["tampering"] = sorted(set(tampering))
        try:
            encoded = json.dumps(result, allow_nan=True)
        except (TypeError, ValueError) as error:
            encoded = json.dumps({"status": "student_error", "tampering": tampering,
                                  "message": f"your code's results could not be read: {error}"})
        publish_display_data({mime: encoded})

    return run_probe
