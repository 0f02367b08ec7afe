"""Plain terminal tables: aligned columns, no colour codes, safe to paste into a ticket."""

from __future__ import annotations

import math

from typing import Any, Dict, List, Sequence

from raidlab.report import headline
from raidlab.report import rows as result_rows
from raidlab.terminal import printable


def render(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Left-aligns the first column and right-aligns the rest. Cells are shown with their
    control characters escaped (:func:`raidlab.terminal.printable`): job, disk and phase names
    come from the user's files."""
    cells = [[printable(h) for h in headers]] + [[printable(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for index, row in enumerate(cells):
        parts = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        lines.append("  ".join(parts).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


#: Columns of the job table (``raidlab sim``, ``raidlab measure``, ``raidlab import``).
JOB_HEADERS = ["job", "dir", "IOPS", "MiB/s", "clat ms mean", "p50", "p99", "p99.9", "max"]


def _ms(nanos: Any) -> str:
    """Milliseconds as the job table shows them; ``-`` for a value the document does not hold."""
    return "-" if nanos is None else _ms_value(nanos / 1e6)


def job_rows(document: Dict[str, Any]) -> List[List[Any]]:
    """The job table's cells: one row per job and direction that did I/O, plus an fsync row
    (:func:`raidlab.report.rows.job_rows`), from a fio-shaped document (simulated, measured or
    imported: what fio did not record shows as ``-``)."""
    return [[row["job"], row["direction"], f"{row['iops']:.0f}",
             "-" if row["mib_s"] is None else f"{row['mib_s']:.1f}",
             *(_ms(row[key]) for key in ("latency_ns_mean", "latency_ns_p50", "latency_ns_p99", "latency_ns_p99_9",
                                         "latency_ns_max"))]
            for row in result_rows.job_rows(document, fsync=True)]


def summary(document: Dict[str, Any], title: str) -> str:
    """The default `raidlab sim` output: results per job, then per member."""
    block = document["raidlab"]
    lines = [printable(title), printable(f"seed {block['seed']}, raidlab {block['version']}, "
                                         f"{block['simulated_ns'] / 1e9:.3f} s simulated, {block['events']} events")]
    if block["truncated"]:
        lines.append(printable(f"note: {block['truncated']}"))
    lines.append("")
    jobs = job_rows(document)
    lines.append(render(JOB_HEADERS, jobs) if jobs else "no foreground I/O: the array was idle")
    if jobs:
        lines.append(headline_line(document))
    lines.append("")
    lines.append(iostat_table(document))
    cache = page_cache_numbers(document)
    if cache:
        lines += ["", page_cache_line(cache)]
    if isinstance(document.get("host"), dict):
        lines += ["", host_line(document["host"])]
    lines.extend(bad_days(document))
    return "\n".join(lines)


def headline_line(document: Dict[str, Any]) -> str:
    """The run's headline figures (:mod:`raidlab.report.headline`: what --json's
    ``raidlab.headline`` and the HTML summary show) over every job, with their basis."""
    h = headline.of(document)
    parts = [f"{d} {h[d]['iops']:.0f} IOPS, p50 {_ms_value(h[d]['p50_ms'])} ms, p99 {_ms_value(h[d]['p99_ms'])} ms"
             for d in headline.DIRECTIONS]
    return printable(f"all jobs ({h['basis']}): {h['iops']:.0f} IOPS, {h['mib_s']:.1f} MiB/s; " + "; ".join(parts))


def _ms_value(ms: Any) -> str:
    """Milliseconds with two decimals, or two significant digits below 0.01 ms (an SSD's or a
    cache's 2.6 µs read "0.0026", not "0.00"); ``-`` for none."""
    if ms is None:
        return "-"
    return f"{ms:.2g}" if 0 < ms < 0.005 else f"{ms:.2f}"


def host_line(host: Dict[str, Any]) -> str:
    """One line on the host's EBS limits: when its burst ended, and the I/O it delayed."""
    ends = [f"{what} burst ended at {host[key]:.1f} s" for what, key in (("IOPS", "iops_burst_end_s"),
                                                                        ("bandwidth", "bytes_burst_end_s"))
            if isinstance(host.get(key), (int, float))]
    share = host["delayed_ios"] / host["ios"] if host.get("ios") else 0.0
    return (f"host EBS limits: {', '.join(ends) if ends else 'burst not exhausted (or none)'}; "
            f"{100 * share:.1f}% of member I/Os delayed by the host's meter; "
            f"credits left: I/O {100 * host['io_balance']:.0f}%, bytes {100 * host['byte_balance']:.0f}%")


_PAGE_CACHE_KEYS = ("ram_bytes", "hit_ratio", "read_from_array_bytes", "written_back_bytes", "throttled_ns",
                    "peak_dirty_bytes")


def page_cache_numbers(document: Dict[str, Any]) -> Dict[str, float]:
    """The document's page-cache figures, or {} when it has none (or an imported file's are not
    all numbers)."""
    cache = document.get("page_cache")
    if not isinstance(cache, dict):
        return {}
    numbers = {k: cache.get(k) for k in _PAGE_CACHE_KEYS}
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in numbers.values())
    return numbers if ok else {}


def page_cache_line(cache: Dict[str, Any]) -> str:
    """One line on the page cache of a buffered run."""
    gib = 1 << 30
    return (f"page cache {cache['ram_bytes'] / gib:g} GiB: read hit ratio {cache['hit_ratio']:.3f}, "
            f"read from the array {cache['read_from_array_bytes'] / gib:.2f} GiB, "
            f"written back {cache['written_back_bytes'] / gib:.2f} GiB, "
            f"writers throttled {cache['throttled_ns'] / 1e9:.2f} s, peak dirty {cache['peak_dirty_bytes'] / gib:.2f} GiB")


def bad_days(document: Dict[str, Any]) -> List[str]:
    """Phases, the rebuild and a data-loss verdict, when the run had any."""
    lines: List[str] = []
    phases = document.get("phases", [])
    if len(phases) > 1 or (phases and phases[0]["name"] != "optimal"):
        cells = [[row["phase"], f"{row['start_s']:.1f}-{row['end_s']:.1f}", row["direction"],
                  "0" if row["iops"] is None else f"{row['iops']:.0f}", _ms(row["latency_ns_p50"]),
                  _ms(row["latency_ns_p99"])] for row in result_rows.phase_rows(document, idle=True)]
        lines += ["", render(["phase", "seconds", "dir", "IOPS", "p50 ms", "p99 ms"], cells)]
    rebuild = document.get("rebuild")
    if rebuild:
        if rebuild["extrapolated"]:
            hours = rebuild["duration_s"] / 3600 if rebuild["duration_s"] else float("inf")
            when = (f"aborted at {rebuild['aborted_s']:.3f} s (the replacement failed)"
                    if rebuild.get("aborted_s") is not None else "when the run ended")
            state = (f"{rebuild['progress_pct']:.1f}% done {when}; full rebuild of "
                     f"{rebuild['member_bytes'] / 1e9:.0f} GB extrapolated "
                     f"{'over the zones at their rates' if rebuild.get('extrapolated_by') == 'zone rates' else 'at this rate'}"
                     f": {hours:.2f} h")
        else:
            state = f"finished at {rebuild['end_s']:.1f} s, took {rebuild['duration_s']:.1f} s"
        lines += ["", f"rebuild of member{rebuild['member']}: started {rebuild['start_s']:.1f} s, "
                      f"{rebuild['rate_kib_s'] / 1024:.1f} MiB/s per device; {state}"]
    events = document.get("drive_events")
    if events:  # drives that misbehaved: timeouts, read errors, drops
        lines += ["", printable("drive events: " + "; ".join(
            f"{e['at_s']:.3f} s member{e['member']} {e['event']}" for e in events))]
    loss = document.get("data_loss")
    if loss:
        lines += ["", f"DATA LOSS at {loss['at_s']:.3f} s: members {loss['failed_members']} failed"
                  + (f": {printable(loss['why'])}" if loss.get("why") else "")]
    return lines


#: The member table's columns, as `iostat -x` (sysstat) names them.
IOSTAT_HEADERS = ["device", "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "r_await", "w_await",
                  "aqu-sz", "%util", "flush/s"]


def _number(disk: Dict[str, Any], key: str) -> float:
    """A count of a disk entry, 0 when absent or not a number (imported documents vary)."""
    value = disk.get(key, 0)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return 0.0
    try:
        return float(value)
    except OverflowError:  # a JSON integer beyond a float: no counter of a real run
        return 0.0


def iostat_table(document: Dict[str, Any]) -> str:
    """Per member and for the array device (md0), as `iostat -x` shows them over the run:
    requests that reached the device per second (merged ones in rrqm/s, wrqm/s), kB/s, the
    mean time a request spent queued and served (ms), the mean queue size and the busy time."""
    seconds = _number(document["raidlab"], "simulated_ns") / 1e9
    array = document.get("array_device")
    rows = []
    for disk in document["disk_util"] + ([array] if isinstance(array, dict) else []):
        n = lambda key: _number(disk, key)  # noqa: E731
        # The array device counts the jobs' measured I/O only (after ramp_time): its own span.
        span = n("measured_ns") / 1e9 if disk is array and "measured_ns" in disk else seconds
        rate = (lambda v: v / span) if span else (lambda v: 0.0)
        reads, writes, r_merges, w_merges = n("read_ios"), n("write_ios"), n("read_merges"), n("write_merges")
        r_await = n("read_time_ns") / 1e6 / reads if reads else 0.0
        w_await = n("write_time_ns") / 1e6 / writes if writes else 0.0
        rows.append([str(disk.get("name", "?")), f"{rate(reads - r_merges):.1f}", f"{rate(writes - w_merges):.1f}",
                     f"{rate(n('read_sectors') / 2):.1f}", f"{rate(n('write_sectors') / 2):.1f}",
                     f"{rate(r_merges):.1f}", f"{rate(w_merges):.1f}", f"{r_await:.2f}", f"{w_await:.2f}",
                     f"{n('queue_depth_mean'):.2f}", f"{n('util'):.1f}", f"{rate(n('flush_ios')):.1f}"])
    return render(IOSTAT_HEADERS, rows)
