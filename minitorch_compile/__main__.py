"""Command line: ``python -m minitorch_compile <command>``.

Commands:

``tour``   a short guided walk through the eager foundation and Dynamo (``_tour.py``);
           ``--step NAME`` (repeatable) runs only the named steps, ``--list`` names them.
``report`` runs ``SCRIPT.py`` with compile tracing on and writes one self-contained HTML page
           of everything the compiler did (``mtc.report``; ``-o`` names the file).
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m minitorch_compile",
        description="minitorch_compile: PyTorch's compiler stack, re-implemented to be read.")
    commands = parser.add_subparsers(dest="command", metavar="command")
    commands.required = True
    tour = commands.add_parser("tour", help="a guided tour: eager foundation, then Dynamo",
                               description="A guided tour of the eager foundation and of "
                                           "Dynamo (graph capture, guards, cache entries).")
    tour.add_argument("--step", action="append", dest="steps", metavar="NAME",
                      help="run only this step (repeatable); see --list")
    tour.add_argument("--list", action="store_true", help="list the steps and exit")
    report = commands.add_parser("report", help="run a script, write an HTML compile report",
                                 description="Run SCRIPT with compile tracing on and write an "
                                             "HTML report of every compile (as tlparse).")
    report.add_argument("script", help="the Python file to run")
    report.add_argument("script_args", nargs="*", metavar="-- ARG",
                        help="the script's own arguments, after --")
    report.add_argument("-o", "--output", default=None,
                        help="the report's path (default: SCRIPT_report.html here)")
    args = parser.parse_args(argv)

    if args.command == "report":
        return _report(args.script, args.script_args, args.output)

    if args.command == "tour":
        from ._tour import STEPS, run_tour

        if args.list:
            for name, fn in STEPS.items():
                print(f"{name:<14}{(fn.__doc__ or '').strip()}")
            return 0
        try:
            run_tour(args.steps)
        except ValueError as e:
            parser.error(str(e))
    return 0


def _report(script: str, script_args: list[str], output: str | None) -> int:
    """Run the script as ``__main__`` inside ``mtc.report.trace()``; write the page even if the
    script fails (the report then shows what compiled before the error)."""
    import os
    import runpy
    import traceback

    from . import report

    output = output or os.path.splitext(os.path.basename(script))[0] + "_report.html"
    saved_argv = sys.argv
    sys.argv = [script, *script_args]
    status = 0
    try:
        with report.trace(f"compile report of {os.path.basename(script)}") as t:
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as e:
                status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except Exception:  # noqa: BLE001 - report what compiled, then fail
                traceback.print_exc()
                status = 1
    finally:
        sys.argv = saved_argv
    path = t.write_html(output)
    print(f"compile report: {os.path.abspath(path)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
