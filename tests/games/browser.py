"""A real headless Chromium (Debian's chromium + chromedriver) for the page tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@contextmanager
def headless_chromium(
    extra_args: Sequence[str] = (), *, performance_log: bool = False, console_log: bool = False
) -> Iterator[Any]:
    """A selenium driver of a fresh headless Chromium profile, quit and removed after; the test
    is skipped where the browser is not installed. ``performance_log`` keeps the network's
    events (``driver.get_log("performance")``), ``console_log`` the page's console
    (``driver.get_log("browser")``)."""
    if not Path(CHROMIUM).exists() or not Path(CHROMEDRIVER).exists():
        pytest.skip(
            f"{CHROMIUM} or {CHROMEDRIVER} is absent (apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chan-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1100",
        *extra_args,
        f"--user-data-dir={profile}",
    ):
        options.add_argument(arg)
    logs = {"performance": "ALL"} if performance_log else {}
    if console_log:
        logs["browser"] = "ALL"
    if logs:
        options.set_capability("goog:loggingPrefs", logs)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
