"""Real measurement through fio: run raidlab workloads on a file or device, import fio JSON,
and calibrate a drive model from a sweep.

raidlab does real I/O only through fio (the Debian package ``fio``); nothing here reads or
writes a target itself. Results load into the document ``raidlab sim --json`` prints (fio's
JSON shape), with ``raidlab.source == "measured"``, so measured and simulated runs sit side by
side.

- :func:`measure`: one workload (fio job / sysbench options / preset) on a target.
- :func:`import_json`: a fio 3.x JSON file (from any machine) into the same document.
- :func:`calibrate`: a sweep with fio and a fitted drive model, saved as a drive TOML that
  ``raidlab sim --drive`` reads.
"""

from raidlab.measure.importer import load as import_json, parse_fio_json, to_document
from raidlab.measure.measurement import Measurement, measure, parse_size, prepare, run_prepared

__all__ = ["Measurement", "measure", "prepare", "run_prepared", "parse_size", "import_json",
           "parse_fio_json", "to_document"]
