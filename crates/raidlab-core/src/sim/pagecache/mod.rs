//! The host's page cache, between buffered host threads and the array front end, as Linux 6.1
//! runs it for a block device or a file on it:
//! - reads that find their pages up to date are served at memory speed; misses go to the array
//!   through readahead (`readahead.rs`, mm/readahead.c);
//! - buffered writes dirty pages (mm/filemap.c `generic_perform_write`) and return; the flusher
//!   writes dirty pages back (mm/page-writeback.c, fs/fs-writeback.c): in the background above
//!   `dirty_background_ratio`/`_bytes`, for inodes dirtied longer than
//!   `dirty_expire_centisecs` ago every `dirty_writeback_centisecs` (wb_workfn's kupdate pass),
//!   in file-offset order from the inode's `writeback_index` (`write_cache_pages`), gathering
//!   contiguous pages into bios up to the device's `max_sectors_kb`;
//! - writers above `dirty_ratio`/`_bytes` wait (`balance_dirty_pages`) until writeback brings
//!   the dirty and writeback pages back under the limit, so a long write settles at the array's
//!   rate;
//! - fsync/fdatasync write the file's dirty pages (WB_SYNC_ALL, `file_write_and_wait_range`),
//!   wait for every page under writeback, then flush the device cache (`blkdev_issue_flush`);
//! - clean pages are reclaimed oldest first when the cache needs room.
//!
//! The room keeps state and decides; `buffered.rs` turns its bios into array
//! I/O and its waits into events.

pub(crate) mod buffered;
pub mod extents;
mod io;
pub mod readahead;
mod writeback;

pub(crate) use buffered::PageCacheRoom;

/// The page cache's events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PageCacheEvent {
    /// The page cache's flusher wakes (kupdate, every dirty_writeback_centisecs).
    PageCacheTimer,
}
use crate::layout::{Array, Level};
use crate::time::Nanos;
use crate::PAGE_BYTES;
use extents::{Counts, Extents, PageState};
use readahead::RaState;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The host's memory and the vm sysctls that govern its page cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PageCacheConfig {
    /// Memory the page cache may use (Linux's dirtyable memory: free plus file pages).
    pub ram_bytes: u64,
    /// vm.dirty_ratio (default 20, mm/page-writeback.c `vm_dirty_ratio`).
    pub dirty_ratio: u32,
    /// vm.dirty_background_ratio (default 10, `dirty_background_ratio`).
    pub dirty_background_ratio: u32,
    /// vm.dirty_bytes: when non-zero it replaces the ratio (as the sysctl does).
    pub dirty_bytes: u64,
    /// vm.dirty_background_bytes: when non-zero it replaces the background ratio.
    pub dirty_background_bytes: u64,
    /// vm.dirty_expire_centisecs in ns (default 3000 cs = 30 s, `dirty_expire_interval`).
    pub dirty_expire_ns: Nanos,
    /// vm.dirty_writeback_centisecs in ns (default 500 cs = 5 s, `dirty_writeback_interval`).
    pub dirty_writeback_ns: Nanos,
    /// The array's read_ahead_kb; 0 = the kernel's default for the array (`default_read_ahead_kib`).
    pub read_ahead_kb: u64,
    /// Copy rate between the page cache and user buffers (copy_to_user/copy_from_user).
    pub copy_bytes_per_second: u64,
    /// CPU time of one read()/write() call besides the copy (syscall entry, page lookups).
    pub call_ns: Nanos,
}

impl Default for PageCacheConfig {
    fn default() -> PageCacheConfig {
        PageCacheConfig {
            ram_bytes: 64 << 30,
            dirty_ratio: 20,
            dirty_background_ratio: 10,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_ns: 30_000_000_000,
            dirty_writeback_ns: 5_000_000_000,
            read_ahead_kb: 0,
            // One core copies about 10 GB/s (memcpy/STREAM Copy on current x86 server cores);
            // a cached read()/write() costs about 1 µs besides the copy.
            copy_bytes_per_second: 10_000_000_000,
            call_ns: 1_000,
        }
    }
}

impl PageCacheConfig {
    /// Checks the values against what the sysctls accept; errors are one line naming the option.
    pub fn validate(&self) -> crate::error::Result<()> {
        let fail = |message: String| Err(crate::error::Error::new(crate::error::ErrorKind::InvalidConfig, message));
        if self.ram_bytes < 16 << 20 || self.ram_bytes > 1 << 50 {
            return fail(format!("page cache RAM {} bytes is out of range: 16 MiB to 1 PiB", self.ram_bytes));
        }
        // proc_dointvec_minmax with zero..one_hundred (kernel/sysctl.c vm_table).
        if self.dirty_ratio > 100 || self.dirty_background_ratio > 100 {
            return fail("dirty_ratio and dirty_background_ratio must be 0 to 100 (percent)".into());
        }
        if self.dirty_ratio == 0 && self.dirty_bytes == 0 {
            return fail("dirty_ratio 0 without dirty_bytes leaves no room for dirty pages".into());
        }
        if self.dirty_writeback_ns == 0 || self.dirty_expire_ns == 0 {
            return fail("dirty_writeback_centisecs and dirty_expire_centisecs must be at least 1".into());
        }
        if self.read_ahead_kb > 1 << 20 {
            return fail(format!("read_ahead_kb {} is out of range: 0 (the kernel's default) to 1048576", self.read_ahead_kb));
        }
        Ok(())
    }
}

/// Linux's read_ahead_kb for the array. Since 5.9 (commit c2e4cd57cfa1, "block: lift setting
/// the readahead size into the block layer") md sets no readahead of its own: `blk_queue_io_opt`
/// (block/blk-settings.c, Linux 6.1) makes it `max(2 * io_opt, VM_READAHEAD_PAGES)`, "for
/// read-ahead of large files to be effective, we need to read ahead at least twice the optimal
/// I/O size". md calls it with io_opt = chunk x data disks for raid0 (`raid0_run`), raid4/5/6
/// (`raid5_set_io_opt`) and raid10 (`raid10_set_io_opt`: chunk x the stripes of distinct data);
/// raid1 sets no io_opt, so it keeps VM_READAHEAD_PAGES (128 KiB, include/linux/mm.h). A raid0
/// of one device stands for a bare drive here (no md: the glue gives it no data offset either),
/// and a disk reports no io_opt, so it keeps 128 KiB too.
pub fn default_read_ahead_kib(array: &Array) -> u64 {
    const VM_READAHEAD_KIB: u64 = 128;
    let bare_drive = array.level() == Level::Raid0 && array.devices() == 1;
    let io_opt_kib = if bare_drive { 0 } else { array.io_opt_bytes() / 1024 };
    (2 * io_opt_kib).max(VM_READAHEAD_KIB)
}

/// What the page cache did over a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageCacheStats {
    /// Pages host reads asked for that were up to date in the cache.
    pub read_hit_pages: u64,
    /// Pages host reads asked for that were not (read from the array, or waited for).
    pub read_miss_pages: u64,
    /// Bytes read from the array (demand reads and readahead).
    pub read_from_array_bytes: u64,
    /// Bytes written back to the array.
    pub written_back_bytes: u64,
    /// Time writers spent waiting in balance_dirty_pages, summed over writes.
    pub throttled_ns: Nanos,
    /// Most dirty plus writeback bytes at once.
    pub peak_dirty_bytes: u64,
    /// Clean pages reclaimed.
    pub evicted_pages: u64,
    /// RAM the cache had.
    pub ram_bytes: u64,
}

/// One inode: a file of a job's region (its pages lie in `[start, end)` array pages).
#[derive(Clone, Debug)]
struct FileState {
    end: u64,
    dirty: u64,
    writeback: u64,
    /// `inode->dirtied_when`: when the file went from clean to dirty.
    dirtied_when: Option<Nanos>,
    /// `mapping->writeback_index`: where cyclic background writeback resumes.
    writeback_index: u64,
    /// Its place in the flusher's queue (b_io order: oldest first; a file requeued after a
    /// chunk goes to the back).
    queued_at: Nanos,
    /// Pages left of the chunk the flusher is writing from this file (`writeback_chunk_size`).
    chunk_left: u64,
    /// fsyncs waiting on it: its dirty pages go first.
    syncs: u32,
}

/// A bio the page cache has in flight (the engine knows it by its host I/O id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bio {
    pub start_page: u64,
    pub pages: u64,
    pub write: bool,
    /// REQ_SYNC: writeback for fsync (WB_SYNC_ALL, `wbc_to_write_flags`) and reads.
    pub sync: bool,
}

/// A host read waiting for its pages.
#[derive(Clone, Copy, Debug)]
pub struct ReadWait {
    pub host_io: u32,
    pub start: u64,
    pub end: u64,
    pub thread: u32,
}

/// An fsync waiting for the file's pages dirtied before it began.
#[derive(Clone, Copy, Debug)]
pub struct SyncWait {
    pub host_io: u32,
    pub file: u64,
    pub since: Nanos,
}

/// fs/fs-writeback.c MIN_WRITEBACK_PAGES (4 MiB): `writeback_chunk_size` rounds to it.
const MIN_WRITEBACK_PAGES: u64 = (4 << 20) / PAGE_BYTES;
/// mm/page-writeback.c INIT_BW (100 MB/s in pages per second): a device's writeback bandwidth
/// estimate before it is measured; the simulator keeps it (the chunk size is its only use here).
const INIT_BW_PAGES: u64 = (100 << 20) / PAGE_BYTES;
/// mm/page-writeback.c DIRTY_SCOPE.
const DIRTY_SCOPE: u64 = 8;
/// Clean pages are stamped with an epoch that advances every 1/64 of RAM made clean, so the
/// oldest are reclaimed first; a hit on a page older than half the epochs refreshes it (the
/// second access that moves a folio to the active list, mm/swap.c `folio_mark_accessed`).
const EPOCHS: u64 = 64;

pub struct PageCache {
    config: PageCacheConfig,
    pub ram_pages: u64,
    pub thresh_pages: u64,
    pub bg_thresh_pages: u64,
    pub ra_pages: u64,
    /// Largest bio, pages (the array's max_sectors_kb).
    pub io_pages: u64,
    pages: Extents,
    files: BTreeMap<u64, FileState>,
    ra: HashMap<(u32, u32, u64), RaState>,
    epoch: u64,
    epoch_fill: u64,
    pub bios: HashMap<u32, Bio>,
    pub writeback_bios: u32,
    pub max_writeback_bios: u32,
    kupdate: bool,
    /// The file the flusher is writing a chunk of (background and kupdate writeback).
    chunk_file: Option<u64>,
    /// The chunk size: `writeback_chunk_size` for WB_SYNC_NONE work.
    write_chunk_pages: u64,
    pub readers: Vec<ReadWait>,
    pub writers: VecDeque<(u32, Nanos)>,
    pub syncs: Vec<SyncWait>,
    pub timer_armed: bool,
    pub stats: PageCacheStats,
    gaps: Vec<(u64, u64)>,
}

/// What a buffered read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Every page was up to date: the read is a copy.
    Hit,
    /// Some pages are being read: the read waits (`readers`).
    Wait,
}

impl PageCache {
    /// A cache for `array` whose bios are at most `io_pages` pages, with `max_writeback_bios`
    /// writeback bios in flight at most (the device's nr_requests: the flusher blocks on a
    /// full queue).
    pub fn new(config: PageCacheConfig, array: &Array, io_pages: u64, max_writeback_bios: u32) -> PageCache {
        let ram_pages = (config.ram_bytes / PAGE_BYTES).max(1);
        let (thresh_pages, bg_thresh_pages) = dirty_limits(&config, ram_pages);
        let ra_kib = if config.read_ahead_kb > 0 { config.read_ahead_kb } else { default_read_ahead_kib(array) };
        PageCache {
            config,
            ram_pages,
            thresh_pages,
            bg_thresh_pages,
            ra_pages: (ra_kib * 1024 / PAGE_BYTES).max(1),
            io_pages: io_pages.max(1),
            pages: Extents::default(),
            files: BTreeMap::new(),
            ra: HashMap::new(),
            epoch: 0,
            epoch_fill: 0,
            bios: HashMap::new(),
            writeback_bios: 0,
            max_writeback_bios: max_writeback_bios.max(1),
            kupdate: false,
            chunk_file: None,
            // writeback_chunk_size: min(avg_write_bandwidth / 2, dirty_limit / DIRTY_SCOPE),
            // rounded down to MIN_WRITEBACK_PAGES after adding one.
            write_chunk_pages: ((INIT_BW_PAGES / 2).min(thresh_pages / DIRTY_SCOPE) + MIN_WRITEBACK_PAGES) / MIN_WRITEBACK_PAGES
                * MIN_WRITEBACK_PAGES,
            readers: Vec::new(),
            writers: VecDeque::new(),
            syncs: Vec::new(),
            timer_armed: false,
            stats: PageCacheStats { ram_bytes: ram_pages * PAGE_BYTES, ..PageCacheStats::default() },
            gaps: Vec::new(),
        }
    }

    pub fn config(&self) -> &PageCacheConfig {
        &self.config
    }

    /// Declares a file (an inode) over array pages `[start, end)`; one overlapping a known file
    /// joins it (two jobs on the same region share its pages, as two fio jobs on one file do).
    pub fn add_file(&mut self, start: u64, end: u64) {
        let overlapping: Vec<u64> = self.files.range(..end).filter(|(_, f)| f.end > start).map(|(&s, _)| s).collect();
        let (mut lo, mut hi) = (start, end);
        for s in overlapping {
            let f = self.files.remove(&s).expect("listed");
            lo = lo.min(s);
            hi = hi.max(f.end);
        }
        let file = FileState { end: hi, dirty: 0, writeback: 0, dirtied_when: None, writeback_index: lo, queued_at: 0, chunk_left: 0, syncs: 0 };
        self.files.insert(lo, file);
    }

    /// The file holding `page`: its first page and end.
    pub fn file_of(&self, page: u64) -> (u64, u64) {
        let (&start, file) = self.files.range(..=page).next_back().expect("every page lies in a declared file");
        assert!(page < file.end, "page {page} lies in no declared file");
        (start, file.end)
    }

    pub fn dirty_pages(&self) -> u64 {
        self.pages.count(PageState::Dirty)
    }

    pub fn writeback_pages(&self) -> u64 {
        self.pages.count(PageState::Writeback)
    }

    /// Pages of `[start, end)` dirty or under writeback.
    pub fn unstable_pages_in(&self, start: u64, end: u64) -> u64 {
        self.pages
            .overlapping(start, end)
            .filter(|(_, _, r)| matches!(r.state, PageState::Dirty | PageState::Writeback))
            .map(|(s, e, _)| e - s)
            .sum()
    }

    /// Sets `[start, end)` (within one file) by `f`, keeping the file's counts.
    fn set(&mut self, start: u64, end: u64, f: impl Fn(Option<(PageState, u64)>) -> Option<(PageState, u64)>) -> Counts {
        let delta = self.pages.set(start, end, f);
        let (file_start, _) = self.file_of(start);
        let file = self.files.get_mut(&file_start).expect("found");
        file.dirty = (file.dirty as i64 + delta[PageState::Dirty.index()]) as u64;
        file.writeback = (file.writeback as i64 + delta[PageState::Writeback.index()]) as u64;
        delta
    }

    /// Splits `[start, end)` at file boundaries.
    fn segments(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(1);
        let mut at = start;
        while at < end {
            let (_, file_end) = self.file_of(at);
            let e = end.min(file_end);
            out.push((at, e));
            at = e;
        }
        out
    }
}

/// mm/page-writeback.c `domain_dirty_limits`: the `_bytes` sysctls win over the ratios; a
/// background limit at or above the hard one is halved from it.
fn dirty_limits(config: &PageCacheConfig, ram_pages: u64) -> (u64, u64) {
    let thresh = if config.dirty_bytes > 0 {
        config.dirty_bytes.div_ceil(PAGE_BYTES)
    } else {
        ram_pages * config.dirty_ratio as u64 / 100
    };
    let mut bg = if config.dirty_background_bytes > 0 {
        config.dirty_background_bytes.div_ceil(PAGE_BYTES)
    } else {
        ram_pages * config.dirty_background_ratio as u64 / 100
    };
    if bg >= thresh {
        bg = thresh / 2;
    }
    (thresh.max(1), bg)
}

impl PageCache {
    /// Asserts the cache's conserved quantities: runs disjoint and counted right; resident pages
    /// within RAM; per-file dirty and writeback counts summing to the totals; every page under
    /// writeback or being read covered by a bio in flight (so no page is both under writeback
    /// and free: reclaim asserts it takes clean pages only); writeback bios within their cap.
    pub fn check(&self) {
        self.pages.check();
        assert!(self.pages.resident() <= self.ram_pages, "{} pages resident in {} pages of RAM", self.pages.resident(), self.ram_pages);
        let dirty: u64 = self.files.values().map(|f| f.dirty).sum();
        let writeback: u64 = self.files.values().map(|f| f.writeback).sum();
        assert_eq!((dirty, writeback), (self.dirty_pages(), self.writeback_pages()), "per-file counts drifted");
        let bio_pages = |write: bool| self.bios.values().filter(|b| b.write == write).map(|b| b.pages).sum::<u64>();
        assert!(self.writeback_pages() <= bio_pages(true), "pages under writeback without a bio");
        assert!(self.pages.count(PageState::Reading) <= bio_pages(false), "pages being read without a bio");
        let writes = self.bios.values().filter(|b| b.write).count() as u32;
        assert_eq!(writes, self.writeback_bios, "writeback bios miscounted");
        assert!(self.writeback_bios <= self.max_writeback_bios, "writeback bios over their cap");
        for (&start, f) in &self.files {
            assert!(f.end > start, "an empty file");
            assert!(f.dirty == 0 || f.dirtied_when.is_some(), "a dirty file without dirtied_when");
        }
        for (s, run) in self.pages.iter() {
            self.segments(s, run.end); // every page lies in a declared file (file_of asserts it)
        }
    }

    /// Dirty pages of `[start, end)` (tests check none is left once an fsync completes).
    pub fn dirty_pages_in(&self, start: u64, end: u64) -> u64 {
        self.pages.overlapping(start, end).filter(|(_, _, r)| r.state == PageState::Dirty).map(|(s, e, _)| e - s).sum()
    }

    /// The run's figures.
    pub fn stats(&self) -> PageCacheStats {
        self.stats.clone()
    }
}
