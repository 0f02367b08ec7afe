"""A plan's setup (the commands that build the chosen design, each with its why) as the shell
script ``raidlab plan`` prints and its HTML report shows: a text rendering of the plan document,
so reports need not import the planner."""

from __future__ import annotations

from typing import Any, Dict, List

#: How a command that is a choice, not a step, is shown in the script (commented out, so the
#: script runs top to bottom as the XFS-on-whole-md0 setup).
ALTERNATIVE_PREFIX = {"ext4": "# ext4 instead of XFS: ", "partition": "# only if md0 must be partitioned: "}


def render(plan_setup: Dict[str, Any]) -> List[str]:
    """The setup as a shell script: a '# why' line above each command; the alternatives
    (``alternative`` set: ext4 instead of XFS, a partition on md0) commented out."""
    lines: List[str] = [f"# {plan_setup['placeholders']}"] if plan_setup.get("placeholders") else []
    for entry in plan_setup["commands"]:
        lines.append(f"# {entry['why']}")
        lines.append(ALTERNATIVE_PREFIX.get(entry.get("alternative", ""), "") + entry["command"])
    for note in plan_setup["notes"]:
        lines.append(f"# note: {note}")
    return lines
