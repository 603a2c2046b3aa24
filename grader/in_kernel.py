"""Code the grader sends into a student's kernel, before any of the student's code.

This file is never imported by the kernel (``grader/`` is hidden from it): its text is
executed as the first cell. It loads private copies of the check modules, so later
changes the student's code makes to ``checks`` do not reach the probes, and remembers
IPython's input and exception hooks as they were, so they can be put back before each
probe. A probe returns plain data as JSON in a display message of its own MIME type;
pass or fail is decided outside, by the grader.
"""


def _course_grader_install(lesson_module):
    import importlib.util
    import json
    import random
    import sys

    import numpy as np
    from IPython import get_ipython
    from IPython.display import publish_display_data

    shell = get_ipython()
    mime = "application/vnd.course-grader.probe+json"

    def private_copy(name):
        spec = importlib.util.find_spec(name)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # so the modules loaded next bind to private copies
        spec.loader.exec_module(module)
        return module

    names = ["checks", "checks.framework", "checks.statistics", "checks.stub_envs",
             lesson_module]
    saved = {name: sys.modules.get(name) for name in names}
    private = {name: private_copy(name) for name in names}
    for name, module in saved.items():  # the public modules stay as the student sees them
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module
    checks = private[lesson_module].CHECKS
    ProbeError = private["checks.framework"].ProbeError

    hooks = {
        "input_transformers_post": list(shell.input_transformers_post),
        "input_transformers_cleanup": list(shell.input_transformers_cleanup),
        "ast_transformers": list(shell.ast_transformers),
    }

    def restore_hooks():
        """Put IPython's hooks back as they were; return the names of those changed."""
        changed = []
        for attribute, original in hooks.items():
            current = getattr(shell, attribute)
            if list(current) != original:
                changed.append(attribute)
                current[:] = original
        if shell.custom_exceptions:
            changed.append("set_custom_exc")
            shell.set_custom_exc((), None)
        if sys.gettrace() is not None or sys.getprofile() is not None:
            changed.append("sys.settrace")
            sys.settrace(None)
            sys.setprofile(None)
        return changed

    def run_probe(payload):
        request = json.loads(payload)
        tampering = restore_hooks()
        check = checks[request["check"]]
        namespace = shell.user_ns
        missing = [name for name in check.needs if name not in namespace]
        if missing:
            result = {"status": "missing", "names": missing}
        else:
            random.seed(request["global_seed"])
            np.random.seed(request["global_seed"] % 2**32)
            try:
                data = check.probe(request["inputs"],
                                   **{name: namespace[name] for name in check.needs})
                result = {"status": "ok", "data": data}
            except ProbeError as error:
                result = {"status": "student_error", "message": str(error)}
            except Exception as error:  # the student's objects broke the probe itself
                result = {"status": "student_error",
                          "message": f"checking your code raised {type(error).__name__}: "
                                     f"{error}"[:500]}
        result["tampering"] = tampering
        try:
            encoded = json.dumps(result, allow_nan=True)
        except (TypeError, ValueError) as error:
            encoded = json.dumps({"status": "student_error", "tampering": tampering,
                                  "message": f"your code's results could not be read: {error}"})
        publish_display_data({mime: encoded})

    return run_probe
