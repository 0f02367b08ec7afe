//! Buffered reads and writes: page lookups, readahead windows, dirtying and reclaim.

use super::extents::PageState;
use super::{Bio, PageCache, ReadOutcome, EPOCHS};
use crate::time::Nanos;

impl PageCache {
    /// A host read of array pages `[start, end)` by `(job, thread)` (mm/filemap.c
    /// `filemap_read` → `filemap_get_pages`): up to date pages are a hit; a miss starts
    /// synchronous readahead, a hit on the PG_readahead page asynchronous readahead. Bios to
    /// issue go to `out`.
    pub fn read(&mut self, job: u32, thread: u32, start: u64, end: u64, out: &mut Vec<Bio>) -> ReadOutcome {
        let (file_start, file_end) = self.file_of(start);
        let key = (job, thread, file_start);
        let mut ra = self.ra.get(&key).copied().unwrap_or_default();
        let (index, pages) = (start - file_start, end.min(file_end) - start);
        let outcome = if self.pages.uptodate(start, end) {
            self.stats.read_hit_pages += end - start;
            if let Some(marker) = ra.marker.filter(|&m| (index..index + pages).contains(&m)) {
                let _ = marker;
                let (ws, we) = ra.marker_hit(self.ra_pages);
                self.read_window(file_start + ws, (file_start + we).min(file_end), out);
            }
            self.touch(start, end);
            ReadOutcome::Hit
        } else {
            let uptodate = self.uptodate_pages(start, end);
            self.stats.read_hit_pages += uptodate;
            self.stats.read_miss_pages += end - start - uptodate;
            let (ws, we) = ra.sync_miss(index, pages, self.ra_pages, self.io_pages);
            // The request's own pages first (they must be read), then the rest of the window.
            for (s, e) in self.segments(start, end) {
                self.read_window(s, e, out);
            }
            self.read_window(file_start + ws, (file_start + we).min(file_end), out);
            ReadOutcome::Wait
        };
        ra.prev_index = index + pages;
        self.ra.insert(key, ra);
        outcome
    }

    /// Whether every page of `[start, end)` is present and up to date.
    pub fn uptodate(&self, start: u64, end: u64) -> bool {
        self.pages.uptodate(start, end)
    }

    /// Reads the absent pages of `[start, end)` again (a waiting reader whose pages were
    /// reclaimed before they were copied, or did not fit in memory when it asked).
    pub fn refill(&mut self, start: u64, end: u64, out: &mut Vec<Bio>) {
        for (s, e) in self.segments(start, end) {
            self.read_window(s, e, out);
        }
    }

    /// Pages of `[start, end)` present and up to date.
    fn uptodate_pages(&self, start: u64, end: u64) -> u64 {
        self.pages.overlapping(start, end).filter(|(_, _, r)| r.state != PageState::Reading).map(|(s, e, _)| e - s).sum()
    }

    /// Reads the absent pages of `[start, end)` (one file) in bios of at most `io_pages`
    /// (`page_cache_ra_unbounded` skips pages already present), as far as free memory after
    /// reclaim allows (a reader whose own pages did not fit waits and asks again).
    pub(super) fn read_window(&mut self, start: u64, end: u64, out: &mut Vec<Bio>) {
        if start >= end {
            return;
        }
        let mut gaps = std::mem::take(&mut self.gaps);
        gaps.clear();
        self.pages.gaps(start, end, &mut gaps);
        for &(gs, ge) in &gaps {
            let room = self.make_room(ge - gs);
            let ge = ge.min(gs + room);
            let mut at = gs;
            while at < ge {
                let e = ge.min(at + self.io_pages);
                self.set(at, e, |_| Some((PageState::Reading, 0)));
                out.push(Bio { start_page: at, pages: e - at, write: false, sync: true });
                at = e;
            }
        }
        self.gaps = gaps;
    }

    /// Refreshes clean pages of `[start, end)` older than half the epochs (a second access).
    fn touch(&mut self, start: u64, end: u64) {
        let epoch = self.epoch;
        let old = |stamp: u64| stamp + EPOCHS / 2 < epoch;
        if !self.pages.overlapping(start, end).any(|(_, _, r)| r.state == PageState::Clean && old(r.stamp)) {
            return;
        }
        for (s, e) in self.segments(start, end) {
            self.set(s, e, |page| match page {
                Some((PageState::Clean, stamp)) if old(stamp) => Some((PageState::Clean, epoch)),
                other => other,
            });
        }
    }

    /// Whether a writer must wait in balance_dirty_pages: dirty plus writeback pages at the
    /// dirty limit (`gdtc->dirty = NR_FILE_DIRTY + NR_WRITEBACK` against `gdtc->thresh`). The
    /// kernel's control loop paces writers between the freerun point and the limit so that they
    /// dirty pages as fast as writeback cleans them; waiting at the limit gives the same rate.
    pub fn over_dirty_limit(&self) -> bool {
        self.dirty_pages() + self.writeback_pages() >= self.thresh_pages
    }

    /// A host write of array pages `[start, end)` at `now` (`generic_perform_write`: the pages
    /// are dirtied and the call returns). `false`: the writer must wait (dirty limit, or no
    /// memory until writeback cleans pages).
    pub fn write(&mut self, start: u64, end: u64, now: Nanos) -> bool {
        if self.over_dirty_limit() {
            return false;
        }
        let mut gaps = std::mem::take(&mut self.gaps);
        gaps.clear();
        self.pages.gaps(start, end, &mut gaps);
        let absent: u64 = gaps.iter().map(|(s, e)| e - s).sum();
        self.gaps = gaps;
        if self.make_room(absent) < absent {
            return false;
        }
        for (s, e) in self.segments(start, end) {
            // A page dirtied again keeps the time it was first dirtied; one under writeback or
            // being read is dirty from now (its bio's completion leaves it dirty).
            self.set(s, e, |page| match page {
                Some((PageState::Dirty, stamp)) => Some((PageState::Dirty, stamp)),
                _ => Some((PageState::Dirty, now)),
            });
            let (file_start, _) = self.file_of(s);
            let file = self.files.get_mut(&file_start).expect("declared");
            if file.dirtied_when.is_none() {
                file.dirtied_when = Some(now);
                file.queued_at = now;
            }
        }
        let unstable = (self.dirty_pages() + self.writeback_pages()) * crate::PAGE_BYTES;
        self.stats.peak_dirty_bytes = self.stats.peak_dirty_bytes.max(unstable);
        true
    }

    /// Frees clean pages, oldest epoch first, until `pages` are free if it can (kswapd/direct
    /// reclaim of the inactive file list); returns the free pages.
    pub(super) fn make_room(&mut self, pages: u64) -> u64 {
        let free = self.ram_pages - self.pages.resident();
        if free >= pages {
            return free;
        }
        // Reclaim in batches (kswapd frees up to the high watermark, not page by page).
        let mut want = pages - free + (self.ram_pages / 256).min(self.pages.count(PageState::Clean));
        let mut clean: Vec<(u64, u64, u64)> =
            self.pages.iter().filter(|(_, r)| r.state == PageState::Clean).map(|(s, r)| (r.stamp, s, r.end)).collect();
        clean.sort_unstable();
        for (_, s, e) in clean {
            if want == 0 {
                break;
            }
            let e = e.min(s + want);
            for (ss, se) in self.segments(s, e) {
                self.set(ss, se, |page| {
                    assert!(matches!(page, Some((PageState::Clean, _))), "reclaim of a page that is not clean");
                    None
                });
            }
            want -= e - s;
            self.stats.evicted_pages += e - s;
        }
        self.ram_pages - self.pages.resident()
    }

    /// Makes `[start, end)` clean and resident at once (fio `invalidate=0` on a file whose pages
    /// are in the cache: the run starts warm), as far as memory allows.
    pub fn preload(&mut self, start: u64, end: u64) {
        let room = self.make_room(end - start);
        let end = end.min(start + room);
        if start < end {
            for (s, e) in self.segments(start, end) {
                let epoch = self.epoch;
                self.set(s, e, |page| page.or(Some((PageState::Clean, epoch))));
            }
        }
    }

    /// Advances the LRU epoch as pages become clean.
    pub(super) fn aged(&mut self, pages: u64) {
        self.epoch_fill += pages;
        let per_epoch = (self.ram_pages / EPOCHS).max(1);
        self.epoch += self.epoch_fill / per_epoch;
        self.epoch_fill %= per_epoch;
    }
}
