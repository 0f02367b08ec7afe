"""The workload package reads text only and imports nothing of raidlab outside itself.

It works without the native extension (tests/test_workload_fio.py copies only ``workload/`` and
runs it); reading a file a user names goes through :mod:`raidlab.inputs`, one layer up, in
:mod:`raidlab.workload_files`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import run_cli
from raidlab.workload import WorkloadError
from raidlab.workload_files import parse_fio_file

WORKLOAD = Path(__file__).resolve().parents[1] / "python" / "raidlab" / "workload"


def _optional(tree: ast.AST) -> set:
    """The import statements under ``try: ... except ImportError:``, which work without their module."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                                             for h in node.handlers):
            found |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    return found


def _raidlab_imports(path: Path):
    """The raidlab modules a module imports, but those it can do without (spec.py takes the
    extension's error class and bounds when they are there)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    optional = _optional(tree)
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        yield from (name for name in names if name == "raidlab" or name.startswith("raidlab."))


@pytest.mark.parametrize("path", sorted(WORKLOAD.glob("*.py")), ids=lambda p: p.name)
def test_a_workload_module_imports_only_the_workload_package(path):
    assert [n for n in _raidlab_imports(path) if not n.startswith("raidlab.workload")] == []


def test_a_fio_job_file_is_read_through_the_one_reader(tmp_path):
    path = tmp_path / "job.fio"
    path.write_text("[j]\nrw=randwrite\nbs=8k\n")
    assert parse_fio_file(path).jobs[0].block_sizes == ((8192, 100),)
    with pytest.raises(WorkloadError, match=r"^cannot read fio job file .*missing\.fio: No such file or directory$"):
        parse_fio_file(tmp_path / "missing.fio")
    (tmp_path / "bad.fio").write_bytes(b"[j]\n\xff\n")
    with pytest.raises(WorkloadError, match=r"^fio job file .*bad\.fio is not UTF-8 text"):
        parse_fio_file(tmp_path / "bad.fio")


def test_the_cli_reads_a_fio_job_file_by_its_path(tmp_path):
    path = tmp_path / "job.fio"
    path.write_text("[j]\nrw=randread\nbs=4k\nruntime=1\ntime_based\n")
    run = run_cli(["sim", "--drive", "null", "--fio", str(path), "--json"])
    assert run.status == 0, run.stderr
    assert run.json()["jobs"][0]["read"]["iops"] > 0
