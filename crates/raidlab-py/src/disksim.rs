//! Glue for DiskSim import and validation-trace replay (`raidlab_core::device::disksim`).
//! Python supplies file contents through a callable; the core does the rest.

use crate::errors;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use raidlab_core::device::disksim;

fn import_with(entry: &str, read: &Bound<'_, PyAny>) -> PyResult<disksim::Imported> {
    let mut reader = |name: &str| -> Option<String> { read.call1((name,)).ok()?.extract::<String>().ok() };
    disksim::import(entry, &mut reader).map_err(errors::to_py)
}

/// Imports a DiskSim disk: `read(name) -> str` returns each file's text. Returns a dict with
/// name, warnings, files (name → text, for `drive = {"disksim": entry, "files": files}`) and a
/// few headline facts.
#[pyfunction]
pub fn disksim_import<'py>(py: Python<'py>, entry: &str, read: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let imported = import_with(entry, read)?;
    let s = &imported.spec;
    let out = PyDict::new(py);
    out.set_item("name", &imported.name)?;
    out.set_item("warnings", &imported.warnings)?;
    out.set_item("files", imported.files.clone())?;
    out.set_item("rpm", s.rpm)?;
    out.set_item("capacity_bytes", s.capacity_sectors * 512)?;
    out.set_item("surfaces", s.surfaces)?;
    out.set_item("cylinders", s.cylinders())?;
    out.set_item("zones", s.zones.len())?;
    out.set_item("interface", &s.interface)?;
    Ok(out)
}

/// Replays a validation trace (its text) on the imported drive; returns measured and simulated
/// service times (ms), their means and the demerit (ms) over `quantiles` quantiles.
#[pyfunction]
#[pyo3(signature = (entry, read, trace_name, trace_text, seed=42, limit=None, quantiles=10000))]
#[allow(clippy::too_many_arguments)]
pub fn disksim_replay<'py>(
    py: Python<'py>,
    entry: &str,
    read: &Bound<'py, PyAny>,
    trace_name: &str,
    trace_text: &str,
    seed: Option<u64>,
    limit: Option<usize>,
    quantiles: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let imported = import_with(entry, read)?;
    let mut records = disksim::parse_trace(trace_name, trace_text).map_err(errors::to_py)?;
    if let Some(n) = limit {
        records.truncate(n);
    }
    let result = disksim::replay(&imported.spec, &records, seed).map_err(errors::to_py)?;
    let out = PyDict::new(py);
    out.set_item("name", &imported.name)?;
    out.set_item("warnings", &imported.warnings)?;
    out.set_item("requests", records.len())?;
    out.set_item("mean_measured_ms", result.mean_measured_ms())?;
    out.set_item("mean_simulated_ms", result.mean_simulated_ms())?;
    out.set_item("demerit_ms", result.demerit_ms(quantiles))?;
    out.set_item("measured_ms", &result.measured_ms)?;
    out.set_item("simulated_ms", &result.simulated_ms)?;
    Ok(out)
}
