"""A worker process of `runner`: `python -m contexttrace._worker`.

It reads tasks from standard input and writes results to standard output, each a pickle behind an
8-byte little-endian length, until its input closes. A task is a function of the package and its
arguments (`runner._read_built`, `reader.read_tail`); a result is what that returns. A forked worker
runs the same `serve` over two pipes. Being started as its own module (not through
`multiprocessing`'s spawn), it never imports the caller's main script, so a script that calls
`analyze` without an `if __name__ == "__main__":` guard still works.
"""

from __future__ import annotations

import gc
import pickle
import sys
from typing import IO


def serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """Answer the tasks read from `inp` on `out` until `inp` closes.

    A task that raises (or whose answer cannot be pickled) is answered with None: the parent then does it
    itself, where the same exception becomes that trace's failure. The cyclic garbage collector stays off for the worker's life, as in the parent's run
    (`runner._analyze`): the tasks make no reference cycles, and each collection would walk every
    object the last answer left alive.
    """
    from .runner import _HEADER

    gc.disable()
    while True:
        header = inp.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        (size,) = _HEADER.unpack(header)
        try:
            function, args = pickle.loads(inp.read(size))
            blob = pickle.dumps(function(*args), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # the firewall: None means "not done", and the parent does the task itself
            blob = pickle.dumps(None)
        out.write(_HEADER.pack(len(blob)))
        out.write(blob)
        out.flush()


if __name__ == "__main__":
    answers = sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed by accident must not corrupt the result stream
    serve(sys.stdin.buffer, answers)
