//! A hardware RAID controller's cache: battery-backed write-back (writes are acknowledged once
//! in cache and destaged later, oldest row first, coalescing each row's dirty pages so a fully
//! dirty row becomes a full-stripe write with no pre-reads), write-through without a BBU, and
//! optional sequential read-ahead of the next row.

use super::config::HwConfig;
use super::events::Event;
use super::host::HostOp;
use super::{Owner, Simulation};
use crate::layout::Array;
use crate::time::Nanos;
use crate::{PAGE_SECTORS, SECTOR_BYTES};
use std::collections::{BTreeMap, HashMap, VecDeque};

struct Row {
    pages: Vec<u64>,
    dirty_pages: u64,
    age: u64,
}

struct Destage {
    ops_remaining: u32,
    bytes: u64,
}

pub struct WriteCache {
    config: HwConfig,
    row_sectors: u64,
    capacity_sectors: u64,
    rows: HashMap<u64, Row>,
    by_age: BTreeMap<u64, u64>,
    next_age: u64,
    dirty_bytes: u64,
    destaging_bytes: u64,
    destages: super::slab::Slab<Destage>,
    waiting_writes: VecDeque<u32>,
    readahead: (u64, u64),
    last_read_end: u64,
    spare_bitmaps: Vec<Vec<u64>>,
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
            destages: super::slab::Slab::with_capacity(64),
            waiting_writes: VecDeque::new(),
            readahead: (0, 0),
            last_read_end: u64::MAX,
            spare_bitmaps: Vec::new(),
        }
    }

    fn pages_per_row(&self) -> u64 {
        self.row_sectors / PAGE_SECTORS
    }

    /// Controller time to take `bytes` into or out of cache.
    fn service_ns(&self, bytes: u64) -> Nanos {
        self.config.command_overhead_ns + bytes * 1_000_000_000 / self.config.cache_bytes_per_second
    }

    fn page_range(sector: u64, sectors: u64) -> (u64, u64) {
        (sector / PAGE_SECTORS, (sector + sectors).div_ceil(PAGE_SECTORS))
    }

    fn is_dirty(&self, page: u64) -> bool {
        let per_row = self.pages_per_row();
        self.rows.get(&(page / per_row)).is_some_and(|row| {
            let bit = page % per_row;
            row.pages[(bit / 64) as usize] & (1 << (bit % 64)) != 0
        })
    }

    /// Pages of the range not yet dirty (what a write would add to the cache).
    fn new_pages(&self, sector: u64, sectors: u64) -> u64 {
        let (first, end) = WriteCache::page_range(sector, sectors);
        (first..end).filter(|&p| !self.is_dirty(p)).count() as u64
    }

    fn mark_dirty(&mut self, sector: u64, sectors: u64) {
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

    fn has_room(&self, bytes: u64) -> bool {
        self.dirty_bytes + self.destaging_bytes + bytes <= self.config.cache_bytes
    }

    fn read_hit(&self, sector: u64, sectors: u64) -> bool {
        let (start, end) = self.readahead;
        if sector >= start && sector + sectors <= end {
            return true;
        }
        let (first, end) = WriteCache::page_range(sector, sectors);
        (first..end).all(|p| self.is_dirty(p))
    }

    /// Takes the oldest dirty row out of the cache: its contiguous dirty extents in sectors.
    fn take_oldest(&mut self, extents: &mut Vec<(u64, u64)>) -> Option<u64> {
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

impl Simulation {
    fn cache(&mut self) -> &mut WriteCache {
        self.cache.as_mut().expect("hardware controller")
    }

    pub(super) fn cache_submit(&mut self, id: u32) {
        let io = self.host_ios.get(id);
        let (op, sector, sectors, thread) = (io.op, io.sector, io.sectors, io.thread);
        let write_back = self.cache().config.bbu && self.cache().config.cache_bytes > 0;
        match op {
            HostOp::Write if write_back => self.cache_write(id),
            HostOp::Flush if write_back => {
                let at = self.now + self.cache().service_ns(0);
                self.events.push(at, Event::CacheAck { host_io: id });
            }
            HostOp::Read if self.cache().read_hit(sector, sectors) => {
                let at = self.now + self.cache().service_ns(sectors * SECTOR_BYTES);
                self.events.push(at, Event::CacheAck { host_io: id });
            }
            HostOp::Read => {
                self.cache_read_ahead(sector, sectors, thread);
                self.submit_array(Owner::Host(id), op, sector, sectors, thread);
            }
            _ => self.submit_array(Owner::Host(id), op, sector, sectors, thread),
        }
    }

    /// Absorbs a write if the cache has room; otherwise it waits for a destage to finish.
    fn cache_write(&mut self, id: u32) {
        let io = self.host_ios.get(id);
        let (sector, sectors) = (io.sector, io.sectors);
        let now = self.now;
        let cache = self.cache();
        let needed = cache.new_pages(sector, sectors) * PAGE_BYTES;
        if !cache.waiting_writes.is_empty() || !cache.has_room(needed) {
            assert!(needed <= cache.config.cache_bytes, "a write larger than the whole cache");
            cache.waiting_writes.push_back(id);
        } else {
            cache.mark_dirty(sector, sectors);
            let at = now + cache.service_ns(sectors * SECTOR_BYTES);
            self.events.push(at, Event::CacheAck { host_io: id });
        }
        self.cache_destage_more();
    }

    /// Prefetches the next row after a sequential read, when read-ahead is on.
    fn cache_read_ahead(&mut self, sector: u64, sectors: u64, thread: u32) {
        let cache = self.cache();
        let sequential = cache.last_read_end == sector;
        cache.last_read_end = sector + sectors;
        if !cache.config.read_ahead || !sequential {
            return;
        }
        let start = sector + sectors;
        let end = ((start / cache.row_sectors + 2) * cache.row_sectors).min(cache.capacity_sectors);
        if end <= start || cache.readahead.1 >= end {
            return;
        }
        cache.readahead = (start, end);
        self.submit_array(Owner::Prefetch, HostOp::Read, start, end - start, thread);
    }

    /// Starts destages while dirty data is above the threshold (or writes wait for room).
    fn cache_destage_more(&mut self) {
        let mut extents = Vec::new();
        loop {
            let cache = self.cache();
            let threshold = (cache.config.cache_bytes as f64 * cache.config.destage_start_fraction) as u64;
            let busy = cache.destages.len() as u32 >= cache.config.destage_concurrency;
            if busy || (cache.dirty_bytes <= threshold && cache.waiting_writes.is_empty()) {
                return;
            }
            extents.clear();
            let Some(bytes) = cache.take_oldest(&mut extents) else { return };
            let destage = cache.destages.insert(Destage { ops_remaining: extents.len() as u32, bytes });
            for &(sector, sectors) in &extents {
                self.submit_array(Owner::Destage(destage as u64), HostOp::Write, sector, sectors, u32::MAX);
            }
        }
    }

    pub(super) fn cache_destaged(&mut self, destage: u64) {
        let cache = self.cache();
        let entry = cache.destages.get_mut(destage as u32);
        entry.ops_remaining -= 1;
        if entry.ops_remaining > 0 {
            return;
        }
        let bytes = cache.destages.remove(destage as u32).bytes;
        cache.destaging_bytes -= bytes;
        while let Some(&id) = self.cache().waiting_writes.front() {
            let io = self.host_ios.get(id);
            let (sector, sectors) = (io.sector, io.sectors);
            let now = self.now;
            let cache = self.cache();
            if !cache.has_room(cache.new_pages(sector, sectors) * PAGE_BYTES) {
                break;
            }
            cache.waiting_writes.pop_front();
            cache.mark_dirty(sector, sectors);
            let at = now + cache.service_ns(sectors * SECTOR_BYTES);
            self.events.push(at, Event::CacheAck { host_io: id });
        }
        self.cache_destage_more();
    }
}
