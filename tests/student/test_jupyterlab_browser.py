"""A student's JupyterLab in a real browser: open a lesson, Run All, read the self-check.

JupyterLab 4 runs from a skeleton environment set up as ``lessons.sh`` sets up a
student's (nbgrader's extensions off, ``scripts/one_checker.sh``), and Debian's chromium
drives it through selenium, as a student's browser would. A copy of the example class's
finished lesson 01 is opened from the JupyterLab file browser's folder and run with the
Run menu's "Run All Cells". The test asserts what the student sees:

- no JavaScript error in the browser's console;
- the experiments' progress bars rendered as widgets (not as text such as
  ``HBox(children=...)``, nor "Error displaying widget");
- the last cell's self-check under it, score first, every quick check passed;
- one checker: no nbgrader menu or Validate button.
"""

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from submission_factory import REPOSITORY

from tests.student.test_one_checker import skeleton_environment
from tests.support.browser import headless_chromium

LESSON = "01_qlearning"
FINISHED = REPOSITORY / "examples" / "submissions" / "ada_complete" / f"{LESSON}.ipynb"
RUN_ALL_SECONDS = 600  # the lesson's whole Run All and its self-check, on a loaded machine
WIDGET_VIEWS = ".jupyter-widgets.widget-hprogress, .jupyter-widgets .widget-hprogress"
SELF_CHECK = re.compile(r"Self-check of \S+: ([\d.]+) / ([\d.]+) from the checks run")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """``(url, token)`` of a JupyterLab serving a folder that holds the finished lesson,
    started from a student's environment."""
    root = tmp_path_factory.mktemp("lab")
    python = skeleton_environment(root / "env")
    subprocess.run(["bash", str(REPOSITORY / "scripts" / "one_checker.sh"), str(python)],
                   check=True, cwd=REPOSITORY)
    # the kernel is this environment's Python, a whole one as lessons.sh installs (the
    # skeleton's borrowed packages are outside the prefix the grader's sandbox mounts)
    kernel = root / "first" / "kernels" / "python3"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)", "language": "python"}))
    work = root / "work" / "notebooks"
    work.mkdir(parents=True)
    notebook = nbformat.read(FINISHED, as_version=4)
    for cell in notebook.cells:  # every output the page shows is this run's
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(notebook, work / FINISHED.name)
    port, token = free_port(), "browser-test-token"
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY),  # the course, as from its folder
           "JUPYTER_CONFIG_DIR": str(root / "config"), "JUPYTER_DATA_DIR": str(root / "data"),
           "JUPYTER_RUNTIME_DIR": str(root / "runtime"), "HOME": str(root),
           # the lab extensions this environment installed (ipywidgets' among them), as a
           # student's own environment has them; which are on is the skeleton's to say
           "JUPYTER_PATH": os.pathsep.join([str(root / "first"),
                                            str(Path(sys.prefix) / "share" / "jupyter")])}
    log = (root / "server.log").open("w")
    server = subprocess.Popen(
        [str(python), "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root / 'work'}",
         "--LabApp.news_url=",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        + (["--allow-root"] if os.geteuid() == 0 else []),  # CI's containers run as root
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert server.poll() is None, (root / "server.log").read_text()
            time.sleep(0.5)
    try:
        yield url, token, root / "server.log"
    finally:
        os.killpg(server.pid, 15)
        server.wait(30)
        log.close()


def console_errors(driver):
    """The browser console's errors, the page's own (not a missing favicon)."""
    return [entry["message"] for entry in driver.get_log("browser")
            if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]


def test_run_all_shows_widgets_and_the_self_check_with_no_error(jupyterlab):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as shown
    from selenium.webdriver.support.ui import WebDriverWait

    url, token, server_log = jupyterlab
    with headless_chromium() as driver:
        driver.get(f"{url}/lab/tree/notebooks/{FINISHED.name}?token={token}")
        wait = WebDriverWait(driver, 120)
        wait.until(shown.presence_of_element_located(
            (By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook .jp-Cell")))
        # the kernel is ready when the status bar reads "Python 3 (ipykernel) | Idle"
        wait.until(shown.presence_of_element_located(
            (By.XPATH, "//*[contains(@class, 'jp-StatusBar')]//*[contains(text(), 'Idle')]")))
        menus = [element.text for element in driver.find_elements(
            By.CSS_SELECTOR, ".lm-MenuBar-itemLabel")]
        assert "Run" in menus and not any("nbgrader" in menu.lower() for menu in menus), menus
        assert not driver.find_elements(By.XPATH, "//*[normalize-space(text())='Validate']")

        # a progress bar lives while its loop runs (seconds): watch the page for its view
        driver.execute_script(
            "window.widgetViews = 0; new MutationObserver(changes => changes.forEach("
            "change => change.addedNodes.forEach(node => { if (node.nodeType === 1 && "
            f"(node.matches({WIDGET_VIEWS!r}) || node.querySelector({WIDGET_VIEWS!r})))"
            " window.widgetViews++; }))).observe(document.body, "
            "{childList: true, subtree: true});")
        driver.find_element(By.XPATH, "//div[contains(@class, 'lm-MenuBar-itemLabel') and "
                                      "text()='Run']").click()
        wait.until(shown.element_to_be_clickable(
            (By.CSS_SELECTOR, "li[data-command='runmenu:run-all']"))).click()

        report = None
        deadline = time.monotonic() + RUN_ALL_SECONDS
        while time.monotonic() < deadline and report is None:
            outputs = driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output")
            for output in reversed(outputs):
                if SELF_CHECK.search(output.text):
                    report = output.text
                    break
            time.sleep(0.5)
        assert report is not None, (f"no self-check within {RUN_ALL_SECONDS} s; server log:\n"
                                    + server_log.read_text()[-3000:])
        page = driver.find_element(By.CSS_SELECTOR, ".jp-Notebook").text
        assert driver.execute_script("return window.widgetViews") > 0, \
            "no progress bar was ever rendered as a widget"
        for broken in ("Error displaying widget", "HBox(children", "Traceback"):
            assert broken not in page, broken
        score, maximum = map(float, SELF_CHECK.search(report).groups())
        assert score == maximum > 0, report
        first, second = report.splitlines()[:2]  # which file, then the score
        assert first.startswith("Checking ") and second.startswith("Self-check of "), report
        errors = console_errors(driver)
        assert errors == [], "\n".join(errors)
