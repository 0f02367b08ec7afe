"""Comments, docstrings and messages say what the code does and why, and cite public sources.

The rule, checked on every line of every tracked ``*.rs``, ``*.py`` and ``*.toml`` file and
``Makefile`` (``git ls-files``; comments, docstrings and strings alike):

- No reference to the project's own tracker: "issue" or "issues" followed by a number. A reader of
  the code cannot open it; say what the code does and why instead. A public project's issue cited
  as ``project#N`` (``fio#731``, ``util-linux#1221``) or by its URL is a citation and allowed:
  it does not match.
- No "session" followed by a number: when something happened is the history's business (git log).
- No section sign followed by a number unless the same line names the public document the section
  is in (``PUBLIC_DOCUMENTS``: the DiskSim 4.0 manual, CMU-PDL-08-101, Kemeny & Snell's *Finite
  Markov Chains*, the PNG specification, Unicode and its annexes, an RFC, POSIX). A bare section
  number, or one of a note that is not in the repository, points nowhere.
- No path into the project's private shared folder (``../shared``, ``/work/shared``): a clone does
  not have it. State the fact and its public source, or point at the copy under ``data/``.

Files being cleaned can be listed in ``PENDING`` (empty: every file is clean); the list may only shrink.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import REPO_ROOT

ISSUE = re.compile(r"\b[Ii]ssues?\s+#?\d")
SESSION = re.compile(r"\b[Ss]ession\s+\d")
SECTION = re.compile(r"\u00a7\s?\d")
SHARED = re.compile(r"\.\./shared\b|/work/shared\b")
PUBLIC_DOCUMENTS = re.compile(
    r"manual|CMU-PDL|Finite Markov Chains|PNG spec|Unicode|UAX|\bRFC\s?\d|POSIX", re.IGNORECASE)
SUFFIXES = (".rs", ".py", ".toml")

#: Files (or folders, ending in "/") their owners are still cleaning. Remove an entry once its
#: files are clean; the test then keeps them clean.
PENDING: frozenset = frozenset()


def _tracked() -> List[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return [path for path in listed.stdout.splitlines()
            if path.endswith(SUFFIXES) or Path(path).name == "Makefile"]


def _pending(path: str) -> bool:
    return any(path == entry or (entry.endswith("/") and path.startswith(entry)) for entry in PENDING)


def findings(text: str) -> List[str]:
    """What breaks the rule on each line of ``text``, as 'line N: excerpt'."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        bad = [pattern for pattern in (ISSUE, SESSION, SHARED) if pattern.search(line)]
        if SECTION.search(line) and not PUBLIC_DOCUMENTS.search(line):
            bad.append(SECTION)
        if bad:
            found.append(f"line {number}: {line.strip()[:100]}")
    return found


def _scan() -> Dict[str, List[str]]:
    this_file = Path(__file__).resolve()
    result = {}
    for path in _tracked():
        full = REPO_ROOT / path
        if full.resolve() == this_file or not full.is_file():
            continue
        found = findings(full.read_text(encoding="utf-8", errors="replace"))
        if found:
            result[path] = found
    return result


@pytest.mark.parametrize("line", [
    "// See issue 18 for the stripe cache.",
    "# Issues 22 and 18 added more fields.",
    "    /// Re-pinned in session 14.",
    "//! Transitions (research `reliability.md` \u00a71.2):",
    "(facts: `../shared/research/reliability.md`)",
    "sampled from /work/shared/" + "recorded/cases.json",
])
def test_references_that_point_nowhere_are_found(line):
    assert findings(line) != []


@pytest.mark.parametrize("line", [
    "//! fio prints error lines ahead of the JSON (fio#731, #1685).",
    "#: optimal_io_size some USB bridges report (util-linux#1221).",
    "    // Queue (DiskSim 4.0 manual \u00a73.4.1 \"Max queue length\").",
    "//! group of the chain is exact: Kemeny & Snell, *Finite Markov Chains*, 1960, \u00a76.3).",
    "    // a QD1 reader issues one read at a time",
    "    fn rebuild_issue(&mut self, sectors: u64) {",
])
def test_public_citations_and_plain_words_pass(line):
    assert findings(line) == []


def test_no_comment_names_an_issue_a_session_or_a_private_note():
    found = {path: lines for path, lines in _scan().items() if not _pending(path)}
    assert found == {}, "\n".join(f"{path}: {line}" for path, lines in sorted(found.items()) for line in lines)
