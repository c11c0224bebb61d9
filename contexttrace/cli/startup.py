"""The command line's start-up: the cyclic garbage collector paused while its modules are imported.

Importing typer and the commands' modules makes tens of thousands of objects (functions, classes, their
dictionaries) and no reference cycle worth collecting, yet the collector walks the young ones every 700
allocations: about 25 passes before a command starts, a tenth of a small `context trace`'s CPU
(measured). `cli.app` imports this module first and calls `resume` once its own imports are done; the
run itself pauses the collector on its own terms (`runner.analyze`).
"""

from __future__ import annotations

import gc

#: Whether the collector was running when the command line's import began (it is left as it was).
WAS_ENABLED = gc.isenabled()
gc.disable()


def resume() -> None:
    """Run the collector again, when it was running before `cli.app` was imported."""
    gc.freeze()
    if WAS_ENABLED:
        gc.enable()
