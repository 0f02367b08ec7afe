"""Reports of simulated (and measured) runs. A run's result is one fio-shaped document, built
once (:mod:`raidlab.report.fio_json`, with its headline chosen once by
:mod:`raidlab.report.headline`); the rows every output shows come from it
(:mod:`raidlab.report.rows`), percentiles the core did not report from one module
(:mod:`raidlab.report.latency`), and the terminal tables, CSV, HTML, PNG and DataFrames only
render them: none recomputes what the core measured."""
