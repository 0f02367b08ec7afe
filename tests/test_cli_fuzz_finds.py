"""Inputs a fuzzing pass over every command found mishandled: each now gets the one
line ``raidlab: error: ...`` and exit status 2 (or, for the last, a run that honours the limit),
where it got an internal error, a hang or a silently wrong run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from test_cli_errors import assert_one_line_error


def _fio(tmp_path: Path, text: str) -> str:
    path = tmp_path / "job.fio"
    path.write_text(text)
    return str(path)


FIO_JOBS = {
    # wait_for naming the job itself, or a job that failed to build (an IndexError before).
    "wait-for-itself": "[a]\nwait_for=a\n",
    "wait-for-a-broken-job": "[a]\nsize=512\nbs=4k\n[b]\nwait_for=a\n",
    # Superscript digits pass str.isdigit() but not int() (a ValueError before).
    "thinktime-superscript": "[j]\nrw=randread\nthinktime=\u00b2\n",
    "zones-superscript": "[j]\nrw=randread\nzonesize=1m\nsize=\u00b2z\n",
    "zoned-superscript": "[j]\nrw=randread\nrandom_distribution=zoned:\u00b2/50:50/50\n",
    # A range of sizes counted before it is listed (a MemoryError before).
    "bsrange-huge": "[j]\nrw=randread\nbsrange=512-1p\n",
}


@pytest.mark.parametrize("text", FIO_JOBS.values(), ids=FIO_JOBS.keys())
def test_fio_job_files(tmp_path, text):
    assert_one_line_error(run_cli(["sim", "--fio", _fio(tmp_path, text), "--runtime-s", "0.05"]))


def test_arabic_indic_digits_are_not_numbers(tmp_path):
    run = run_cli(["sim", "--fio", _fio(tmp_path, "[j]\nrw=randread\nthinktime=\u0661\n"), "--runtime-s", "0.05"])
    assert_one_line_error(run)
    assert "thinktime" in run.stderr


def test_plan_chunk_list_superscript():
    assert_one_line_error(run_cli(["plan", "--capacity-tb", "1", "--preset", "wal", "--chunks-kib", "\u00b2"]))


@pytest.mark.parametrize("address", ["localhost:99999", "a" * 300 + ":1"], ids=["port-range", "label-too-long"])
def test_ray_addresses(address):
    run = run_cli(["compare", "--preset", "wal", "--runtime-s", "0.05", "--ray", address])
    assert_one_line_error(run)
    assert "--ray" in run.stderr


def _simulated_document(tmp_path: Path) -> dict:
    out = tmp_path / "run.json"
    run = run_cli(["sim", "--level", "0", "--devices", "1", "--preset", "oltp-innodb", "--runtime-s", "0.05",
                   "--json", str(out)])
    assert run.status == 0, run.stderr
    return json.loads(out.read_text())


def _set(document: dict, path: str, value) -> dict:
    *parents, last = path.split("/")
    node = document
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return document


IMPORT_EDITS = {
    # A JSON integer no float holds (an OverflowError before).
    "huge-integer": ("jobs/0/write/iops", 10 ** 400),
    # Fields the HTML report reads as objects or lists (TypeError/AttributeError before).
    "job-options-not-an-object": ("jobs/0/job options", 1),
    "global-options-not-an-object": ("global options", [1]),
    "config-not-an-object": ("raidlab/config", 1),
    "config-workload-not-an-object": ("raidlab/config/workload", 1),
    "config-rebuild-not-an-object": ("raidlab/config/rebuild", 1.5),
    "config-failed-not-a-list": ("raidlab/config/failed", 3),
    "config-timeline-not-objects": ("raidlab/config/timeline", [1]),
}


@pytest.mark.parametrize("edit", IMPORT_EDITS.values(), ids=IMPORT_EDITS.keys())
def test_import_checks_what_the_reports_read(tmp_path, edit):
    document = _set(_simulated_document(tmp_path), *edit)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    html = tmp_path / "report.html"
    assert_one_line_error(run_cli(["import", str(path), "--html", str(html)]))
    assert not html.exists()


def test_import_disk_names_become_text(tmp_path):
    document = _set(_simulated_document(tmp_path), "disk_util/0/name", 5)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    run = run_cli(["import", str(path), "--html", str(tmp_path / "report.html")])
    assert run.status == 0, run.stderr


def _decode_tries(monkeypatch, text: str) -> int:
    """How many places the importer tries to decode in ``text`` (each failed try costs the
    decoder a pass over the text before it, so unbounded tries are quadratic)."""
    import raidlab.measure.importer as importer

    tries = []
    real = importer.json.JSONDecoder.raw_decode
    monkeypatch.setattr(importer.json.JSONDecoder, "raw_decode",
                        lambda self, s, idx=0: (tries.append(idx), real(self, s, idx))[1])
    try:
        importer.parse_fio_json(text, "preamble")
    except importer.ConfigError:
        pass
    return len(tries)


def test_import_tries_few_places_in_a_long_preamble(monkeypatch, tmp_path):
    # 200,000 lines that each open an object used to be tried one by one, every failed try
    # rescanning the text before it (22 s; 1 MB of them ran for minutes).
    # One try of the whole text as a document, then none: '{' then '{' starts no document.
    assert _decode_tries(monkeypatch, "\n{" * 200_000) == 1
    from raidlab.measure.importer import _TRIES

    assert _decode_tries(monkeypatch, '\n{"x' * 200_000) == 1 + _TRIES
    path = tmp_path / "preamble.json"
    path.write_text('\n{"x' * 300)
    run = run_cli(["import", str(path)])
    assert_one_line_error(run)
    assert "gave up after" in run.stderr


def test_import_finds_a_document_after_a_preamble_with_old_mac_line_ends(tmp_path):
    document = _simulated_document(tmp_path)
    path = tmp_path / "cr.json"
    path.write_text("fio: a warning\r" + json.dumps(document, indent=1).replace("\n", "\r"))
    run = run_cli(["import", str(path)])
    assert run.status == 0, run.stderr


@pytest.mark.parametrize("edit", [("rebuild", 1), ("phases", [1])], ids=["rebuild", "phases"])
def test_import_checks_report_parts_of_measured_documents(tmp_path, edit):
    document = _simulated_document(tmp_path)
    document["raidlab"]["source"] = "measured"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(_set(document, *edit)))
    assert_one_line_error(run_cli(["import", str(path), "--html", str(tmp_path / "r.html")]))


def test_unreadable_store_files_are_named(tmp_path):
    import raidlab

    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\npreset = "oltp-innodb"\nruntime-s = 0.05\n[grid]\ndevices = [4, 5]\n')
    store = tmp_path / "store"
    assert run_cli(["sweep", str(spec), "--out", str(store), "--jobs", "1"]).status == 0
    row = sorted((store / "points").glob("*.parquet"))[0]
    row.write_bytes(row.read_bytes()[: len(row.read_bytes()) // 2])  # truncated
    with pytest.raises(raidlab.errors.ConfigError, match="not a readable Parquet file"):
        raidlab.load_sweep(str(store))


@pytest.mark.parametrize("sizes", [("0", "0", "0", "0"), ("-4096", "-4096", "0", "0"), ("0", "4096", "0", "0"),
                                   ("512", "4096", "-1", "0")],
                         ids=["zero", "negative", "logical-zero", "io-min-negative"])
def test_align_sysfs_block_sizes(tmp_path, sizes):
    queue = tmp_path / "block" / "sdz" / "queue"
    queue.mkdir(parents=True)
    for name, value in zip(("logical_block_size", "physical_block_size", "minimum_io_size", "optimal_io_size"), sizes):
        (queue / name).write_text(value + "\n")
    part = tmp_path / "block" / "sdz" / "sdz1"
    part.mkdir()
    for name, value in (("partition", "1"), ("start", "2048"), ("size", "1000")):
        (part / name).write_text(value + "\n")
    assert_one_line_error(run_cli(["align", "--device", "sdz", "--sysfs-root", str(tmp_path)]))


def test_null_drive_needs_some_latency(tmp_path):
    # With 0 µs a closed loop resubmits at the same instant forever (it ran to 2e9 events).
    drive = tmp_path / "null.toml"
    drive.write_text('kind = "null"\nlatency_us = 0\n')
    run = run_cli(["sim", "--drive", str(drive), "--level", "0", "--devices", "1", "--preset", "oltp-innodb",
                   "--runtime-s", "0.01"])
    assert_one_line_error(run)
    assert "latency_us" in run.stderr


def test_sweep_grid_too_large(tmp_path):
    spec = tmp_path / "big.toml"
    devices = "[" + ", ".join(str(4 + i) for i in range(32)) + "]"
    seeds = "[" + ", ".join(str(1 + i) for i in range(200)) + "]"
    # 32 x 200 x 4 x 3 x 2 = 153,600 points.
    spec.write_text(f'[sweep]\npreset = "oltp-innodb"\n[grid]\ndevices = {devices}\nseed = {seeds}\n'
                    f'stripe-cache-size = [256, 512, 1024, 2048]\nrmw-level = [0, 1, 2]\nchunk-kib = [64, 128]\n')
    run = run_cli(["sweep", str(spec), "--out", str(tmp_path / "out"), "--jobs", "1"])
    assert_one_line_error(run)
    assert "at most 100,000" in run.stderr


def test_tiny_controller_rates_are_limits_not_unlimited(tmp_path):
    # 1e-9 MB/s rounded to 0 bytes/s, which means "no limit": the run went at full speed.
    out = tmp_path / "run.json"
    run = run_cli(["sim", "--controller", "hw", "--controller-opt", "host_link_mb_s=1e-9", "--preset",
                   "oltp-innodb", "--runtime-s", "0.05", "--level", "5", "--devices", "4", "--json", str(out)])
    assert run.status == 0, run.stderr
    document = json.loads(out.read_text())
    assert sum(job["read"]["total_ios"] + job["write"]["total_ios"] for job in document["jobs"]) == 0
