"""The one fio option table: every option once, every record reachable, every consumer derived from it.

The job-file parser dispatches on :data:`raidlab.workload.fio_options.TABLE`, ``raidlab
fio-options`` lists it, refusals quote its reasons and the no-effect note its notes; these tests
check each of those against the table itself.
"""

from __future__ import annotations

import collections
import dataclasses

import pytest

from conftest import run_cli
from raidlab.workload import parse_fio
from raidlab.workload.fio_options import MODELLED, NO_EFFECT, REFUSED, TABLE, lookup
from raidlab.workload.spec import Job, Workload

#: A value each option takes, where "1" (or the first of an enumerated option's values) does not
#: fit its grammar, and the options another one needs beside it to make a whole job.
SAMPLE = {
    "rw": "randread", "bs": "4k", "bssplit": "4k/50:8k/50", "blockalign": "4k", "ioengine": "libaio",
    "size": "1m", "io_size": "1m", "offset": "0", "random_distribution": "zipf:1.2", "ss": "iops:1",
    "name": "renamed", "kb_base": "1000", "bsrange": "4k-8k", "wait_for": "first", "zonesize": "1m",
    "zoneskip": "1m", "zonerange": "1m", "zonecapacity": "1m", "offset_increment": "1m", "filesize": "1m",
}
COMPANIONS = {"ss": "ss_dur=60\n", "ss_dur": "ss=iops:1\n", "ss_ramp": "ss=iops:1\nss_dur=60\n"}


def one_option_job(option) -> str:
    value = SAMPLE.get(option.name, option.values[0] if option.values else "1")
    return f"[first]\n[j]\n{option.name}={value}\n{COMPANIONS.get(option.name, '')}"


def test_every_name_and_alias_appears_once():
    names = collections.Counter(name for option in TABLE for name in (option.name, *option.aliases))
    assert [name for name, count in names.items() if count > 1] == []


def test_every_record_has_a_status_and_what_its_status_needs():
    for option in TABLE:
        assert option.status in (MODELLED, NO_EFFECT, REFUSED), option.name
        if option.status == MODELLED:
            assert option.parse is not None, f"{option.name} is modelled but nothing reads it"
        if option.status == REFUSED:
            assert option.note and option.parse is None and not option.aliases, option.name


def test_where_an_option_lands_is_a_field_of_the_job_or_the_workload():
    fields = {field.name for field in dataclasses.fields(Job)} | {field.name for field in dataclasses.fields(Workload)}
    fields |= {"notes", "report_groups", "reporting"}  # the Workload's notes and reporting groups
    for option in TABLE:
        assert set(option.lands) <= fields, option.name


#: Options fio uses on a part of the I/O raidlab simulates, which that part does not take yet:
#: ``openfiles`` below ``nrfiles`` makes fio serve only the files it holds open (io_u.c
#: ``get_next_file_rand``/``_rr`` return EBUSY rather than open one more); ``io_submit_mode=inline``
#: (the default) drains the queue before each rate pause (io_u.c ``rate_ddir`` calls
#: ``io_u_quiesce``), which raidlab's rate pacing never does; ``zonerange`` is the width of a
#: strided zone (io_u.c ``setup_strided_zone_mode``), which raidlab takes to be ``zonesize``
#: (fio's default, init.c); ``zonecapacity`` is the writable part of an emulated zbd zone (zbd.c
#: ``init_zone_info``), which raidlab writes to its end. Each is read and checked as fio does, and
#: changes nothing yet.
NOT_YET_TAKEN = {"openfiles", "io_submit_mode", "zonerange", "zonecapacity"}


@pytest.mark.parametrize("option", [o for o in TABLE if o.status == MODELLED], ids=lambda o: o.name)
def test_each_modelled_option_parses_in_a_one_option_job(option):
    workload = parse_fio(one_option_job(option))
    if option.name not in NOT_YET_TAKEN:
        assert not any("no effect" in note and option.name in note for note in workload.notes)


@pytest.mark.parametrize("option", [o for o in TABLE if o.status == MODELLED and o.name != "kb_base"],
                         ids=lambda o: o.name)
def test_a_modelled_option_lands_somewhere(option):
    # (kb_base lands nowhere itself: it sets how the other options' sizes read.)
    if option.name in NOT_YET_TAKEN:
        assert set(option.lands) <= {"notes"}, f"{option.name} is taken now: drop it from NOT_YET_TAKEN"
    else:
        assert option.lands, f"{option.name} is modelled but lands in no field"


@pytest.mark.parametrize("name", ["iodepth_batch_submit", "iodepth_batch_complete_max", "rate_cycle"])
def test_options_that_only_shape_system_calls_or_an_unenforced_check_have_no_effect(name):
    # iodepth_batch_submit/_complete_max: how many I/Os one io_submit/io_getevents call takes
    # (fio commits what is queued before it waits, ioengines.c td_io_getevents), and raidlab's
    # host spends no time in calls; rate_cycle: the window of rate_min and rate_iops_min
    # (backend.c check_min_rate), which raidlab does not enforce.
    assert lookup(name).status == NO_EFFECT
    run = run_cli(["fio-options"])
    assert [name, "accepted, no effect on the simulated I/O"] in [line.split(None, 1) for line in run.stdout.splitlines()]


def _changed_fields(workload: Workload, plain: Workload) -> set:
    """The Job fields (and the Workload's reporting groups) in which ``workload`` differs from ``plain``."""
    changed = {field.name for job, other in zip(workload.jobs, plain.jobs) for field in dataclasses.fields(Job)
               if getattr(job, field.name) != getattr(other, field.name)}
    if workload.report_groups != plain.report_groups:
        changed.add("report_groups")
    if workload.group_reporting != plain.group_reporting:
        changed.add("reporting")
    return changed


#: A job that reads and writes, at depth, over a region for a while: most options show here.
CONTEXT = "rw=randrw\nioengine=libaio\niodepth=8\nsize=64m\nruntime=10\n"


@pytest.mark.parametrize("option", [o for o in TABLE if o.status == MODELLED and o.name != "kb_base"],
                         ids=lambda o: o.name)
@pytest.mark.parametrize("context", ["", CONTEXT], ids=["plain", "mixed"])
def test_a_modelled_option_changes_only_the_fields_it_lands_in(option, context):
    # (kb_base is left out: it changes how every other option's size reads, so any size field.)
    plain = parse_fio("[first]\n[j]\n" + context)
    workload = parse_fio(one_option_job(option).replace("[j]\n", "[j]\n" + context))
    assert _changed_fields(workload, plain) <= set(option.lands)


@pytest.mark.parametrize("option", [o for o in TABLE if o.status == NO_EFFECT], ids=lambda o: o.name)
def test_each_option_without_effect_is_accepted_with_its_note(option):
    workload = parse_fio(one_option_job(option))
    assert workload.jobs == parse_fio("[first]\n[j]\n").jobs
    if option.quiet:
        assert workload.notes == ()
    elif option.note:
        assert workload.notes == (option.note,)
    else:
        assert workload.notes == (f"fio option {option.name} has no effect on the simulated I/O",)


@pytest.mark.parametrize("option", [o for o in TABLE if o.status == REFUSED], ids=lambda o: o.name)
def test_each_refused_option_is_one_error_line_with_its_reason(option):
    run = run_cli(["sim", "--drive", "null", "--fio", f"[j]\nrw=read\n{option.name}=1\n"])
    assert run.status == 2
    assert run.stderr_lines == [f"raidlab: error: fio job file line 3: fio option {option.name!r} {option.note}"]


@pytest.mark.parametrize("option", [o for o in TABLE if o.aliases], ids=lambda o: o.name)
def test_an_alias_reads_as_its_option(option):
    text = one_option_job(option)
    by_name = parse_fio(text)
    for alias in option.aliases:
        assert lookup(alias) is option
        by_alias = parse_fio(text.replace(f"\n{option.name}=", f"\n{alias}="))
        assert (by_alias.jobs, by_alias.notes) == (by_name.jobs, by_name.notes)


def test_the_option_list_is_exactly_the_table():
    run = run_cli(["fio-options"])
    assert run.status == 0, run.stderr
    listed = [line.split(None, 1) for line in run.stdout.splitlines()]
    fate = {MODELLED: "modelled", NO_EFFECT: "accepted, no effect on the simulated I/O"}
    expected = {option.name: fate[option.status] for option in TABLE if option.status != REFUSED}
    expected.update({alias: f"alias of {option.name}" for option in TABLE for alias in option.aliases})
    assert listed == sorted([name, text] for name, text in expected.items())


def test_kb_base_is_modelled_so_it_gets_no_note_that_it_has_no_effect():
    workload = parse_fio("[j]\nkb_base=1000\nsize=4KiB\n")
    assert workload.jobs[0].size_bytes == 4096
    assert workload.notes == ()


def test_suggestions_come_from_the_accepted_names_of_the_table():
    # an alias is suggested as written; a refused option never is (it is not accepted)
    run = run_cli(["sim", "--drive", "null", "--fio", "[j]\nblocksiz=4k\n"])
    assert run.status == 2
    assert run.stderr_lines[0].startswith("raidlab: error: fio job file line 2: unknown option 'blocksiz' "
                                          "(did you mean 'blocksize'")
    run = run_cli(["sim", "--drive", "null", "--fio", "[j]\nread_iolo=x\n"])
    assert "did you mean" not in run.stderr_lines[0]


def test_no_refusal_sends_a_fio_iolog_to_raidlab_replay():
    # raidlab replay reads DiskSim traces, not fio's I/O logs
    assert [o.name for o in TABLE if "raidlab replay" in o.note] == []
    assert lookup("replay_redirect").note == ("redirects the devices of a replayed fio I/O log (read_iolog), "
                                              "which raidlab does not read")
