"""A real headless browser for the tests: Debian's chromium through its chromedriver.

``.ci/run`` installs both (``apt-get install chromium chromium-driver``). Selenium is
pointed at them explicitly, so it never tries to download a browser or a driver.
"""

import shutil
from contextlib import contextmanager

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PHONE = (390, 844)  # CSS pixels of a common phone
DESKTOP = (1100, 1400)


@contextmanager
def headless_chromium(size=DESKTOP):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER), \
        "Debian's chromium and chromium-driver are needed (.ci/run installs them)"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic",
                 f"--window-size={size[0]},{size[1]}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot_of_page(path, out, size=DESKTOP):
    """Open the HTML file at ``path`` and save a full-height screenshot to ``out``."""
    with headless_chromium(size) as driver:
        driver.get(path.resolve().as_uri())
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(size[0], min(max(height, size[1]), 6000))
        driver.save_screenshot(str(out))


WCAG_21_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]  # axe-core's tags for the levels


def accessibility_violations(driver):
    """axe-core's WCAG 2.1 A and AA violations on the page ``driver`` shows, one line each
    (rule, impact, the first offending element): empty for an accessible page."""
    from axe_core_python.selenium import Axe

    results = Axe().run(driver, options={"runOnly": {"type": "tag", "values": WCAG_21_AA}})
    assert results.get("passes"), "axe-core checked nothing: the page did not load"
    return [f"{violation['id']} ({violation['impact']}): {violation['help']}; e.g. "
            f"{violation['nodes'][0]['html'][:120]}" for violation in results["violations"]]
