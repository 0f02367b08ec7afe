"""JSON inputs (sfdisk dumps, fio JSON): nesting is capped at the loading root, fio's fields are
validated by path, and ``import`` says when fio reported a failed job, no I/O or trims."""

from __future__ import annotations

import json

import pytest

from conftest import refused, run_cli
from raidlab.inputs import MAX_NESTING


# -- JSON: nesting capped at the loading root; fio JSON fields validated by path -------------------


def test_deeply_nested_sfdisk_json_is_refused(tmp_path):
    # Before: RecursionError, exit 1.
    dump = tmp_path / "deep.json"
    dump.write_text("[" * 100_000 + "]" * 100_000)
    refused(run_cli(["align", str(dump)]), f"nested more than {MAX_NESTING} levels deep")
    shallow = tmp_path / "shallow.json"
    shallow.write_text('{"partitiontable": {"x": ' + "[" * 80 + "]" * 80 + "}}")
    refused(run_cli(["align", str(shallow)]), f"nested more than {MAX_NESTING} levels deep")


def test_deeply_nested_fio_json_is_refused(tmp_path):
    doc = tmp_path / "deep.json"
    doc.write_text('{"jobs": [{"x": ' + "[" * 900 + "]" * 900 + "}]}")
    refused(run_cli(["import", str(doc)]), f"nested more than {MAX_NESTING} levels deep")
    deeper = tmp_path / "deeper.json"
    deeper.write_text('{"jobs": ' + "[" * 100_000 + "]" * 100_000 + "}")
    refused(run_cli(["import", str(deeper)]), f"nested more than {MAX_NESTING} levels deep")


def _fio_doc(**read) -> dict:
    stats = {"io_bytes": 4096, "bw_bytes": 4096, "bw": 4, "iops": 1.0, "runtime": 1000, "total_ios": 1,
             "clat_ns": {"min": 1, "max": 2, "mean": 1.5, "N": 1, "percentile": {"50.000000": 1}}}
    stats.update(read)
    # fio writes every direction's section; an idle one counts zeros.
    idle = {"io_bytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    return {"fio version": "fio-3.33", "jobs": [{"jobname": "j", "read": stats, "write": idle}]}


@pytest.mark.parametrize("doc, fragment", [
    ('{"jobs": [{"read": {"iops": NaN, "total_ios": 1}}]}', "jobs[0].read.iops is NaN, which is not a JSON number"),
    (json.dumps(_fio_doc(iops=-5)), "jobs[0].read.iops must be a finite number of at least 0, got -5"),
    (json.dumps(_fio_doc(iops=1e400)), "jobs[0].read.iops is Infinity, which is not a JSON number"),
    ('{"jobs": [{"usr_cpu": -Infinity}]}', "jobs[0].usr_cpu is -Infinity, which is not a JSON number"),
    (json.dumps(_fio_doc(clat_ns={"percentile": {"50.000000": "fast"}})),
     'jobs[0].read.clat_ns.percentile.50.000000 is not a number (got "fast")'),
    (json.dumps(_fio_doc(runtime=None)), "jobs[0].read.runtime is not a number (got null)"),
    (json.dumps({"jobs": [{"read": {"total_ios": 1}}], "disk_util": [{"name": "sda", "queue_depth_mean": "x"}]}),
     "disk_util[0].queue_depth_mean is not a number"),
    (json.dumps({**_fio_doc(), "raidlab": {"simulated_ns": 5, "seed": 1, "version": "x"}}),
     "raidlab.truncated is missing"),
    (json.dumps({**_fio_doc(), "raidlab": {"simulated_ns": 5, "events": 1, "seed": 1, "version": "x",
                                           "truncated": None}, "rebuild": {"member": 0, "extrapolated": False}}),
     "rebuild.start_s is not a number"),
])
def test_fio_json_fields_are_checked_by_path(tmp_path, doc, fragment):
    # Before: NaN and negative IOPS were imported; missing or mistyped fields were exit 1.
    path = tmp_path / "run.json"
    path.write_text(doc)
    refused(run_cli(["import", str(path)]), "fio JSON: " + fragment)


def test_import_says_when_fio_reports_a_failed_job_no_io_or_trims(tmp_path):
    """A job with fio's error 5, a run where fio started nothing and a trim job each import with a
    note saying so (they used to import as clean tables with nothing said)."""
    def imported(doc: dict) -> str:
        path = tmp_path / "run.json"
        path.write_text(json.dumps(doc))
        run = run_cli(["import", str(path)])
        assert run.status == 0, run.stderr
        as_json = run_cli(["import", str(path), "--json"])
        # The table lists the notes; with --json, they go to stderr.
        assert [line[len("note: "):] for line in run.stdout.splitlines() if line.startswith("note: ")] == \
            [line.split(f"{path}: ", 1)[1] for line in as_json.stderr.splitlines()]
        return run.stdout

    assert "note:" not in imported(_fio_doc())  # a clean run: nothing to say
    failed = _fio_doc()
    failed["jobs"][0]["error"] = 5
    assert "job 'j' ended with fio error 5 (Input/output error)" in imported(failed)
    nothing = _fio_doc(total_ios=0, io_bytes=0, bw_bytes=0, bw=0, iops=0.0)
    assert "job 'j' did no I/O" in imported(nothing)
    trims = _fio_doc()
    trims["jobs"][0]["trim"] = {"io_bytes": 8192, "bw_bytes": 8192, "bw": 8, "iops": 2.0, "runtime": 1000,
                                "total_ios": 2, "clat_ns": {"min": 1, "max": 2, "mean": 1.5, "N": 2}}
    assert "job 'j' trimmed 2 times" in imported(trims)
    # The notes go with the document too (raidlab measure runs through the same import).
    from raidlab.measure import importer

    assert any("ended with fio error 5" in n for n in importer.to_document(failed)["raidlab"]["notes"])
    # A block's notes must be a list of lines (a string used to be printed a letter a line).
    failed["raidlab"] = {"source": "measured", "notes": "oops"}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(failed))
    refused(run_cli(["import", str(path)]), "raidlab.notes is not a list of strings")
