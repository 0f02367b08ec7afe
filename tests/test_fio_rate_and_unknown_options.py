"""fio job files: rate_iops on mixed jobs as fio paces them, and the unknown-option error's
"did you mean" drawn from the one table of options raidlab accepts."""

from __future__ import annotations

import pytest

from raidlab.workload.fio import ACCEPTED_OPTIONS, parse_fio
from raidlab.workload.spec import WorkloadError
from conftest import refused, run_cli


def _job(text: str):
    workload = parse_fio(text)
    assert len(workload.jobs) == 1
    return workload.jobs[0], workload.notes


def _error(text: str) -> str:
    with pytest.raises(WorkloadError) as caught:
        parse_fio(text)
    return str(caught.value)


def test_one_rate_iops_value_on_a_mixed_job_paces_reads_and_writes_each_as_fio_does():
    # fio-3.33 (ioengine=null, 4 s): rate_iops=200 with rwmixread=70 ran 199.95 read and
    # 199.95 write IOPS: each direction has its own cap, so the mix is 50/50 at 400 IOPS.
    job, notes = _job("[m]\nrw=randrw\nrwmixread=70\nrate_iops=200\n")
    assert job.rate_iops == 400
    assert job.read_fraction == 0.5
    assert any("rate_iops=200" in note and "rwmixread=70" in note and "50 % reads" in note for note in notes), notes


def test_unequal_rate_caps_out_of_the_mix_set_the_read_share_from_the_caps():
    # fio-3.33: rate_iops=200,50 with rwmixread=70 ran 200.2 read and 50.0 write IOPS (80 % reads).
    job, notes = _job("[m]\nrw=randrw\nrwmixread=70\nrate_iops=200,50\n")
    assert (job.rate_iops, job.read_fraction) == (250, 0.8)
    assert any("80 % reads" in note for note in notes)


def test_rate_caps_in_the_mix_proportion_keep_the_mix_without_a_note():
    job, notes = _job("[m]\nrw=randrw\nrwmixread=70\nrate_iops=700,300\n")
    assert (job.rate_iops, job.read_fraction) == (1000, 0.7)
    assert not any("rate_iops" in note for note in notes)


def test_a_mixed_job_capping_one_direction_only_is_refused_with_the_reason():
    message = _error("[m]\nrw=randrw\nrate_iops=500,0\n")
    assert message.startswith("fio job 'm': rate_iops=500,0 caps reads only")
    assert "raidlab models one cap per job" in message


def test_cli_runs_a_mixed_job_with_one_rate_iops_value(tmp_path):
    job = tmp_path / "mixed.fio"
    job.write_text("[m]\nrw=randrw\nrwmixread=70\nrate_iops=200\nruntime=2\ntime_based\n")
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", "null", "--fio", str(job), "--json"])
    assert run.status == 0, run.stderr
    result = run.json()["jobs"][0]
    assert result["read"]["iops"] == pytest.approx(200, rel=0.05)
    assert result["write"]["iops"] == pytest.approx(200, rel=0.05)


@pytest.mark.parametrize("typo, nearest", [("numjob", "numjobs"), ("stonewal", "stonewall"),
                                           ("thinktim", "thinktime"), ("iodpeth", "iodepth"),
                                           ("group_reportin", "group_reporting")])
def test_unknown_option_names_the_nearest_accepted_options(typo, nearest):
    message = _error(f"[j]\n{typo}=1\n")
    assert message.startswith(f"fio job file line 2: unknown option '{typo}' (did you mean '{nearest}'")
    assert message.endswith("fio options, listed by raidlab fio-options")
    assert len(message) < 300


def test_unknown_option_far_from_every_name_still_says_where_the_list_is():
    message = _error("[j]\nzzqqxx=1\n")
    assert "did you mean" not in message
    assert message == (f"fio job file line 2: unknown option 'zzqqxx'; raidlab accepts {len(ACCEPTED_OPTIONS)} "
                       "fio options, listed by raidlab fio-options")


def test_the_option_list_holds_every_accepted_option_and_each_parses():
    run = run_cli(["fio-options"])
    assert run.status == 0, run.stderr
    listed = [line.split()[0] for line in run.stdout.splitlines()]
    assert listed == list(ACCEPTED_OPTIONS)
    for name in ("stonewall", "numjobs", "thinktime", "rate_iops", "group_reporting", "norandommap", "readwrite"):
        assert name in listed
    for name in ("read_iolog", "trim_percentage", "foo"):
        assert name not in listed
    assert ["readwrite", "alias", "of", "rw"] in [line.split() for line in run.stdout.splitlines()]


def test_cli_unknown_fio_option_is_one_line_with_the_nearest_name(tmp_path):
    job = tmp_path / "typo.fio"
    job.write_text("[j]\nrw=randread\nnumjob=4\n")
    run = run_cli(["sim", "--level", "5", "--devices", "4", "--drive", "null", "--fio", str(job)])
    refused(run, "unknown option 'numjob' (did you mean 'numjobs'")
