"""What the workload readers show users (notes and errors) points at nothing users cannot read.

Facts are said and cited by their public source (fio's or sysbench's source and docs), never by
our own research notes, an issue number of ours, a section sign naming no document, or a path
into a private folder.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from raidlab.workload import parse_sysbench

ROOT = Path(__file__).resolve().parents[1] / "python" / "raidlab"
FILES = sorted((ROOT / "workload").glob("*.py")) + [ROOT / "commands" / "fio_options.py"]
PRIVATE = re.compile(r"research|\.\./shared|§|\bissue\b", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _shown_strings(path: Path):
    """Every string literal of the module but its docstrings (the text that can reach a user)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_shown_text_cites_private_notes(path):
    assert [(line, text) for line, text in _shown_strings(path) if PRIVATE.search(text)] == []


def test_the_sysbench_async_note_says_the_fact_and_its_public_source():
    notes = parse_sysbench("--file-test-mode=rndrd --file-io-mode=async").notes
    note = next(n for n in notes if n.startswith("sysbench async mode"))
    assert "event latency is mostly submission time" in note
    assert "sb_fileio.c" in note and not PRIVATE.search(note)
