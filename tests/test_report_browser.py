"""The compile report in a real browser: headless Chromium (Debian's ``chromium`` package;
``.ci/run`` installs it where it can) loads the page, the test checks every section is in the
DOM the browser built, that the page logged nothing to the console, and saves a screenshot.
Skips, saying why, where no Chromium exists."""

import os
import re
import shutil
import subprocess

import pytest

import minitorch_compile as mtc
from minitorch_compile.report.html import SECTIONS, TITLES

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on this machine (apt-get install chromium): the report's "
                "browser test needs one")


def _run(browser: str, url: str, *flags: str) -> tuple[str, list[str]]:
    """The DOM after load, and the console messages the page logged."""
    r = subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox",
                        "--enable-logging=stderr", "--v=0", "--user-data-dir=" +
                        os.path.join(os.path.dirname(url.removeprefix("file://")), "profile"),
                        *flags, url], capture_output=True, text=True, timeout=120)
    console = [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]
    return r.stdout, console


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    mtc.dynamo.reset()
    model = mtc.nn.Sequential(mtc.nn.Linear(4, 8), mtc.nn.ReLU(), mtc.nn.Linear(8, 1))
    opt = mtc.optim.SGD(model.parameters(), lr=0.1)
    step_model = mtc.compile(model)

    def loss_of(x, y):
        return ((step_model(x) - y) ** 2).mean()
    with mtc.report.trace("report <of> a training step") as t:
        for n in (16, 16, 12):  # the third call recompiles with a dynamic batch size
            opt.zero_grad()
            loss_of(mtc.randn(n, 4), mtc.randn(n, 1)).backward()
            opt.step()
        (mtc.randn(64).to("npu") * 2).relu()
        mtc.compile(lambda x: (x * 2).relu().sum(-1))(mtc.randn(8, 64).to("npu"))
    mtc.dynamo.reset()
    d = tmp_path_factory.mktemp("report")
    return t.write_html(d / "report.html")


def test_the_console_check_can_fail(tmp_path):
    browser = _browser()
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><script>console.error('seen-by-the-test')</script></body></html>")
    _, console = _run(browser, f"file://{bad}", "--dump-dom")
    assert any("seen-by-the-test" in line for line in console)


def test_every_section_renders_without_console_errors(report):
    browser = _browser()
    dom, console = _run(browser, f"file://{report}", "--dump-dom")
    assert console == []
    for s in SECTIONS:
        m = re.search(rf'<section id="{s}"><h2>{re.escape(TITLES[s])}</h2>(.*?)</section>',
                      dom, re.S)
        assert m, f"section {s} missing from the rendered page"
        assert "could not render this section" not in m.group(1)
    assert "report &lt;of&gt; a training step" in dom  # the title, escaped, as text
    assert "<svg" in dom
    npu = re.search(r'<section id="npu">(.*?)</section>', dom, re.S).group(1)
    assert "compiled for the npu" in npu and "rows per tile" in npu  # the npu code generator


def test_screenshot(report):
    browser = _browser()
    shot = os.path.join(os.path.dirname(report), "report.png")
    _run(browser, f"file://{report}", f"--screenshot={shot}", "--window-size=1280,1400",
         "--hide-scrollbars")
    with open(shot, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000  # a real picture
    keep = os.environ.get("MTC_SCREENSHOT_DIR")
    if keep:  # CI keeps it as an artifact
        shutil.copy(shot, os.path.join(keep, "report.png"))
