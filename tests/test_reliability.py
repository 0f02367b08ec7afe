"""`raidlab reliability` and :mod:`raidlab.reliability` end to end.

Textbook values: the exact chains' closed forms and Harris's URE example (ZDNet 2007), computed
by hand (as in crates/raidlab-core/tests/reliability.rs).
"""

from __future__ import annotations

import json
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import raidlab
from raidlab import reliability as rel
from raidlab.errors import ConfigError, RaidlabError

from conftest import run_cli, run_process

HOURS_PER_YEAR = 8760.0


def cli_json(*args: str) -> dict:
    run = run_cli(["reliability", *args, "--json"])
    assert run.status == 0, run.stderr
    return run.json()


# ---- textbook values ------------------------------------------------------------------------

def test_greenan_raid5_exact_vs_approximation():
    # N = 8, MTTF 461,386 h, MTTR 12 h: exact CTMC 36,176 y, PGK approximation 36,162 y.
    doc = cli_json("--level", "5", "--devices", "8", "--mttf-hours", "461386", "--mttr-hours", "12",
                   "--mission-years", "10", "--trials", "0")
    assert doc["mttdl_years"] == pytest.approx(36_176, rel=1e-4)
    assert doc["mttdl_years_approx"] == pytest.approx(36_162, rel=1e-4)
    assert doc["mttdl_years"] - doc["mttdl_years_approx"] > 10
    assert doc["p_array_loss"] == pytest.approx(2.763e-4, rel=1e-3)
    assert doc["monte_carlo"] is None
    assert [round(point["years"]) for point in doc["curve"]] == list(range(1, 11))


def test_raid6_chen_and_serial_values():
    doc = cli_json("--level", "6", "--devices", "8", "--mttf-hours", "461386", "--mttr-hours", "12",
                   "--repair-policy", "serial", "--trials", "0")
    assert doc["mttdl_years"] == pytest.approx(2.318e8, rel=5e-4)
    assert doc["mttdl_years_approx"] == pytest.approx(2.317e8, rel=5e-4)
    parallel = cli_json("--level", "6", "--devices", "8", "--mttf-hours", "461386",
                        "--mttr-hours", "12", "--repair-policy", "parallel", "--trials", "0")
    assert parallel["mttdl_years"] == pytest.approx(4.636e8, rel=5e-4)


def test_default_afr_raid5_figure():
    # AFR 1.5 %, MTTR 24 h, N = 8: 2.855e4 y and P(5 y) = 1.75e-4 (computed from the chain).
    doc = cli_json("--level", "5", "--devices", "8", "--mttr-hours", "24", "--trials", "0")
    assert doc["inputs"]["afr_pct"] == 1.5
    assert doc["mttdl_years"] == pytest.approx(2.855e4, rel=5e-4)
    assert doc["p_array_loss"] == pytest.approx(1.75e-4, rel=2e-3)


@pytest.mark.parametrize("uber,want,tolerance", [(1e-14, 0.617, 5e-4), (1e-15, 0.0915, 5e-5)])
def test_harris_ure_during_rebuild(uber, want, tolerance):
    # 7 x 2 TB RAID5 reads 12 TB to rebuild one member (Harris 2007).
    doc = cli_json("--level", "5", "--devices", "7", "--capacity-tb", "2", "--uber", str(uber),
                   "--trials", "0")
    assert doc["rebuild"]["read_bytes"] == pytest.approx(12e12, rel=1e-3)
    assert abs(doc["rebuild"]["p_ure"] - want) <= tolerance
    # md records a bad block and carries on: sectors, not the array.
    assert doc["p_sector_loss"] > 100 * doc["p_array_loss"]


def test_ure_fails_array_turns_sector_faults_into_array_loss():
    base = ["--level", "5", "--devices", "8", "--capacity-tb", "16", "--trials", "0"]
    md = cli_json(*base)
    hw = cli_json(*base, "--ure-fails-array")
    assert hw["p_array_loss"] == pytest.approx(md["p_sector_loss"], rel=1e-9)
    assert hw["mttdl_years"] < md["mttdl_years"] / 100


# ---- Monte Carlo ----------------------------------------------------------------------------

@pytest.mark.parametrize("level,devices,layout", [("5", 8, None), ("6", 6, None), ("10", 5, "f2")])
def test_monte_carlo_agrees_with_the_exact_chain(level, devices, layout):
    result = rel.analyze(level=level, devices=devices, layout=layout, capacity_tb=8, afr_pct=5,
                         weibull_shape=1.0, mttr_hours=72, repair_distribution="exponential",
                         trials=20_000, seed=7)
    doc = result.to_dict()
    mc = doc["monte_carlo"]
    for key in ("p_array_loss", "p_sector_loss"):
        estimate = mc[key]
        z = (estimate["mean"] - doc[key]) / estimate["std_error"]
        assert abs(z) < 2.576, (key, doc[key], estimate)
        assert estimate["std_error"] < 0.06 * estimate["mean"]
        low, high = estimate["ci95"]
        assert low <= estimate["mean"] <= high


def test_monte_carlo_is_seeded():
    args = ["--level", "10", "--devices", "6", "--layout", "o2", "--trials", "3000"]
    one = run_cli(["reliability", *args, "--seed", "5", "--json"]).stdout
    again = run_cli(["reliability", *args, "--seed", "5", "--json"]).stdout
    other = run_cli(["reliability", *args, "--seed", "6", "--json"]).stdout
    assert one == again
    assert json.loads(one)["monte_carlo"] != json.loads(other)["monte_carlo"]
    assert json.loads(one)["seed"] == 5


def test_json_has_the_promised_fields():
    doc = cli_json("--level", "6", "--devices", "6", "--trials", "2000")
    for key in ("mttdl_years", "mttdl_years_approx", "p_array_loss", "p_sector_loss",
                "expected_bytes_lost_per_year", "seed", "version", "inputs", "monte_carlo"):
        assert key in doc, key
    assert doc["version"] == raidlab.__version__
    mc = doc["monte_carlo"]
    assert mc["trials"] == 2000 and mc["seed"] == 1
    for key in ("p_array_loss", "p_sector_loss", "expected_bytes_lost_per_year"):
        assert len(mc[key]["ci95"]) == 2
    assert doc["inputs"]["weibull_shape"] == pytest.approx(1.12)
    assert doc["inputs"]["uber"] == 1e-15 and doc["inputs"]["mission_years"] == 5


# ---- the layout decides ---------------------------------------------------------------------

def layout_second_failure_fraction(devices: int, layout: str) -> float:
    """From the layout's map alone: members that share a chunk with each member."""
    array = raidlab.Array(level=10, devices=devices, layout=layout, chunk_kib=64, member_kib=64 * 64)
    holders: dict = {}
    for member, column in enumerate(array.map_table()):
        for cell in column:
            if cell is not None:
                holders.setdefault(cell, set()).add(member)
    fatal = set()
    for members in holders.values():
        fatal |= {frozenset(pair) for pair in combinations(sorted(members), 2)}
    return 2 * len(fatal) / (devices * (devices - 1))


@settings(max_examples=40, deadline=None)
@given(devices=st.integers(min_value=2, max_value=33), layout=st.sampled_from(["n2", "f2", "o2"]))
def test_raid10_second_failure_fraction_is_the_layouts(devices, layout):
    doc = rel.analyze(level=10, devices=devices, layout=layout, trials=0).to_dict()
    from_map = layout_second_failure_fraction(devices, layout)
    assert doc["layout"]["second_failure_loss_fraction"] == pytest.approx(from_map, abs=1e-12)
    textbook = 1 / (devices - 1) if devices == 2 or (layout == "n2" and devices % 2 == 0) \
        else 2 / (devices - 1)
    assert from_map == pytest.approx(textbook, abs=1e-12)


# ---- monotonicity ---------------------------------------------------------------------------

@pytest.mark.parametrize("devices", [4, 6, 10, 16])
def test_more_parity_never_raises_loss(devices):
    docs = [rel.analyze(level=level, devices=devices, trials=0, uber=1e-14).to_dict()
            for level in (0, 5, 6)]
    for fewer, more in zip(docs, docs[1:]):
        assert more["p_array_loss"] <= fewer["p_array_loss"]
        assert more["p_sector_loss"] <= fewer["p_sector_loss"]
        assert more["expected_bytes_lost_per_year"] <= fewer["expected_bytes_lost_per_year"]


@pytest.mark.parametrize("level,devices,layout", [(1, 2, None), (5, 6, None), (6, 8, None),
                                                  (10, 8, "n2"), (10, 7, "f2")])
def test_a_longer_rebuild_never_lowers_loss(level, devices, layout):
    previous = None
    for hours in (2, 12, 48, 168, 720):
        doc = rel.analyze(level=level, devices=devices, layout=layout, mttr_hours=hours,
                          trials=0).to_dict()
        if previous:
            assert doc["p_array_loss"] >= previous["p_array_loss"]
            assert doc["p_sector_loss"] >= previous["p_sector_loss"]
            assert doc["mttdl_years"] <= previous["mttdl_years"]
        previous = doc


def test_detect_and_replace_delays_add_to_the_rebuild():
    slow = rel.analyze(level=5, devices=8, mttr_hours=10, detect_hours=4, replace_hours=10, trials=0)
    same = rel.analyze(level=5, devices=8, mttr_hours=24, trials=0)
    assert slow.inputs["repair"]["total_hours"] == 24
    assert slow.mttdl_years == same.mttdl_years


# ---- the rebuild simulator hook -------------------------------------------------------------

def test_rebuild_from_sim_without_the_simulator_is_one_line_error(monkeypatch):
    monkeypatch.delattr(rel.rebuild, "simulated_rebuild_hours")
    run = run_cli(["reliability", "--level", "5", "--devices", "8", "--rebuild-from-sim"])
    assert run.status == 2
    assert run.stderr == ("raidlab: error: --rebuild-from-sim needs the rebuild simulator "
                          "(not available in this build)\n")


def test_rebuild_from_sim_uses_the_simulated_hours(monkeypatch):
    calls = []

    def simulated_rebuild_hours(**kwargs):
        calls.append(kwargs)
        return 30.0

    monkeypatch.setattr(rel.rebuild, "simulated_rebuild_hours", simulated_rebuild_hours)
    monkeypatch.delattr(rel.rebuild, "check_sim_options")  # the stand-in takes any keyword
    doc = cli_json("--level", "6", "--devices", "8", "--rebuild-from-sim", "--drive", "cheetah-10k7",
                   "--sim-opt", "workload=oltp", "--sim-opt", "iodepth=8", "--detect-hours", "2",
                   "--replace-hours", "4", "--trials", "0")
    # Without --capacity-tb the members are the --drive's size (300 GB).
    assert calls == [{"level": "6", "devices": 8, "layout": None, "chunk_kib": 512,
                      "capacity_bytes": 300_000_000_000, "drive": "cheetah-10k7",
                      "workload": "oltp", "iodepth": 8}]
    assert doc["inputs"]["repair"] == {"rebuild_hours": 30.0, "rebuild_source": "simulation",
                                       "rebuild_how": "rebuild 30.0 h: simulated under the --sim-opt workload",
                                       "detect_hours": 2.0, "replace_hours": 4.0,
                                       "total_hours": 36.0}
    direct = cli_json("--level", "6", "--devices", "8", "--capacity-tb", "0.3", "--mttr-hours", "36", "--trials", "0")
    assert doc["mttdl_years"] == direct["mttdl_years"]


def test_loss_probability_hook_for_the_planner():
    p = rel.loss_probability(level=5, devices=6, layout=None, drive="cheetah-10k7",
                             rebuild_hours=10.0, mission_years=5)
    direct = rel.analyze(level=5, devices=6, capacity_tb=0.3, mttr_hours=10.0, trials=0)
    assert p == direct.p_array_loss
    with pytest.raises(ConfigError):
        rel.loss_probability(level=5, devices=6, drive="no-such-drive", rebuild_hours=10.0)


# ---- output ---------------------------------------------------------------------------------

def test_text_report_and_html(tmp_path):
    page = tmp_path / "reliability.html"
    run = run_cli(["reliability", "--level", "10", "--devices", "6", "--layout", "f2",
                   "--trials", "1000", "--html", str(page)])
    assert run.status == 0, run.stderr
    for text in ("MTTDL", "textbook approximation", "P(array loss in 5 y)",
                 "P(any sector lost in 5 y)", "expected bytes lost per year", "Monte Carlo, 95 % CI",
                 "2 of 5 survivors"):
        assert text in run.stdout, text
    html = page.read_text()
    assert "Reliability" in html and "<svg" in html


# ---- bad input ------------------------------------------------------------------------------

BAD = {
    "negative-afr": ["--level", "5", "--devices", "8", "--afr-pct", "-1"],
    "afr-100": ["--level", "5", "--devices", "8", "--afr-pct", "100"],
    "shape-zero": ["--level", "5", "--devices", "8", "--weibull-shape", "0"],
    "shape-negative": ["--level", "5", "--devices", "8", "--weibull-shape", "-1.5"],
    "raid6-three-devices": ["--level", "6", "--devices", "3"],
    "too-many-devices": ["--level", "5", "--devices", "65"],
    "zero-devices": ["--level", "5", "--devices", "0"],
    "afr-and-mttf": ["--level", "5", "--devices", "8", "--afr-pct", "2", "--mttf-hours", "1e6"],
    "mttr-and-sim": ["--level", "5", "--devices", "8", "--mttr-hours", "5", "--rebuild-from-sim"],
    "negative-mttr": ["--level", "5", "--devices", "8", "--mttr-hours", "-5"],
    "negative-mttf": ["--level", "5", "--devices", "8", "--mttf-hours", "-5"],
    "nan-uber": ["--level", "5", "--devices", "8", "--uber", "nan"],
    "mission-too-long": ["--level", "5", "--devices", "8", "--mission-years", "1000"],
    "negative-detect": ["--level", "5", "--devices", "8", "--detect-hours", "-1"],
    "bad-layout": ["--level", "10", "--devices", "4", "--layout", "n5"],
    "bad-level": ["--level", "7", "--devices", "4"],
    "sim-opt-without-sim": ["--level", "5", "--devices", "4", "--sim-opt", "x=1"],
    "missing-devices": ["--level", "5"],
}


@pytest.mark.parametrize("args", BAD.values(), ids=BAD.keys())
def test_bad_input_is_one_line_and_exit_2(args):
    run = run_cli(["reliability", *args])
    assert run.status == 2, (run.stdout, run.stderr)
    assert run.stdout == ""
    assert len(run.stderr_lines) == 1 and run.stderr_lines[0].startswith("raidlab: error: ")
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("name", ["negative-afr", "shape-zero", "raid6-three-devices", "afr-and-mttf"])
def test_bad_input_through_a_real_process(name):
    run = run_process(["reliability", *BAD[name]])
    assert run.status == 2 and len(run.stderr_lines) == 1, run.stderr
    assert run.stderr_lines[0].startswith("raidlab: error: ")


def test_api_errors_are_raidlab_errors():
    with pytest.raises(RaidlabError, match="AFR"):
        rel.analyze(level=5, devices=8, afr_pct=-1, trials=0)
    with pytest.raises(RaidlabError, match="weibull-shape"):
        rel.analyze(level=5, devices=8, weibull_shape=0, trials=0)
    with pytest.raises(RaidlabError, match="at least 4 devices"):
        rel.analyze(level=6, devices=3, trials=0)


def test_ure_fails_array_output_does_not_say_md_carries_on():
    """`--ure-fails-array` once still printed md's default (a bad block, carry on) beside
    an 11-year MTTDL, and the textbook row (53,264 y) unlabelled as ignoring sector errors."""
    args = ["reliability", "--level", "5", "--devices", "6", "--capacity-tb", "16", "--uber", "1e-14"]
    fails = run_cli([*args, "--ure-fails-array", "--trials", "0"])
    assert fails.status == 0, fails.stderr
    assert "such an error loses the array" in fails.stdout and "carries on" not in fails.stdout
    assert "textbook approximation (drive failures only)" in fails.stdout
    default = run_cli([*args, "--trials", "0"])
    assert "md records a bad block and carries on" in default.stdout
