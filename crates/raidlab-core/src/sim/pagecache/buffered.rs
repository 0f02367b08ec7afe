//! Buffered host I/O through the page cache (`sim::pagecache`): reads served from the cache or
//! waiting for readahead, writes dirtying pages (or waiting in balance_dirty_pages), fsyncs
//! waiting for their pages then flushing every member, and the flusher's writeback bios. The
//! page cache's bios travel as host I/Os of the kernel (`KERNEL_JOB`) through the same front
//! ends as O_DIRECT I/O (md's stripe cache, the planner, a controller's cache), and come back
//! to `page_cache_bio_done` instead of a job.

use super::PageCacheEvent;
use crate::sim::engine::events::Event;
use crate::sim::host::HostOp;
use crate::sim::block::FLUSHER_THREAD;
use crate::sim::engine::Simulation;
use crate::sim::host::{HostIo, KERNEL_JOB};
use crate::layout::Array;
use crate::sim::engine::config::SimConfig;
use crate::sim::pagecache::{Bio, PageCache, ReadOutcome, ReadWait};
use crate::sim::workload::Job;
use crate::sim::offsets::Region;
use crate::{PAGE_BYTES, PAGE_SECTORS, SECTOR_BYTES};
use crate::error::Result;
use std::collections::HashMap;

/// The page cache's state in a run (buffered jobs only; `cache` is None without them).
pub(crate) struct PageCacheRoom {
    pub(crate) cache: Option<PageCache>,
    /// Bios the page cache made, kept for their allocation.
    pub(crate) bios: Vec<Bio>,
    /// fsyncs in flight: files each still waits for.
    pub(crate) syncs: HashMap<u32, u32>,
}

impl PageCacheRoom {
    /// The page cache the buffered jobs among `regions` (each job with its region) share
    /// (none without them).
    pub(crate) fn new(config: &SimConfig, array: &Array, regions: &[(Job, Region)]) -> Result<PageCacheRoom> {
        let cache = build_page_cache(config, array, regions);
        if cache.is_some() {
            config.page_cache.validate()?;
        }
        Ok(PageCacheRoom { cache, bios: Vec::new(), syncs: HashMap::new() })
    }
}

/// The job a page-cache bio belongs to: none (the kernel issues it).
/// include/linux/bvec.h BIO_MAX_VECS: pages one bio holds.
const BIO_MAX_PAGES: u64 = 256;

/// The page cache for a run with buffered jobs (None without): one file per file of each
/// buffered job's region, its pages cold unless the job keeps them (`invalidate` off).
pub(crate) fn build_page_cache(config: &SimConfig, array: &Array, regions: &[(Job, Region)]) -> Option<PageCache> {
    if !regions.iter().any(|(job, _)| job.buffered) {
        return None;
    }
    // Linux 6.1 writes a block device's pages back one 4 KiB bio each (blkdev_writepages →
    // write_cache_pages → block_write_full_page → submit_bh) under the flusher's plug
    // (wb_writeback's blk_start_plug), which releases them together, merged up to the queue's
    // max_sectors_kb; md gathers them in its stripe heads (raid5_unplug). The simulator sends
    // what a plug gathers as one bio of contiguous pages, at most the queue's max_sectors_kb
    // and BIO_MAX_VECS (256) pages.
    let io_pages = (config.queue_limits.max_sectors as u64 / PAGE_SECTORS).clamp(1, BIO_MAX_PAGES);
    let mut cache = PageCache::new(config.page_cache, array, io_pages, config.queue_limits.nr_requests);
    for (job, region) in regions.iter().filter(|(job, _)| job.buffered) {
        for file in 0..job.files as u64 {
            let (start, end) = clone_pages(job, region, file);
            cache.add_file(start, end);
        }
    }
    for (job, region) in regions.iter().filter(|(job, _)| job.buffered && !job.invalidate) {
        for file in 0..job.files as u64 {
            let (start, end) = clone_pages(job, region, file);
            cache.preload(start, end);
        }
    }
    Some(cache)
}

fn file_pages(region: &Region, file: u64) -> (u64, u64) {
    let start = region.start_bytes + file * region.file_bytes;
    (start / PAGE_BYTES, (start + region.file_bytes).div_ceil(PAGE_BYTES))
}

/// A file's pages as the job's clones use them: with fio's `offset_increment` clone t works
/// `t × offset_increment` further on, so the file reaches as far as its last clone does.
fn clone_pages(job: &Job, region: &Region, file: u64) -> (u64, u64) {
    let (start, end) = file_pages(region, file);
    let shift = job.offset_increment_bytes.saturating_mul(job.threads.saturating_sub(1) as u64);
    (start, end + shift.div_ceil(PAGE_BYTES))
}

impl Simulation {
    pub(crate) fn page_cache_event(&mut self, event: PageCacheEvent) {
        match event {
            PageCacheEvent::PageCacheTimer => self.page_cache_timer(),
        }
    }

    /// A buffered job's host I/O enters the page cache.
    #[inline(never)]
    pub(crate) fn buffered_submit(&mut self, id: u32) {
        let io = self.host.ios.get(id);
        let (start, end) = (io.sector / PAGE_SECTORS, (io.sector + io.sectors).div_ceil(PAGE_SECTORS));
        match io.op {
            HostOp::Read => self.buffered_read(id, start, end),
            HostOp::Write => self.buffered_write(id, start, end),
            HostOp::Flush => self.buffered_fsync(id),
        }
        self.page_cache_pump();
    }

    fn buffered_read(&mut self, id: u32, start: u64, end: u64) {
        let (job, thread) = (self.host.ios.get(id).job, self.host.ios.get(id).thread);
        let mut bios = std::mem::take(&mut self.pagecache.bios);
        let cache = self.pagecache.cache.as_mut().expect("a page cache");
        let outcome = cache.read(job, thread, start, end, &mut bios);
        if outcome == ReadOutcome::Wait {
            cache.readers.push(ReadWait { host_io: id, start, end, thread });
        }
        self.issue_bios(&mut bios, thread);
        self.pagecache.bios = bios;
        if outcome == ReadOutcome::Hit {
            self.copied(id);
        }
    }

    fn buffered_write(&mut self, id: u32, start: u64, end: u64) {
        let now = self.now;
        let cache = self.pagecache.cache.as_mut().expect("a page cache");
        if cache.writers.is_empty() && cache.write(start, end, now) {
            self.copied(id);
            self.arm_page_cache_timer();
        } else {
            cache.writers.push_back((id, now));
        }
    }

    /// fsync/fdatasync: every file of the job's region (a job's threads share its files).
    fn buffered_fsync(&mut self, id: u32) {
        let job = self.host.ios.get(id).job as usize;
        let region = self.host.jobs[job].region;
        let now = self.now;
        let cache = self.pagecache.cache.as_mut().expect("a page cache");
        let mut files: Vec<u64> = (0..self.host.jobs[job].job.files as u64).map(|f| cache.file_of(file_pages(&region, f).0).0).collect();
        files.dedup();
        for &file in &files {
            cache.begin_sync(id, file, now);
        }
        self.pagecache.syncs.insert(id, files.len() as u32);
        self.page_cache_progress();
    }

    /// The host I/O's data is copied between the cache and the user buffer: it completes after
    /// the call's CPU time and the copy.
    fn copied(&mut self, id: u32) {
        let config = *self.pagecache.cache.as_ref().expect("a page cache").config();
        let bytes = self.host.ios.get(id).sectors * SECTOR_BYTES;
        let copy_ns = (bytes as u128 * 1_000_000_000 / config.copy_bytes_per_second.max(1) as u128) as u64;
        self.complete_host_at(self.now + config.call_ns + copy_ns, id);
    }

    /// Sends the page cache's bios to the array as kernel host I/Os.
    fn issue_bios(&mut self, bios: &mut Vec<Bio>, thread: u32) {
        for bio in bios.drain(..) {
            let op = if bio.write { HostOp::Write } else { HostOp::Read };
            let (sector, sectors) = (bio.start_page * PAGE_SECTORS, bio.pages * PAGE_SECTORS);
            let io = HostIo { job: KERNEL_JOB, thread, op, sector, sectors, issued_at: self.now };
            let id = self.host.ios.insert(io);
            self.pagecache.cache.as_mut().expect("a page cache").bios.insert(id, bio);
            self.route_host(id);
        }
    }

    /// Whether a write host I/O carries REQ_SYNC: O_DIRECT writes and fsync's writeback do
    /// (block/fops.c `dio_bio_write_op`, `wbc_to_write_flags` for WB_SYNC_ALL), background
    /// writeback does not.
    pub(crate) fn write_is_sync(&self, id: u32) -> bool {
        if self.host.ios.get(id).job != KERNEL_JOB {
            return true;
        }
        self.pagecache.cache.as_ref().and_then(|c| c.bios.get(&id)).is_none_or(|bio| bio.sync)
    }

    /// Whether a write host I/O comes under its submitter's plug: the page cache's writeback
    /// does (wb_writeback and generic_writepages hold a blk_plug over the whole pass, and md's
    /// raid5 keeps the heads it adds on the plug's list: release_stripe_plug). An O_DIRECT write
    /// is plugged too in 6.1 (blkdev_write_iter), but its heads all reach md together when the
    /// writer sleeps for it, which adding them at one instant without a plug stands for
    /// (tests/md_io.rs, KNOWN_GAPS).
    pub(crate) fn write_is_plugged(&self, id: u32) -> bool {
        self.host.ios.get(id).job == KERNEL_JOB
    }

    /// A page-cache bio completed.
    #[inline(never)]
    pub(crate) fn page_cache_bio_done(&mut self, id: u32) {
        self.host.ios.remove(id);
        self.pagecache.cache.as_mut().expect("a page cache").bio_done(id);
        self.page_cache_progress();
        self.page_cache_pump();
    }

    /// Wakes what the cache's new state lets go on: readers whose pages arrived (or who may now
    /// read pages reclaimed under them), throttled writers, fsyncs whose pages are stable.
    fn page_cache_progress(&mut self) {
        let now = self.now;
        let cache = self.pagecache.cache.as_mut().expect("a page cache");
        let mut ready = Vec::new();
        let mut refills: Vec<(Vec<Bio>, u32)> = Vec::new();
        let mut readers = std::mem::take(&mut cache.readers);
        readers.retain(|wait| {
            if cache.uptodate(wait.start, wait.end) {
                ready.push(wait.host_io);
                return false;
            }
            let mut bios = Vec::new();
            cache.refill(wait.start, wait.end, &mut bios);
            if !bios.is_empty() {
                refills.push((bios, wait.thread));
            }
            true
        });
        cache.readers = readers;
        let cache = self.pagecache.cache.as_mut().expect("a page cache");
        while let Some(&(id, since)) = cache.writers.front() {
            let io = self.host.ios.get(id);
            let (start, end) = (io.sector / PAGE_SECTORS, (io.sector + io.sectors).div_ceil(PAGE_SECTORS));
            if !cache.write(start, end, now) {
                break;
            }
            cache.writers.pop_front();
            cache.stats.throttled_ns += now - since;
            ready.push(id);
        }
        let mut synced = Vec::new();
        cache.take_synced(&mut synced);
        for (mut bios, thread) in refills {
            self.issue_bios(&mut bios, thread);
        }
        for id in ready {
            self.copied(id);
        }
        self.arm_page_cache_timer();
        for wait in synced {
            let left = self.pagecache.syncs.get_mut(&wait.host_io).expect("an fsync in flight");
            *left -= 1;
            if *left == 0 {
                self.pagecache.syncs.remove(&wait.host_io);
                // Every page is stable: the device caches are flushed (blkdev_issue_flush).
                self.route_host(wait.host_io);
            }
        }
    }

    /// The flusher sends what it may.
    fn page_cache_pump(&mut self) {
        let mut bios = std::mem::take(&mut self.pagecache.bios);
        let mut issued = false;
        while let Some(bio) = self.pagecache.cache.as_mut().expect("a page cache").next_writeback(self.now) {
            bios.push(bio);
            self.issue_bios(&mut bios, FLUSHER_THREAD);
            issued = true;
        }
        self.pagecache.bios = bios;
        // blk_finish_plug: the pass's heads reach raid5d (a pass that sent nothing has none).
        if issued {
            self.md_unplug();
        }
    }

    fn arm_page_cache_timer(&mut self) {
        let cache = self.pagecache.cache.as_mut().expect("a page cache");
        if cache.wants_timer() {
            cache.timer_armed = true;
            let at = self.now + cache.config().dirty_writeback_ns;
            self.events.push(at, Event::PageCache(PageCacheEvent::PageCacheTimer));
        }
    }

    /// The flusher's periodic wake-up (wb_workfn → wb_check_old_data_flush).
    pub(crate) fn page_cache_timer(&mut self) {
        let cache = self.pagecache.cache.as_mut().expect("a page cache");
        if cache.timer() {
            let at = self.now + cache.config().dirty_writeback_ns;
            self.events.push(at, Event::PageCache(PageCacheEvent::PageCacheTimer));
        }
        self.page_cache_pump();
    }
}
