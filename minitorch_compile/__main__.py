"""Command line: ``python -m minitorch_compile <command>``.

Commands:

``tour``   a short guided walk through the eager foundation and Dynamo (``_tour.py``);
           ``--step NAME`` (repeatable) runs only the named steps, ``--list`` names them.
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
    args = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
