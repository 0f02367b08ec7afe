"""replay prints what a DiskSim file says (its drive's name, its lines in warnings) with control
characters escaped, as every other command does (measure refuses such names outright)."""

from __future__ import annotations

from conftest import REPO_ROOT, run_cli


def test_replay_warnings_quote_the_drive_file_escaped(tmp_path):
    data = REPO_ROOT / "data" / "disksim-valid"
    for name in ("atlas10k.parv", "atlas10k.diskspecs", "atlas10k.model", "atlas10k.seek"):
        text = (data / name).read_text().replace("QUANTUM_TORNADO_validate", "Q\u202ecT")
        (tmp_path / name).write_text(text)
    run = run_cli(["replay", str(data / "atlas10k.trace"), "--disksim", str(tmp_path / "atlas10k.parv"),
                   "--warnings", "--limit", "50"])
    assert run.status == 0, run.stderr
    assert "\u202e" not in run.stdout + run.stderr
    assert "Q\\u202ecT" in run.stdout and any("Q\\u202ecT" in line for line in run.stderr_lines)
