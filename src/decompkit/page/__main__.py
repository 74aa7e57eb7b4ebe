"""``python -m decompkit.page [--out FOLDER] [--student ID]``: write the lecture page."""

from __future__ import annotations

import argparse
import sys

from .build import BUDGET_BYTES, build_page


def _size(folder) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="kit.py page",
        description="Write the lecture's explorers as a static page (index.html and assets/).",
    )
    parser.add_argument(
        "--out", default="lecture-page", help="folder to write (default: %(default)s)"
    )
    parser.add_argument("--student", default=None, help="start at this student's numbers")
    args = parser.parse_args(argv)
    try:
        index = build_page(args.out, student=args.student)
    except ValueError as error:
        print(f"page: {error}", file=sys.stderr)
        return 1
    size = _size(index.parent)
    within = "within" if size <= BUDGET_BYTES else "over"  # a student's run may be longer
    print(f"wrote {index} ({size / 1e6:.2f} MB, {within} the {BUDGET_BYTES / 1e6:.0f} MB budget)")
    print(
        f"open {index.resolve().as_uri()} in a browser, or copy the folder "
        f"{index.parent} to a course site or a USB stick"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
