"""ARCHITECTURE.md's map and recipes name files that exist.

A recipe that names a file which has moved or gone is a recipe that no longer holds, so every
path the document quotes in backticks (`sim/block/sched/mod.rs`, `python/raidlab/run.py`,
`tests/test_import_layering.py`) must exist under one of the folders the document counts from,
and every ``*.rs`` / ``*.py`` file named in its tree must exist somewhere in the repository.
Templates (``<kind>``, ``<name>``) are skipped.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
#: The folders a path in the document may be relative to.
BASES = ["", "crates/raidlab-core/src", "crates/raidlab-core/src/sim", "crates/raidlab-core/src/device",
         "crates/raidlab-core", "crates/raidlab-core/src/settings", "python/raidlab", "python/raidlab/report",
         "python/raidlab/workload", "python/raidlab/commands", "python"]
_QUOTED = re.compile(r"`([A-Za-z0-9_./-]+\.(?:rs|py|md|toml))`")
_IN_TREE = re.compile(r"\b([A-Za-z0-9_]+\.(?:rs|py))\b")


def _exists(path: str) -> bool:
    return any((ROOT / base / path).exists() for base in BASES)


def test_every_quoted_path_exists():
    missing = sorted({p for p in _QUOTED.findall(TEXT) if "<" not in p and not _exists(p)})
    assert missing == [], f"ARCHITECTURE.md names files that do not exist: {missing}"


def test_every_file_in_the_tree_exists_in_the_repository():
    tree = TEXT.split("```")[1]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    names = {Path(p).name for p in tracked} | {p.name for p in (ROOT / "python").rglob("*.py")}
    missing = sorted({n for n in _IN_TREE.findall(tree) if n not in names})
    assert missing == [], f"ARCHITECTURE.md's tree names files that do not exist: {missing}"


def test_the_document_quotes_enough_paths_to_check():
    # The checks above would pass on an empty document: make sure they see the recipes.
    assert len(set(_QUOTED.findall(TEXT))) > 40
