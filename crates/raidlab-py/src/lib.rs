//! PyO3 glue between raidlab-core and the `raidlab` Python package (`raidlab._core`).
//!
//! Glue only: argument conversion, error mapping ([`errors`]) and the table-building loops
//! ([`array`]). All RAID knowledge lives in raidlab-core; all user-facing ergonomics in Python.

use pyo3::prelude::*;
use raidlab_core::layout::{Layout, Level, DEFAULT_CHUNK_KIB, MAX_DEVICES};

mod array;
mod dict;
mod disksim;
mod errors;
mod host;
mod reliability;
mod settings;
mod sim;
mod stacked;

/// Every drive preset: name, kind, rpm, capacity_bytes, interface, description, source.
#[pyfunction]
fn drive_presets(py: Python<'_>) -> PyResult<Vec<Bound<'_, pyo3::types::PyDict>>> {
    use raidlab_core::device::catalog::presets;
    let mut rows = Vec::new();
    for preset in presets() {
        let row = pyo3::types::PyDict::new(py);
        row.set_item("name", preset.name)?;
        row.set_item("kind", preset.kind.name())?;
        row.set_item("rpm", preset.values.get("rpm").copied().unwrap_or(0.0) as u32)?;
        let choice = raidlab_core::device::catalog::DriveChoice::resolve(Some(preset.name), None, &Default::default())
            .map_err(errors::to_py)?;
        row.set_item("capacity_bytes", choice.capacity_bytes())?;
        row.set_item("interface", preset.interface)?;
        row.set_item("description", preset.description)?;
        row.set_item("source", preset.source)?;
        rows.push(row);
    }
    Ok(rows)
}

/// The parameters a drive kind reads: name, unit, default, min, max, doc.
#[pyfunction]
fn drive_parameters(kind: &str) -> PyResult<Vec<(String, String, f64, f64, f64, String)>> {
    let kind = raidlab_core::device::catalog::DriveKind::parse(kind).map_err(errors::to_py)?;
    Ok(kind
        .declarations()
        .iter()
        .map(|d| (d.name.to_string(), d.unit.to_string(), d.default, d.min, d.max, d.doc.to_string()))
        .collect())
}

/// md's level number for a level name or number ("5", "raid5", "mirror", ...).
#[pyfunction]
fn parse_level(text: &str) -> PyResult<u32> {
    Level::parse(text).map(Level::number).map_err(errors::to_py)
}

/// mdadm's default layout name for a level; None for raid1, which has no layout.
#[pyfunction]
fn default_layout(level: &str) -> PyResult<Option<String>> {
    let level = Level::parse(level).map_err(errors::to_py)?;
    Ok(match Layout::default_for(level) {
        Layout::Mirror => None,
        layout => Some(layout.name()),
    })
}

/// A one-line list of the layout names valid for a level.
#[pyfunction]
fn layout_choices(level: &str) -> PyResult<String> {
    Level::parse(level)
        .map(Layout::choices)
        .map_err(errors::to_py)
}

/// KiB of each member's data area for an array of `devices` members of `device_bytes` each (a
/// stacked level: its inner arrays' members):
/// the member less its data offset (mdadm's on md, `md` true; none behind a controller), as the
/// simulator sizes its members: `raidlab_core::sim::engine::config::member_data_kib`.
#[pyfunction]
fn member_data_kib(md: bool, level: &str, devices: u32, device_bytes: u64, chunk_kib: u64) -> PyResult<u64> {
    let level = raidlab_core::layout::member_level(level).map_err(errors::to_py)?;
    let sectors = device_bytes / raidlab_core::SECTOR_BYTES;
    Ok(raidlab_core::sim::engine::config::member_data_kib(md, level, devices, sectors, chunk_kib))
}

/// The data offset (512-byte sectors) mdadm 1.2 chooses for a member of `device_sectors` with
/// chunk `chunk_sectors` (0 for raid1): `raidlab_core::layout::mdadm::data_offset_sectors`.
#[pyfunction]
fn mdadm_data_offset_sectors(device_sectors: u64, chunk_sectors: u64) -> u64 {
    raidlab_core::layout::mdadm::data_offset_sectors(device_sectors, chunk_sectors)
}

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(module)?;
    module.add_class::<array::CoreArray>()?;
    module.add_class::<sim::CoreSimulation>()?;
    module.add_function(wrap_pyfunction!(drive_presets, module)?)?;
    module.add_function(wrap_pyfunction!(sim::latency_percentiles, module)?)?;
    module.add_function(wrap_pyfunction!(disksim::disksim_import, module)?)?;
    module.add_function(wrap_pyfunction!(disksim::disksim_replay, module)?)?;
    module.add_function(wrap_pyfunction!(drive_parameters, module)?)?;
    module.add_function(wrap_pyfunction!(settings::run_settings, module)?)?;
    module.add_function(wrap_pyfunction!(settings::controller_settings, module)?)?;
    module.add_function(wrap_pyfunction!(settings::ram_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(settings::partition_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(parse_level, module)?)?;
    module.add_function(wrap_pyfunction!(default_layout, module)?)?;
    module.add_function(wrap_pyfunction!(layout_choices, module)?)?;
    module.add_function(wrap_pyfunction!(mdadm_data_offset_sectors, module)?)?;
    module.add_function(wrap_pyfunction!(member_data_kib, module)?)?;
    module.add_function(wrap_pyfunction!(reliability::reliability_analyze, module)?)?;
    module.add_function(wrap_pyfunction!(reliability::reliability_defaults, module)?)?;
    module.add_function(wrap_pyfunction!(reliability::reliability_mttf_from_afr, module)?)?;
    module.add_function(wrap_pyfunction!(stacked::parse_stacked_level, module)?)?;
    module.add_function(wrap_pyfunction!(stacked::stacked_geometry, module)?)?;
    module.add_function(wrap_pyfunction!(reliability::reliability_timeout_drops, module)?)?;
    module.add_function(wrap_pyfunction!(reliability::drive_behaviour, module)?)?;
    module.add("MAX_DEVICES", MAX_DEVICES)?;
    module.add("DEFAULT_CHUNK_KIB", DEFAULT_CHUNK_KIB)?;
    // Bounds on allocations the user's numbers size, so Python can refuse them first.
    module.add("MAX_MAP_ENTRIES", raidlab_core::layout::MAX_MAP_ENTRIES)?;
    module.add("MAX_JOBS", raidlab_core::sim::workload::MAX_JOBS)?;
    module.add("FIO_PERCENTILES", raidlab_core::sim::histogram::FIO_PERCENTILES.to_vec())?;
    module.add("MAX_THREADS_TOTAL", raidlab_core::sim::workload::MAX_THREADS_TOTAL)?;
    module.add("MAX_OUTSTANDING_IOS", raidlab_core::sim::workload::MAX_OUTSTANDING_IOS)?;
    module.add("MAX_SIM_TIME_S", raidlab_core::sim::engine::MAX_SIM_TIME_NS / 1_000_000_000)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
