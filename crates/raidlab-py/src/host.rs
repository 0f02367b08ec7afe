//! Glue for the host (cloud instance) limits: the `host` dict of a run's configuration becomes
//! the core's `HostLimits`; the core's `HostReport` becomes the result's `host` dict.

use crate::dict::field;
use crate::errors::{self, config_error};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use raidlab_core::sim::instance::{HostLimits, HostReport};

/// `config["host"]`: None (no host limits) or a dict of the instance's EBS limits, as
/// python/raidlab/hosts.py resolves a preset (MB/s are 10^6 bytes per second, as AWS writes them).
pub fn limits_from(config: &Bound<'_, PyDict>) -> PyResult<Option<HostLimits>> {
    let Some(host) = config.get_item("host")? else { return Ok(None) };
    if host.is_none() {
        return Ok(None);
    }
    let dict = host.downcast_into::<PyDict>().map_err(|_| config_error("'host' must be a dict".into()))?;
    let limits = HostLimits {
        baseline_iops: field(&dict, "baseline_iops")?,
        burst_iops: field(&dict, "burst_iops")?,
        baseline_bytes_s: field::<f64>(&dict, "baseline_mb_s")? * 1e6,
        burst_bytes_s: field::<f64>(&dict, "burst_mb_s")? * 1e6,
        burst_s: field::<f64>(&dict, "burst_minutes")? * 60.0,
        start_balance: field::<f64>(&dict, "host_credits_pct")? / 100.0,
    };
    limits.validate().map_err(errors::to_py)?;
    Ok(Some(limits))
}

/// What the host's meter did: the burst ends (s, None if the burst never ended) and the totals.
pub fn report_dict<'py>(py: Python<'py>, report: &HostReport) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let seconds = |ns: Option<u64>| ns.map(|t| t as f64 / 1e9);
    dict.set_item("iops_burst_end_s", seconds(report.iops_burst_end_ns))?;
    dict.set_item("bytes_burst_end_s", seconds(report.bytes_burst_end_ns))?;
    dict.set_item("operations", report.operations)?;
    dict.set_item("bytes", report.bytes)?;
    dict.set_item("ios", report.ios)?;
    dict.set_item("delayed_ios", report.delayed_ios)?;
    dict.set_item("io_balance", report.io_balance)?;
    dict.set_item("byte_balance", report.byte_balance)?;
    Ok(dict)
}
