"""raidlab drives / controllers: a listing that fits a terminal, one preset whole by name."""

from __future__ import annotations

import json

from conftest import refused, run_cli


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_drive_and_controller_listings_fit_a_terminal():
    for command in ("drives", "controllers"):
        shown = run_cli([command])
        assert shown.status == 0, shown.stderr
        assert _widest(shown.stdout) <= 100, (command, _widest(shown.stdout))


def test_the_controller_listing_shows_figures_not_every_parameter():
    shown = run_cli(["controllers"]).stdout
    perc = next(line for line in shown.splitlines() if line.startswith("perc4e-di"))
    assert perc.split() == ["perc4e-di", "hw", "256", "yes", "64", "-", "-", "-", "off"]
    assert "destage_high_pct" not in shown


def test_one_controller_by_name_lists_every_parameter_with_its_source():
    shown = run_cli(["controllers", "perc4e-di"])
    assert shown.status == 0, shown.stderr
    assert "megaraid_mbox" in shown.stdout and "destage_high_pct = 10.0 %" in shown.stdout
    assert _widest(shown.stdout) <= 100
    whole = json.loads(run_cli(["controllers", "perc4e-di", "--json"]).stdout)
    assert whole["params"]["host_queue_depth"]["value"] == 64


def test_one_drive_by_name_shows_its_description_and_source():
    shown = run_cli(["drives", "cheetah-10k7"])
    assert shown.status == 0, shown.stderr
    assert "ST3300007LC" in shown.stdout and shown.stdout.count("cheetah-10k7") == 1
    assert json.loads(run_cli(["drives", "cheetah-10k7", "--json"]).stdout)["rpm"] == 10000


def test_an_unknown_preset_name_is_refused_with_the_names():
    refused(run_cli(["drives", "cheeta"]), "unknown drive preset 'cheeta'", "cheetah-10k7")
    refused(run_cli(["controllers", "perc"]), "unknown controller 'perc'", "perc4e-di")
