//! A hardware RAID controller's cache: battery-backed write-back (writes are acknowledged once
//! in cache and destaged later, oldest row first, coalescing each row's dirty pages so a fully
//! dirty row becomes a full-stripe write with no pre-reads), write-through without a BBU, and
//! read-ahead of the next row. Destaging starts above the high watermark and goes on down to
//! the low one. The engine drives it (front.rs); this is its state.

use super::config::HwConfig;
use crate::layout::Array;
use crate::time::Nanos;
use crate::{PAGE_SECTORS, SECTOR_BYTES};
use std::collections::{BTreeMap, HashMap, VecDeque};

pub(crate) struct Row {
    pages: Vec<u64>,
    dirty_pages: u64,
    age: u64,
}

pub(crate) struct Destage {
    pub(crate) ops_remaining: u32,
    pub(crate) bytes: u64,
}

pub struct WriteCache {
    pub(crate) config: HwConfig,
    pub(crate) row_sectors: u64,
    pub(crate) capacity_sectors: u64,
    pub(crate) rows: HashMap<u64, Row>,
    pub(crate) by_age: BTreeMap<u64, u64>,
    pub(crate) next_age: u64,
    pub(crate) dirty_bytes: u64,
    pub(crate) destaging_bytes: u64,
    pub(crate) destages: BTreeMap<u64, Destage>,
    pub(crate) next_destage: u64,
    pub(crate) waiting_writes: VecDeque<u32>,
    pub(crate) readahead: (u64, u64),
    pub(crate) last_read_end: u64,
    pub(crate) spare_bitmaps: Vec<Vec<u64>>,
    /// Destaging until dirty data is down to the low watermark.
    pub(crate) draining: bool,
    /// Destages written to the drives whose parity work is still in the XOR engine: (id, bytes).
    pub(crate) parity_pending: Vec<(u64, u64)>,
    /// The read share: pages read from the drives (page → stamp) and the oldest first (stamp →
    /// page); at most `read_capacity_pages`, the oldest going first.
    read_pages: HashMap<u64, u64>,
    read_order: BTreeMap<u64, u64>,
    read_stamp: u64,
    read_capacity_pages: u64,
    /// Bytes the write share holds (the cache less its read share).
    write_capacity_bytes: u64,
    /// The cache left write-back (a BBU learn cycle): destage every dirty row.
    pub(crate) drain_all: bool,
}

const PAGE_BYTES: u64 = PAGE_SECTORS * SECTOR_BYTES;

impl WriteCache {
    pub fn new(config: HwConfig, array: &Array) -> WriteCache {
        let stripe = array.io_opt_bytes() / SECTOR_BYTES;
        let row_sectors = if stripe > 0 { stripe } else { array.chunk_sectors() };
        assert!(row_sectors % PAGE_SECTORS == 0);
        WriteCache {
            config,
            row_sectors,
            capacity_sectors: array.capacity_sectors(),
            rows: HashMap::new(),
            by_age: BTreeMap::new(),
            next_age: 0,
            dirty_bytes: 0,
            destaging_bytes: 0,
            destages: BTreeMap::new(),
            next_destage: 0,
            waiting_writes: VecDeque::new(),
            readahead: (0, 0),
            last_read_end: u64::MAX,
            spare_bitmaps: Vec::new(),
            draining: false,
            parity_pending: Vec::new(),
            read_pages: HashMap::new(),
            read_order: BTreeMap::new(),
            read_stamp: 0,
            read_capacity_pages: (config.cache_bytes as f64 * config.read_cache_fraction) as u64 / PAGE_BYTES,
            write_capacity_bytes: config.cache_bytes
                - ((config.cache_bytes as f64 * config.read_cache_fraction) as u64 / PAGE_BYTES) * PAGE_BYTES,
            drain_all: false,
        }
    }

    pub(crate) fn pages_per_row(&self) -> u64 {
        self.row_sectors / PAGE_SECTORS
    }

    /// Controller time to take `bytes` into or out of cache.
    pub(crate) fn service_ns(&self, bytes: u64) -> Nanos {
        self.config.command_overhead_ns + bytes * 1_000_000_000 / self.config.cache_bytes_per_second
    }

    pub(crate) fn page_range(sector: u64, sectors: u64) -> (u64, u64) {
        (sector / PAGE_SECTORS, (sector + sectors).div_ceil(PAGE_SECTORS))
    }

    pub(crate) fn is_dirty(&self, page: u64) -> bool {
        let per_row = self.pages_per_row();
        self.rows.get(&(page / per_row)).is_some_and(|row| {
            let bit = page % per_row;
            row.pages[(bit / 64) as usize] & (1 << (bit % 64)) != 0
        })
    }

    /// Pages of the range not yet dirty (what a write would add to the cache).
    pub(crate) fn new_pages(&self, sector: u64, sectors: u64) -> u64 {
        let (first, end) = WriteCache::page_range(sector, sectors);
        (first..end).filter(|&p| !self.is_dirty(p)).count() as u64
    }

    pub(crate) fn mark_dirty(&mut self, sector: u64, sectors: u64) {
        let (first, end) = WriteCache::page_range(sector, sectors);
        let per_row = self.pages_per_row();
        for page in first..end {
            let row_index = page / per_row;
            if !self.rows.contains_key(&row_index) {
                let words = per_row.div_ceil(64) as usize;
                let mut pages = self.spare_bitmaps.pop().unwrap_or_default();
                pages.clear();
                pages.resize(words, 0);
                let age = self.next_age;
                self.next_age += 1;
                self.by_age.insert(age, row_index);
                self.rows.insert(row_index, Row { pages, dirty_pages: 0, age });
            }
            let row = self.rows.get_mut(&row_index).expect("inserted");
            let bit = page % per_row;
            let word = &mut row.pages[(bit / 64) as usize];
            if *word & (1 << (bit % 64)) == 0 {
                *word |= 1 << (bit % 64);
                row.dirty_pages += 1;
                self.dirty_bytes += PAGE_BYTES;
            }
        }
    }

    pub(crate) fn has_room(&self, bytes: u64) -> bool {
        self.dirty_bytes + self.destaging_bytes + bytes <= self.write_capacity_bytes
    }

    /// The write share's size.
    pub(crate) fn write_capacity(&self) -> u64 {
        self.write_capacity_bytes
    }

    /// Keeps the pages of a read from the drives in the read share (the oldest leave first).
    pub(crate) fn keep_read(&mut self, sector: u64, sectors: u64) {
        if self.read_capacity_pages == 0 {
            return;
        }
        let (first, end) = WriteCache::page_range(sector, sectors);
        for page in first..end {
            if let Some(old) = self.read_pages.insert(page, self.read_stamp) {
                self.read_order.remove(&old);
            }
            self.read_order.insert(self.read_stamp, page);
            self.read_stamp += 1;
            while self.read_pages.len() as u64 > self.read_capacity_pages {
                let (_, oldest) = self.read_order.pop_first().expect("pages kept");
                self.read_pages.remove(&oldest);
            }
        }
    }

    pub(crate) fn read_hit(&self, sector: u64, sectors: u64) -> bool {
        let (start, end) = self.readahead;
        if sector >= start && sector + sectors <= end {
            return true;
        }
        let (first, end) = WriteCache::page_range(sector, sectors);
        (first..end).all(|p| self.is_dirty(p) || self.read_pages.contains_key(&p))
    }

    /// Takes the oldest dirty row out of the cache: its contiguous dirty extents in sectors.
    pub(crate) fn take_oldest(&mut self, extents: &mut Vec<(u64, u64)>) -> Option<u64> {
        let (&age, &row_index) = self.by_age.iter().next()?;
        self.by_age.remove(&age);
        let row = self.rows.remove(&row_index).expect("aged row exists");
        debug_assert_eq!(row.age, age);
        let base = row_index * self.row_sectors;
        let mut run: Option<(u64, u64)> = None;
        for bit in 0..self.pages_per_row() {
            let dirty = row.pages[(bit / 64) as usize] & (1 << (bit % 64)) != 0;
            match (dirty, run) {
                (true, None) => run = Some((bit, bit + 1)),
                (true, Some((start, _))) => run = Some((start, bit + 1)),
                (false, Some((start, end))) => {
                    extents.push((base + start * PAGE_SECTORS, (end - start) * PAGE_SECTORS));
                    run = None;
                }
                (false, None) => {}
            }
        }
        if let Some((start, end)) = run {
            extents.push((base + start * PAGE_SECTORS, (end - start) * PAGE_SECTORS));
        }
        for extent in extents.iter_mut() {
            extent.1 = extent.1.min(self.capacity_sectors - extent.0);
        }
        let bytes = row.dirty_pages * PAGE_BYTES;
        self.dirty_bytes -= bytes;
        self.destaging_bytes += bytes;
        self.spare_bitmaps.push(row.pages);
        Some(bytes)
    }
}

impl WriteCache {
    /// Whether destaging should go on (or start): above the high watermark, or down to the
    /// low one once started, or while writes wait for room.
    pub(crate) fn wants_destage(&mut self) -> bool {
        let high = (self.config.cache_bytes as f64 * self.config.destage_start_fraction) as u64;
        let low = (self.config.cache_bytes as f64 * self.config.destage_stop_fraction) as u64;
        let low = low.min(high);
        if self.dirty_bytes > high {
            self.draining = true;
        } else if self.dirty_bytes <= low {
            self.draining = false;
        }
        self.draining || !self.waiting_writes.is_empty() || (self.drain_all && self.dirty_bytes > 0)
    }

    /// Starts a destage of `bytes` in `ops` array operations; returns its id.
    pub(crate) fn start_destage(&mut self, ops: u32, bytes: u64) -> u64 {
        let id = self.next_destage;
        self.next_destage += 1;
        self.destages.insert(id, Destage { ops_remaining: ops, bytes });
        id
    }

    /// One operation of destage `id` finished; true when the whole destage has.
    pub(crate) fn destage_op_done(&mut self, id: u64) -> bool {
        let entry = self.destages.get_mut(&id).expect("a destage in flight");
        assert!(entry.ops_remaining > 0, "destage operation finished twice");
        entry.ops_remaining -= 1;
        if entry.ops_remaining > 0 {
            return false;
        }
        let bytes = self.destages.remove(&id).expect("present").bytes;
        self.destaging_bytes -= bytes;
        true
    }

    /// Checks the cache's bookkeeping: dirty bytes are the dirty pages of the rows, every row
    /// is in the age index once, and dirty plus destaging data fits the cache.
    pub fn check(&self) {
        let dirty: u64 = self.rows.values().map(|row| row.dirty_pages * PAGE_BYTES).sum();
        assert_eq!(dirty, self.dirty_bytes, "dirty bytes are the dirty rows' pages");
        assert_eq!(self.by_age.len(), self.rows.len(), "one age entry per dirty row");
        for (&age, row_index) in &self.by_age {
            let row = self.rows.get(row_index).expect("aged row exists");
            assert_eq!(row.age, age, "row age matches its index entry");
            let bits: u64 = row.pages.iter().map(|w| w.count_ones() as u64).sum();
            assert_eq!(bits, row.dirty_pages, "a row's dirty count is its bitmap's");
        }
        let destaging: u64 = self.destages.values().map(|d| d.bytes).sum::<u64>() + self.parity_pending.iter().map(|p| p.1).sum::<u64>();
        assert_eq!(destaging, self.destaging_bytes, "destaging bytes are the destages'");
        assert!(self.destages.len() as u32 <= self.config.destage_concurrency, "destages beyond the limit");
        assert!(self.dirty_bytes + self.destaging_bytes <= self.write_capacity_bytes.max(PAGE_BYTES), "cache overfilled");
        assert_eq!(self.read_pages.len(), self.read_order.len(), "read pages indexed once");
        assert!(self.read_pages.len() as u64 <= self.read_capacity_pages, "read share overfilled");
    }
}
