//! `CoreArray`: a validated md array from raidlab-core, seen from Python.
//!
//! This is glue only: it parses the level and layout with the core's parsers, builds the core
//! [`Array`] and turns its answers into Python values. The per-chunk map loops live here so that
//! tables with millions of cells are built in Rust, not in Python.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use raidlab_core::layout::{Array, ArraySpec, Cell, Layout, Level, MAX_DEVICES};

use crate::errors::{to_py, RequestError};

/// A validated md array (the `raidlab.Array` class wraps this one).
#[pyclass(name = "CoreArray", module = "raidlab._core", frozen)]
pub struct CoreArray {
    array: Array,
    chunk_kib: u64,
    member_kib: Vec<u64>,
}

impl CoreArray {
    /// Whole chunks in `member`'s data area, capped at `rows` if given.
    fn entries(&self, member: u32, rows: Option<u64>) -> u64 {
        self.array.map_rows(member, rows)
    }

    /// The logical chunk stored at member chunk `entry`, as md's map would name it.
    fn cell(&self, member: u32, entry: u64) -> Cell {
        let chunk_sectors = self.array.chunk_sectors();
        match self.array.unmap(member, entry * chunk_sectors) {
            Cell::Data(sector) => {
                debug_assert_eq!(
                    sector % chunk_sectors,
                    0,
                    "chunk starts map to chunk starts"
                );
                Cell::Data(sector / chunk_sectors)
            }
            other => other,
        }
    }

    /// Visits every map cell row by row, members in order within a row, skipping members whose
    /// data area ends before the row: `visit(member, cell, q_exponent)`, with the logical chunk
    /// number in `Cell::Data` and, for raid6 data cells, the Q coefficient exponent.
    ///
    /// raid4/5/6 rows come from one `Array::stripe` per row (the same roles `unmap` reads) rather
    /// than one `unmap` per cell, which recomputes the row's roles for every member.
    fn visit_cells<E>(
        &self,
        rows: Option<u64>,
        mut visit: impl FnMut(u32, Cell, Option<u32>) -> Result<(), E>,
    ) -> Result<(), E> {
        let devices = self.array.devices();
        let entries: Vec<u64> = (0..devices).map(|m| self.entries(m, rows)).collect();
        let longest = entries.iter().copied().max().unwrap_or(0);
        let striped = self.array.stripe(0).is_some();
        let used_rows = self.array.parity_rows();
        let mut roles = [(Cell::Unused, None); MAX_DEVICES];
        for row in 0..longest {
            roles[..devices as usize].fill((Cell::Unused, None));
            if striped && row < used_rows {
                let stripe = self.array.stripe(row).expect("raid4/5/6 have parity rows");
                roles[stripe.p as usize] = (Cell::P, None);
                if let Some(q) = stripe.q {
                    roles[q as usize] = (Cell::Q, None);
                }
                let first_chunk = row * stripe.data_count as u64;
                for (index, &member) in stripe.data_members().iter().enumerate() {
                    let exponent = stripe.q.map(|_| stripe.q_slot[index]);
                    roles[member as usize] = (Cell::Data(first_chunk + index as u64), exponent);
                }
            }
            for member in 0..devices {
                if row >= entries[member as usize] {
                    continue;
                }
                let (cell, exponent) = if striped {
                    roles[member as usize]
                } else {
                    (self.cell(member, row), None)
                };
                debug_assert_eq!(
                    cell,
                    self.cell(member, row),
                    "stripe roles agree with unmap"
                );
                visit(member, cell, exponent)?;
            }
        }
        Ok(())
    }

    /// One Python list per member, filled from `visit_cells` with `value(cell, q_exponent)`.
    fn table<'py>(
        &self,
        py: Python<'py>,
        rows: Option<u64>,
        value: impl Fn(Cell, Option<u32>) -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.array.map_cells(rows).map_err(to_py)?;
        let mut columns: Vec<Vec<Bound<'py, PyAny>>> = (0..self.array.devices())
            .map(|m| Vec::with_capacity(self.entries(m, rows) as usize))
            .collect();
        self.visit_cells(rows, |member, cell, exponent| {
            columns[member as usize].push(value(cell, exponent)?);
            Ok::<(), PyErr>(())
        })?;
        let table = PyList::empty(py);
        for column in columns {
            table.append(PyList::new(py, column)?)?;
        }
        Ok(table)
    }
}

#[pymethods]
impl CoreArray {
    /// Validates an array as md would. `level` is md's level ("5", "raid5", ...), `layout` an
    /// mdadm layout name or None for mdadm's default, sizes in KiB.
    #[new]
    #[pyo3(signature = (level, layout, chunk_kib, member_kib_list))]
    fn new(
        level: &str,
        layout: Option<&str>,
        chunk_kib: u64,
        member_kib_list: Vec<u64>,
    ) -> PyResult<Self> {
        let level = Level::parse(level).map_err(to_py)?;
        let layout = layout
            .map(|name| Layout::parse(level, name))
            .transpose()
            .map_err(to_py)?;
        let spec = ArraySpec {
            level,
            layout,
            chunk_kib,
            member_kib: member_kib_list.clone(),
        };
        let array = Array::new(&spec).map_err(to_py)?;
        Ok(CoreArray {
            array,
            chunk_kib,
            member_kib: member_kib_list,
        })
    }

    /// md's level number: 0, 1, 4, 5, 6 or 10.
    #[getter]
    fn level(&self) -> u32 {
        self.array.level().number()
    }

    /// The layout's mdadm name ("left-symmetric", "n2", "original", ...); None for raid1.
    #[getter]
    fn layout(&self) -> Option<String> {
        match self.array.layout() {
            Layout::Mirror => None,
            layout => Some(layout.name()),
        }
    }

    /// md's superblock layout word.
    #[getter]
    fn layout_number(&self) -> u32 {
        self.array.layout().number()
    }

    #[getter]
    fn devices(&self) -> u32 {
        self.array.devices()
    }

    #[getter]
    fn chunk_kib(&self) -> u64 {
        self.chunk_kib
    }

    #[getter]
    fn chunk_sectors(&self) -> u64 {
        self.array.chunk_sectors()
    }

    /// Member data-area sizes as given, in KiB.
    #[getter]
    fn member_kib_list(&self) -> Vec<u64> {
        self.member_kib.clone()
    }

    /// Member sizes as md uses them (rounded down to 4 KiB pages), in sectors.
    #[getter]
    fn member_sectors(&self) -> Vec<u64> {
        self.array.member_sectors().to_vec()
    }

    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.array.capacity_bytes()
    }

    #[getter]
    fn io_min_bytes(&self) -> u64 {
        self.array.io_min_bytes()
    }

    #[getter]
    fn io_opt_bytes(&self) -> u64 {
        self.array.io_opt_bytes()
    }

    /// Copies of each data chunk (1 for raid0/4/5/6).
    #[getter]
    fn copies(&self) -> u32 {
        self.array.copies()
    }

    /// Data chunks per full stripe, as md counts them for io_opt.
    #[getter]
    fn data_disks(&self) -> u32 {
        self.array.data_disks()
    }

    /// Whole chunks in each member's data area (the length of each `map_table` column).
    fn member_chunks(&self) -> Vec<u64> {
        (0..self.array.devices())
            .map(|m| self.entries(m, None))
            .collect()
    }

    /// One list per member, one entry per chunk of its data area from the start (at most
    /// `rows` entries if given): the logical chunk number stored there, "P", "Q" or None.
    #[pyo3(signature = (rows=None))]
    fn map_table<'py>(&self, py: Python<'py>, rows: Option<u64>) -> PyResult<Bound<'py, PyList>> {
        let p = PyString::intern(py, "P").into_any();
        let q = PyString::intern(py, "Q").into_any();
        let none = py.None().into_bound(py);
        self.table(py, rows, |cell, _| {
            Ok(match cell {
                Cell::Data(chunk) => chunk.into_pyobject(py)?.into_any(),
                Cell::P => p.clone(),
                Cell::Q => q.clone(),
                Cell::Unused => none.clone(),
            })
        })
    }

    /// raid6 only: same shape as `map_table`; for each data cell the exponent e such that the
    /// cell contributes g^e * D to its row's Q (md's Q slot), None elsewhere.
    #[pyo3(signature = (rows=None))]
    fn q_log_coeff<'py>(&self, py: Python<'py>, rows: Option<u64>) -> PyResult<Bound<'py, PyList>> {
        if self.array.level() != Level::Raid6 {
            return Err(RequestError::new_err(format!(
                "Q coefficients exist only for raid6, not raid{}",
                self.array.level().number()
            )));
        }
        let none = py.None().into_bound(py);
        self.table(py, rows, |_, exponent| match exponent {
            Some(e) => Ok(e.into_pyobject(py)?.into_any()),
            None => Ok(none.clone()),
        })
    }

    /// raid0 only (else empty): md's zones as `(start_row, end_row, members)`, rows being member
    /// chunks, `end_row` exclusive, `members` the devices striped across in that zone.
    fn raid0_zones(&self) -> Vec<(u64, u64, Vec<u32>)> {
        if self.array.level() != Level::Raid0 {
            return Vec::new();
        }
        let chunk_sectors = self.array.chunk_sectors();
        let devices = self.array.devices();
        let mut ends: Vec<u64> = (0..devices)
            .map(|m| self.array.member_used_sectors(m) / chunk_sectors)
            .collect();
        ends.sort_unstable();
        ends.dedup();
        let mut zones = Vec::new();
        let mut start = 0;
        for end in ends.into_iter().filter(|&end| end > 0) {
            // Which members hold data at the zone's first row, read from the map itself.
            let members: Vec<u32> = (0..devices)
                .filter(|&m| matches!(self.cell(m, start), Cell::Data(_)))
                .collect();
            zones.push((start, end, members));
            start = end;
        }
        zones
    }

    fn __repr__(&self) -> String {
        let layout = self.layout().map_or(String::new(), |l| format!(" {l}"));
        format!(
            "<CoreArray raid{}{layout}, {} devices, {} KiB chunk>",
            self.level(),
            self.devices(),
            self.chunk_kib
        )
    }
}
