"""The baseline of issue 11's ratios, as its own process: `orjson.loads` on every line of every .jsonl file
under the folders given, one core, the loop as plainly as a reader would write it.

    python benchmarks/baseline.py FOLDER...
"""

from __future__ import annotations

import os
import sys

import orjson


def main(folders: list[str]) -> int:
    loads = orjson.loads
    lines = 0
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(".jsonl"):
                    continue
                with open(os.path.join(root, name), "rb") as fh:
                    for line in fh:
                        try:  # noqa: SIM105 - the baseline's loop, kept plain
                            loads(line)
                        except orjson.JSONDecodeError:
                            pass
                        lines += 1
    print(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
