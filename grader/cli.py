"""Command-line entry points: ``release`` now; ``grade`` arrives with the grader."""

import argparse

from grader.release import REPOSITORY, release


def _release(args):
    written = release(REPOSITORY)
    for path in written:
        print(f"wrote {path.relative_to(REPOSITORY)}")
    print("release: up to date" if not written else f"release: {len(written)} file(s) written")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m grader",
                                     description="Release and grade the course's notebooks.")
    commands = parser.add_subparsers(dest="command", required=True)
    release_parser = commands.add_parser(
        "release", help="regenerate notebooks/ and the reference modules from solutions/")
    release_parser.set_defaults(run=_release)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.run(args)
