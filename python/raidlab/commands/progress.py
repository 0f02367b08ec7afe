"""The one progress bar every long command shows (sim, plan, measure, calibrate): on stderr,
only when stderr is a terminal, and never when the user asked for a JSON document."""

from __future__ import annotations

import sys
from typing import Callable, Optional

import click

from raidlab.terminal import printable

#: Steps of the bar: fractions are shown to 0.1 %.
_STEPS = 1000


def wanted(json_requested: bool) -> bool:
    """Whether to draw a bar: stderr is a terminal (not a pipe or a file) and no JSON document
    was asked for (a script asking for JSON gets a clean stderr), as ``raidlab sim`` decides."""
    stream = sys.stderr
    return not json_requested and stream is not None and hasattr(stream, "isatty") and stream.isatty()


class ProgressBar:
    """A progress bar on stderr (only when enabled), fed fractions 0..1."""

    def __init__(self, enabled: bool, label: str) -> None:
        shown = printable(label)
        self.bar = click.progressbar(length=_STEPS, label=shown, file=sys.stderr) if enabled else None
        self.shown = 0
        if self.bar is not None:
            self.bar.__enter__()

    def __call__(self, fraction: float) -> None:
        if self.bar is None:
            return
        done = int(_STEPS * min(max(fraction, 0.0), 1.0))
        if done > self.shown:
            self.bar.update(done - self.shown)
            self.shown = done

    @property
    def callback(self) -> Optional[Callable[[float], None]]:
        return self if self.bar is not None else None

    def counter(self, total: int) -> Callable[[int], None]:
        """A callback fed counts of finished items (of ``total``) instead of fractions."""
        finished = [0]

        def tick(count: int) -> None:
            finished[0] += count
            self(finished[0] / total if total > 0 else 1.0)

        return tick

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
