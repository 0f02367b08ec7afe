"""Names from inputs (fio job names, imported job and disk names, sysfs partition names, words
quoted in an error line) are printed with their control characters escaped, so a name cannot
reset, retitle or recolour the reader's terminal; JSON keeps the raw string."""

from __future__ import annotations

import json
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from raidlab.terminal import printable

from conftest import run_cli

SCALE = float(os.environ.get("RAIDLAB_FUZZ_SCALE", "1"))
#: C0 (but newline, which separates lines), DEL, C1, lone surrogates, the bidi overrides.
RAW = set(chr(c) for c in range(0x20) if c != 0x0A) | set(chr(c) for c in range(0x7F, 0xA0)) \
    | {"\ud800", "\udcff", "\u202e", "\u2066", "\u2028", "\u200f"}


def raw_controls(text: str):
    return sorted({c for c in text if c in RAW or 0xD800 <= ord(c) <= 0xDFFF})


def test_printable_shows_each_control_as_its_escape():
    assert printable("a\x1bcb") == "a\\x1bcb"
    assert printable("\x00\x07\t\n\x7f\x85\x9b") == "\\x00\\x07\\x09\\x0a\\x7f\\x85\\x9b"
    assert printable("evil\u202etxt.exe \u2066x\u2069 \u2028") == "evil\\u202etxt.exe \\u2066x\\u2069 \\u2028"
    assert printable("/tmp/\udcff.json") == "/tmp/\\udcff.json"
    assert printable("a\nb\x1b", keep="\n") == "a\nb\\x1b"


def test_printable_leaves_ordinary_text_of_any_script_alone():
    for text in ("job1", "中文ジョブ", "café naïve", "emoji 😀", "C:\\path\\x", "tab-free, ümlaut"):
        assert printable(text) == text


@settings(max_examples=max(20, int(200 * SCALE)), deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x3000), max_size=40))
def test_printable_output_holds_no_control_and_is_stable(text):
    shown = printable(text)
    assert not raw_controls(shown) and "\n" not in shown
    assert printable(shown) == shown


def _job_file(tmp_path, name: str, size: str = "64m"):
    path = tmp_path / "job.fio"
    path.write_text(f"[{name}]\nrw=randread\nbs=4k\nruntime=1\ntime_based\nsize={size}\n")
    return str(path)


def test_a_fio_job_name_that_resets_the_terminal_is_shown_escaped_in_the_table(tmp_path):
    run = run_cli(["sim", "--level", "0", "--devices", "1", "--drive", "null", "--fio",
                   _job_file(tmp_path, "a\x1bcb")])
    assert run.status == 0, run.stderr
    assert not raw_controls(run.stdout)
    job_row = next(line for line in run.stdout.splitlines() if line.startswith("a\\x1bcb "))
    assert job_row.split()[1] == "read"


def test_a_note_quoting_a_job_name_is_shown_escaped(tmp_path):
    # The job asks for more than the array holds: the note names the job.
    run = run_cli(["sim", "--level", "0", "--devices", "1", "--drive", "null", "--partition-gib", "0.0625",
                   "--fio", _job_file(tmp_path, "n\x1bc\x07", size="128m")])
    assert run.status == 0, run.stderr
    notes = [line for line in run.stderr_lines if line.startswith("raidlab: note: job ")]
    assert notes and "n\\x1bc\\x07" in notes[0]
    assert not raw_controls(run.stderr)


def _fio_document(jobname: str, disk: str) -> dict:
    stats = {"io_bytes": 4096, "bw_bytes": 4096, "bw": 4, "iops": 1.0, "runtime": 1000, "total_ios": 1,
             "clat_ns": {"min": 1, "max": 2, "mean": 1.5, "N": 1, "percentile": {"50.000000": 1}}}
    return {"fio version": "fio-3.33", "jobs": [{"jobname": jobname, "read": stats, "write": dict(stats)}],
            "disk_util": [{"name": disk, "read_ios": 1, "write_ios": 1, "util": 5.0}]}


def test_imported_job_and_disk_names_are_shown_escaped_and_kept_raw_in_json(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(_fio_document("j\x1b[2J\u202e", "sd\x9bz")))
    run = run_cli(["import", str(path)])
    assert run.status == 0, run.stderr
    assert not raw_controls(run.stdout + run.stderr)
    assert any(line.startswith("j\\x1b[2J\\u202e ") for line in run.stdout.splitlines())
    assert any(line.startswith("sd\\x9bz ") for line in run.stdout.splitlines())
    kept = run_cli(["import", str(path), "--json"])
    assert kept.status == 0, kept.stderr
    assert kept.json()["jobs"][0]["jobname"] == "j\x1b[2J\u202e"
    assert kept.json()["disk_util"][0]["name"] == "sd\x9bz"


def test_a_raidlab_documents_strings_are_shown_escaped(tmp_path):
    path = tmp_path / "sim.json"
    made = run_cli(["sim", "--level", "0", "--devices", "1", "--drive", "null", "--fio",
                    _job_file(tmp_path, "plain"), "--json", str(path)])
    assert made.status == 0, made.stderr
    document = json.loads(path.read_text())
    document["raidlab"]["version"] = "0.1\x1bc"
    document["raidlab"]["truncated"] = "cut\x07"
    document["disk_util"][0]["name"] = "m\x1b[31m"
    path.write_text(json.dumps(document))
    run = run_cli(["import", str(path)])
    assert run.status == 0, run.stderr
    assert not raw_controls(run.stdout)
    assert "raidlab 0.1\\x1bc" in run.stdout and "note: cut\\x07" in run.stdout
    assert "m\\x1b[31m" in run.stdout


def test_the_html_report_shows_a_job_names_controls_escaped(tmp_path):
    report = tmp_path / "r.html"
    run = run_cli(["sim", "--level", "0", "--devices", "1", "--drive", "null", "--fio",
                   _job_file(tmp_path, "h\x1bc"), "--html", str(report)])
    assert run.status == 0, run.stderr
    text = report.read_text()
    assert "\x1b" not in text and "h\\x1bc" in text


def test_sysfs_partition_names_are_shown_escaped_in_align(tmp_path):
    base = tmp_path / "block" / "sda"
    (base / "queue").mkdir(parents=True)
    for key, value in {"logical_block_size": 512, "physical_block_size": 4096, "minimum_io_size": 4096,
                       "optimal_io_size": 0}.items():
        (base / "queue" / key).write_text(f"{value}\n")
    part = base / "sda\x1bc1"
    part.mkdir()
    (part / "partition").write_text("1\n")
    (part / "start").write_text("63\n")
    (part / "size").write_text("1000\n")
    run = run_cli(["align", "--device", "sda", "--sysfs-root", str(tmp_path)])
    assert run.status == 1, run.stderr
    assert not raw_controls(run.stdout)
    assert "/dev/sda\\x1bc1 starts at byte 32256" in run.stdout
    assert any(line.startswith("/dev/sda\\x1bc1 ") for line in run.stdout.splitlines())
    kept = run_cli(["align", "--device", "sda", "--sysfs-root", str(tmp_path), "--json"])
    assert kept.json()["partitions"][0]["node"] == "/dev/sda\x1bc1"


def test_an_error_line_shows_the_quoted_input_escaped():
    # The core's message quotes the level as given.
    run = run_cli(["sim", "--level", "5\x1bc\u202e", "--preset", "wal"])
    assert run.status == 2
    assert run.stderr_lines == ["raidlab: error: unknown RAID level '5\\x1bc\\u202e': expected one of "
                                "0, 1, 4, 5, 6, 10"]
