#!/usr/bin/env python3
"""Regenerates README.md's example outputs from the commands that produce them.

An example is an HTML comment naming its source right before a fenced block::

    <!-- raidlab-example: raidlab compare -->        the block is this command's stdout
    <!-- raidlab-file: examples/designs.toml -->    the block is this file of the repository

``python3 tools/readme_examples.py`` runs every command (``raidlab ARGS`` as
``python3 -m raidlab ARGS``, from the repository root), rewrites each block in place and prints
a unified diff of what changed. ``--check`` changes nothing and exits 1 when a block differs
(tests/test_readme_examples.py checks every block the same way). Simulations are seeded, so the
same version gives the same bytes.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: A marker line, then a fenced block (any info string); group "body" is the block's text.
_EXAMPLE = re.compile(r"^<!-- raidlab-(?P<kind>example|file): (?P<source>[^\n]*?) -->\n"
                      r"(?P<fence>```[a-z]*\n)(?P<body>.*?)^```$", re.M | re.S)


@dataclass
class Example:
    kind: str  # "example" (a command's stdout) or "file" (a file's text)
    source: str  # the command, or the file's path from the repository root
    start: int  # offset of the block's body in the README
    end: int
    body: str


def examples(text: str) -> List[Example]:
    """Every marked block of ``text``, in order."""
    return [Example(m["kind"], m["source"], m.start("body"), m.end("body"), m["body"])
            for m in _EXAMPLE.finditer(text)]


def produce(example: Example, root: Path = ROOT) -> str:
    """What the block should hold: the command's stdout, or the file's text."""
    if example.kind == "file":
        return (root / example.source).read_text(encoding="utf-8")
    argv = shlex.split(example.source)
    if not argv or argv[0] != "raidlab":
        raise ValueError(f"README example {example.source!r}: only raidlab commands run")
    done = subprocess.run([sys.executable, "-m", "raidlab", *argv[1:]], cwd=root, capture_output=True,
                          text=True, timeout=900, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, PYTHONWARNINGS="ignore", COLUMNS="200"))
    if done.returncode != 0:
        raise RuntimeError(f"README example {example.source!r} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout if done.stdout.endswith("\n") else done.stdout + "\n"


def regenerate(text: str, root: Path = ROOT) -> str:
    """``text`` with every marked block replaced by what produces it."""
    out, last = [], 0
    for example in examples(text):
        out += [text[last:example.start], produce(example, root)]
        last = example.end
    return "".join(out) + text[last:]


def main(argv: List[str] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a block is stale")
    parser.add_argument("readme", nargs="?", default=str(README))
    args = parser.parse_args(argv)
    path = Path(args.readme)
    old = path.read_text(encoding="utf-8")
    new = regenerate(old, ROOT)
    diff = list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), str(path), str(path) + " (regenerated)"))
    sys.stdout.writelines(diff)
    if args.check:
        return 1 if diff else 0
    if diff:
        path.write_text(new, encoding="utf-8")
    print(f"{len(examples(old))} examples; {'README updated' if diff else 'all up to date'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
