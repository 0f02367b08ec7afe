"""`raidlab import` checks the shape of every field its reports read, in one schema: a wrongly
typed field of a raidlab or fio document is one line and exit status 2, never an internal error
(exit 70); and a fio job missing a direction's section is said, not shown as 0."""

from __future__ import annotations

import copy
import json
import os

import pytest

from conftest import run_cli

SCALE = float(os.environ.get("RAIDLAB_FUZZ_SCALE", "1"))
CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
#: Fields the mutation test visits: fewer under CI (a few seconds), more locally, times SCALE.
FIELDS = int((40 if CI else 80) * SCALE)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """A simulated run with every part the reports read: drive events, a failure and its
    rebuild, phases, a timeline and the page cache."""
    path = tmp_path_factory.mktemp("shapes") / "sim.json"
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--preset", "wal", "--runtime-s", "2",
                   "--latent-error", "1@0.5", "--fail", "2@0.5", "--replace", "2@1", "--json", str(path)])
    assert run.status == 0, run.stderr
    document = json.loads(path.read_text())
    assert document["drive_events"] and document["timeline"] and document["phases"]
    return document


def _import(tmp_path, document, *extra):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document))
    return run_cli(["import", str(path), *extra])


def _set(document, path, value):
    changed = copy.deepcopy(document)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


@pytest.mark.parametrize("path, value, message", [
    (("drive_events", 0, "at_s"), "0.5", "drive_events[0].at_s is not a number (got \"0.5\")"),
    (("drive_events",), "latent-error", "drive_events is not a list"),
    (("drive_events", 0), 7, "drive_events is not a list of objects"),
    (("drive_events", 0, "member"), "1", "drive_events[0].member is not a member index (got \"1\")"),
    (("drive_events", 0, "event"), 3, "drive_events[0].event is not a string (got 3)"),
    (("timeline",), {}, "timeline is not a list"),
    (("timeline", 1, "t_s"), "1", "timeline[1].t_s is not a number"),
    (("data_loss",), {"at_s": 1.0, "failed_members": "1,2"}, "data_loss.failed_members is not a list"),
    (("phases", 0, "name"), 5, "phases[0].name is not a string (got 5)"),
    (("page_cache", "hit_ratio"), "high", "page_cache.hit_ratio is not a number"),
    (("array_device",), [], "array_device is not an object"),
    (("rebuild", "member"), 2.5, "rebuild.member is not a member index (got 2.5)"),
    (("raidlab", "seed"), "one", "raidlab.seed is not a whole number"),
    (("raidlab", "config", "timeline", 0, "at_s"), "x", "raidlab.config.timeline[0].at_s is not a number"),
    (("raidlab", "config", "failed"), 5, "raidlab.config.failed is not a list"),
    (("raidlab", "notes"), "one note", "raidlab.notes is not a list of strings"),
])
def test_a_wrongly_typed_field_of_a_raidlab_document_is_one_line(tmp_path, simulated, path, value, message):
    run = _import(tmp_path, _set(simulated, path, value))
    assert run.status == 2, run.stderr
    assert len(run.stderr_lines) == 1
    assert run.stderr_lines[0].startswith(f"raidlab: error: fio JSON: {message}"), run.stderr


def test_a_host_block_missing_what_its_line_reads_is_one_line(tmp_path, simulated):
    run = _import(tmp_path, _set(simulated, ("host",), {"ios": 5}))
    assert run.status == 2 and run.stderr_lines == ["raidlab: error: fio JSON: host.delayed_ios is missing"]


def _paths(value, prefix=()):
    """Every path to a value inside ``value``, containers included."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value[:2])
    else:
        return
    for key, item in items:
        yield prefix + (key,)
        yield from _paths(item, prefix + (key,))


def test_no_wrongly_typed_field_anywhere_is_an_internal_error(tmp_path, simulated):
    # Every field (the first two entries of each list), replaced by a value of each other kind:
    # the import is a table (0) or one line (2), the HTML report too.
    paths = [p for p in _paths(simulated) if "workload" not in p and "hw" not in p]
    step = max(1, len(paths) // max(FIELDS, 1))
    for path in paths[::step]:
        for value in ("x", -1, [], {}):
            for extra in ((), ("--html", str(tmp_path / "r.html"))):
                run = _import(tmp_path, _set(simulated, path, value), *extra)
                assert run.status in (0, 2), (path, value, run.stderr)
                if run.status == 2:
                    assert len(run.stderr_lines) == 1 and "internal" not in run.stderr, (path, value, run.stderr)


def _fio_job(name, **sections):
    stats = {"io_bytes": 4096000, "bw_bytes": 409600, "bw": 400, "iops": 100.0, "runtime": 10000,
             "total_ios": 1000, "clat_ns": {"min": 1, "max": 2000000, "mean": 1500000.0, "N": 1000,
                                           "percentile": {"50.000000": 1400000, "99.000000": 1900000}}}
    job = {"jobname": name, "error": 0}
    job.update({key: copy.deepcopy(stats) for key in sections if sections[key]})
    return job


def test_a_fio_job_without_a_read_section_is_noted_and_its_reads_are_not_shown(tmp_path):
    document = {"fio version": "fio-3.33", "jobs": [_fio_job("x", write=True, trim=False)]}
    run = _import(tmp_path, document)
    assert run.status == 0, run.stderr
    note = ("note: job 'x' has no 'read' section (fio writes one for every job): its reads are unknown, "
            "not 0, and are left out")
    assert note in run.stdout.splitlines()
    rows = [line.split() for line in run.stdout.splitlines() if line.startswith("x ")]
    assert [row[1] for row in rows] == ["write"] and rows[0][2] == "100"
    # With --json the note goes to stderr, and the document keeps it.
    kept = _import(tmp_path, document, "--json")
    assert kept.status == 0
    assert kept.stderr_lines == [f"raidlab: note: {tmp_path / 'doc.json'}: " + note[len("note: "):]]
    assert any(n.startswith("job 'x' has no 'read' section") for n in kept.json()["raidlab"]["notes"])


def test_a_fio_job_without_any_section_is_not_said_to_have_done_no_io(tmp_path):
    run = _import(tmp_path, {"fio version": "fio-3.33", "jobs": [_fio_job("y")]})
    assert run.status == 0, run.stderr
    notes = [line for line in run.stdout.splitlines() if line.startswith("note: ")]
    assert [n.split(" section")[0] for n in notes] == ["note: job 'y' has no 'read'", "note: job 'y' has no 'write'"]
