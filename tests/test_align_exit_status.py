"""``raidlab align`` exits 0 when every partition is aligned, 1 when it checked and found one
misaligned, 2 for bad input; an internal error or a closed pipe is neither a finding nor a bug."""

from __future__ import annotations

import json

from conftest import run_cli, run_process

# sfdisk -J dumps: a DOS table at sector 63 (misaligned everywhere) and one at 2048.
DOS_63 = json.dumps({"partitiontable": {"label": "dos", "device": "/dev/sdb", "unit": "sectors",
                                        "sectorsize": 512, "partitions": [
                                            {"node": "/dev/sdb1", "start": 63, "size": 585871902}]}})
DOS_2048 = json.dumps({"partitiontable": {"label": "dos", "device": "/dev/sdc", "unit": "sectors",
                                          "sectorsize": 512, "partitions": [
                                              {"node": "/dev/sdc1", "start": 2048, "size": 585869312}]}})


def _dump(tmp_path, text):
    path = tmp_path / "dump.json"
    path.write_text(text)
    return str(path)


# -- align: 0 aligned, 1 checked and misaligned, 2 bad input ---------------------------------


def test_align_exits_1_when_a_partition_is_misaligned(tmp_path):
    run = run_process(["align", _dump(tmp_path, DOS_63), "--chunk-kib", "64"])
    assert run.status == 1
    assert run.stderr == ""  # a finding, not an error
    assert "32256 bytes into a 64 KiB chunk" in run.stdout and "recreate it at sector 2048" in run.stdout


def test_align_exits_1_for_a_stripe_misaligned_partition_in_json_too(tmp_path):
    # 1 MiB is chunk-aligned but not a multiple of raid5 x4's 192 KiB stripe.
    run = run_process(["align", _dump(tmp_path, DOS_2048), "--level", "5", "--devices", "4",
                       "--chunk-kib", "64", "--json"])
    assert run.status == 1
    report = json.loads(run.stdout)
    assert report["aligned"] is False and report["partitions"][0]["status"] == "stripe-misaligned"


def test_align_exits_0_when_every_partition_is_aligned(tmp_path):
    run = run_process(["align", _dump(tmp_path, DOS_2048), "--chunk-kib", "64"])
    assert run.status == 0, run.stderr
    assert "Every partition is aligned" in run.stdout


def test_align_bad_input_is_still_2(tmp_path):
    run = run_process(["align", _dump(tmp_path, "{not json"), "--chunk-kib", "64"])
    assert run.status == 2
    assert run.stderr.splitlines() == [run.stderr.strip()] and "not JSON" in run.stderr


def test_align_help_documents_its_exit_statuses():
    run = run_cli(["align", "--help"])
    assert run.status == 0
    text = " ".join(run.stdout.split())
    assert "Exit status:" in text
    assert "0 every partition is aligned" in text
    assert "1 checked: at least one partition is misaligned" in text
    assert "2 bad input" in text


def test_an_internal_error_is_not_mistaken_for_findings(tmp_path, monkeypatch):
    from raidlab import align as aligner
    from raidlab import cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(aligner, "check", broken)
    run = run_cli(["align", _dump(tmp_path, DOS_2048), "--chunk-kib", "64"])
    assert run.status == cli.EXIT_INTERNAL == 70
    assert cli.EXIT_FINDINGS == 1 and cli.EXIT_USAGE == 2
    assert run.stderr_lines == ["raidlab: error: internal error (ZeroDivisionError): boom"]


def test_a_closed_pipe_is_neither_a_finding_nor_a_bug(tmp_path, monkeypatch):
    # main's mapping of a BrokenPipeError that reaches it (click.main, or a direct invoke).
    from raidlab import cli

    def closed(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli.cli, "main", closed)
    monkeypatch.setattr(cli.cli, "invoke", closed)
    monkeypatch.setattr(cli, "_silence_stdout", lambda: None)
    assert cli.main(["align", _dump(tmp_path, DOS_2048)]) == cli.EXIT_BROKEN_PIPE == 141
