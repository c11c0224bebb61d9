"""Report builds named by their module and function, imported on their first call.

A run is given a build (a function of a `Trace` and the window) and hands it to every process that reads.
A run served from the result store calls none: its reports are decoded from the store. Naming the build
instead of importing it (`NamedBuild`) keeps such a run from importing the report code and the analysis
below it (`reports.trace` alone imports every `analysis` module `context trace` reports).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contexttrace.reading.model import Trace


@dataclass(frozen=True)
class NamedBuild:
    """A build named by its module and function, called as that function: ``NamedBuild(m, f)(trace, window)``
    is ``m.f(trace, window)``, `m` imported on the first call.

    Picklable (two strings), so a worker process receives the name and imports the module itself. The
    result store keeps its reports under the same name as the function's own (`storage.reports.build_spec`).

    >>> NamedBuild("math", "hypot")(3.0, 4.0)
    5.0
    """

    module: str
    name: str

    def __call__(self, trace: Trace, window: int | None = None) -> Any:
        return self.function()(trace, window)

    def function(self) -> Callable[..., Any]:
        """The function named (its module imported when it was not)."""
        return getattr(importlib.import_module(self.module), self.name)  # type: ignore[no-any-return]


#: `context trace`'s build, `reports.trace.build_report`: `runner.analyze`'s default.
TRACE_BUILD = NamedBuild("contexttrace.reports.trace", "build_report")
#: `context usage`'s build, `reports.usage.build_usage`.
USAGE_BUILD = NamedBuild("contexttrace.reports.usage", "build_usage")
