"""README.md's example outputs are what their commands print today (tools/readme_examples.py
regenerates them; this test fails when one drifts)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from conftest import REPO_ROOT

_spec = importlib.util.spec_from_file_location("readme_examples", REPO_ROOT / "tools" / "readme_examples.py")
readme_examples = importlib.util.module_from_spec(_spec)
sys.modules["readme_examples"] = readme_examples
_spec.loader.exec_module(readme_examples)

README_TEXT = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
EXAMPLES = readme_examples.examples(README_TEXT)


def test_the_readme_marks_the_classic_and_the_designs_file_examples():
    sources = [e.source for e in EXAMPLES]
    assert "raidlab compare" in sources
    assert "examples/designs.toml" in sources
    assert any(source.startswith("raidlab compare --designs examples/designs.toml") for source in sources)
    # every fenced block that follows a marker was found (a marker without a block is a typo)
    assert README_TEXT.count("<!-- raidlab-") == len(EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.source for e in EXAMPLES])
def test_each_readme_example_is_its_commands_output(example):
    expected = readme_examples.produce(example)
    assert example.body == expected, (
        f"README block for {example.source!r} is stale: run python3 tools/readme_examples.py")


def test_the_classic_verdicts_quote_rebuild_hours_from_their_own_table():
    import re

    classic = next(e for e in EXAMPLES if e.source == "raidlab compare").body
    lines = classic.splitlines()
    header = lines[0].split("  ")
    column = [i for i, name in enumerate(h.strip() for h in header if h.strip()) if name == "rebuild h"][0]
    for design in ("RAID5", "RAID10"):
        table = {row.split()[column] for row in lines if row.startswith(design + " ")} - {"-"}
        verdict = next(line for line in lines if line.startswith(design + ": "))
        quoted = re.search(r"rebuild under load ~([0-9.]+) h", verdict).group(1)
        assert quoted in table, (design, quoted, table)


def test_regenerating_replaces_a_stale_block_and_check_reports_it(tmp_path):
    stale = ("intro\n<!-- raidlab-example: raidlab layout --level 5 --devices 3 --member-kib 1024 --rows 1 -->\n"
             "```\nold output\n```\nafter\n")
    readme = tmp_path / "README.md"
    readme.write_text(stale)
    assert readme_examples.main(["--check", str(readme)]) == 1
    assert readme.read_text() == stale
    assert readme_examples.main([str(readme)]) == 0
    fresh = readme.read_text()
    assert fresh.startswith("intro\n<!-- raidlab-example: ") and fresh.endswith("```\nafter\n")
    assert "level        raid5\n" in fresh and "old output" not in fresh
    assert readme_examples.main(["--check", str(readme)]) == 0


def test_compare_help_documents_the_designs_file_and_its_example_runs():
    from conftest import run_cli

    run = run_cli(["compare", "--help"])
    text = " ".join(run.stdout.split())
    for fragment in ("[defaults]", "[[design]]", "[[workload]]", "setting name", "examples/designs.toml"):
        assert fragment in text, fragment
    assert (REPO_ROOT / "examples" / "designs.toml").is_file()
