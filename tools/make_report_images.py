"""Regenerate the pictures of docs/report.md and the README: ``docs/images/guards.png`` (the
guard explorer of docs/report.md's first example) and ``docs/images/report.png`` (headless
Chromium's screenshot of the tour's compile report).
Run: ``python tools/make_report_images.py``."""

import os
import shutil
import subprocess

import minitorch_compile as mtc
from minitorch_compile._tour_report import step_report

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "images")


def step(x, y):
    a = x.cos() * 2
    print("logging")
    return a + y.sin()


def main() -> None:
    os.makedirs(HERE, exist_ok=True)
    f = mtc.compile(step, backend="eager")
    for n in (4, 6, 7):
        f(mtc.randn(n), mtc.randn(n))
    with open(os.path.join(HERE, "guards.png"), "wb") as out:
        out.write(mtc.viz.draw_guards(f).pipe(format="png"))
    step_report()
    import tempfile

    page = os.path.join(tempfile.gettempdir(), "minitorch_compile_report.html")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    subprocess.run([browser, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                    "--window-size=1100,1500", f"--screenshot={os.path.join(HERE, 'report.png')}",
                    f"file://{page}"], check=True, capture_output=True)


if __name__ == "__main__":
    main()
