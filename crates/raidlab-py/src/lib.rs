//! PyO3 glue between raidlab-core and the `raidlab` Python package (`raidlab._core`).
//!
//! Glue only: argument conversion, error mapping ([`errors`]) and the table-building loops
//! ([`array`]). All RAID knowledge lives in raidlab-core; all user-facing ergonomics in Python.

use pyo3::prelude::*;
use raidlab_core::layout::{Layout, Level, DEFAULT_CHUNK_KIB, MAX_DEVICES};

mod array;
mod errors;

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

#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(module)?;
    module.add_class::<array::CoreArray>()?;
    module.add_function(wrap_pyfunction!(parse_level, module)?)?;
    module.add_function(wrap_pyfunction!(default_layout, module)?)?;
    module.add_function(wrap_pyfunction!(layout_choices, module)?)?;
    module.add("MAX_DEVICES", MAX_DEVICES)?;
    module.add("DEFAULT_CHUNK_KIB", DEFAULT_CHUNK_KIB)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
