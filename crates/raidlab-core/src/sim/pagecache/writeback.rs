//! The flusher and fsync: which dirty pages go to the array next, bio completions, the kupdate
//! timer, and when an fsync's pages are stable.

use super::extents::PageState;
use super::{Bio, PageCache, SyncWait};
use crate::time::Nanos;
use crate::PAGE_BYTES;

impl PageCache {
    /// The next writeback bio, if the flusher has one to send now (marked under writeback), in
    /// this order: files an fsync waits on (WB_SYNC_ALL from the file's start), then background
    /// writeback while dirty pages exceed the background limit or writers wait
    /// (`wb_over_bg_thresh`, `balance_dirty_pages` waking the flusher), then the kupdate pass's
    /// expired inodes (`wb_check_old_data_flush`, `dirtied_when` older than dirty_expire).
    /// Background and kupdate work write a file a chunk at a time (`writeback_sb_inodes` with
    /// `writeback_chunk_size`), checking the background limit between chunks, not between pages.
    pub fn next_writeback(&mut self, now: Nanos) -> Option<Bio> {
        if self.writeback_bios >= self.max_writeback_bios {
            return None;
        }
        if let Some(bio) = self.sync_writeback() {
            return Some(bio);
        }
        if let Some(file) = self.chunk_file {
            let f = &self.files[&file];
            if f.chunk_left > 0 && f.dirty > 0 {
                return Some(self.cyclic_bio(file));
            }
            // The chunk is done: the inode goes to the back of the queue (requeue_io).
            self.files.get_mut(&file).expect("declared").queued_at = now;
            self.chunk_file = None;
        }
        let background = self.dirty_pages() > self.bg_thresh_pages || !self.writers.is_empty();
        if !background && !self.kupdate {
            return None;
        }
        let expired = now.saturating_sub(self.config.dirty_expire_ns);
        let chosen = self
            .files
            .iter()
            .filter(|(_, f)| f.dirty > 0 && (background || f.dirtied_when.is_some_and(|t| t <= expired)))
            .min_by_key(|(&s, f)| (f.queued_at, s))
            .map(|(&s, _)| s);
        let Some(file) = chosen else {
            self.kupdate = false;
            return None;
        };
        self.chunk_file = Some(file);
        self.files.get_mut(&file).expect("declared").chunk_left = self.write_chunk_pages;
        Some(self.cyclic_bio(file))
    }

    fn sync_writeback(&mut self) -> Option<Bio> {
        for i in 0..self.syncs.len() {
            let file = self.syncs[i].file;
            let end = self.files[&file].end;
            if let Some((s, e)) = self.pages.next_dirty(file, end) {
                return Some(self.start_writeback(s, e, true));
            }
        }
        None
    }

    /// `write_cache_pages` with range_cyclic: from `writeback_index` to the end of the file,
    /// then from its start, within what is left of the chunk.
    fn cyclic_bio(&mut self, file: u64) -> Bio {
        let f = &self.files[&file];
        let (index, end) = (f.writeback_index, f.end);
        let found = self.pages.next_dirty(index, end).or_else(|| self.pages.next_dirty(file, index));
        let (s, e) = found.expect("a file with dirty pages has a dirty run");
        let e = e.min(s + self.files[&file].chunk_left);
        let bio = self.start_writeback(s, e, false);
        let f = self.files.get_mut(&file).expect("declared");
        f.writeback_index = bio.start_page + bio.pages;
        f.chunk_left = f.chunk_left.saturating_sub(bio.pages);
        bio
    }

    /// Marks up to `io_pages` dirty pages from `start` (before `end`) under writeback.
    fn start_writeback(&mut self, start: u64, end: u64, sync: bool) -> Bio {
        let (_, file_end) = self.file_of(start);
        let end = end.min(file_end).min(start + self.io_pages);
        self.set(start, end, |page| {
            assert!(matches!(page, Some((PageState::Dirty, _))), "writeback of a page that is not dirty");
            page.map(|(_, stamp)| (PageState::Writeback, stamp))
        });
        self.writeback_bios += 1;
        self.clear_inode_dirty(start);
        Bio { start_page: start, pages: end - start, write: true, sync }
    }

    /// A file without dirty pages is no longer a dirty inode (its `dirtied_when` restarts).
    fn clear_inode_dirty(&mut self, page: u64) {
        let (file, _) = self.file_of(page);
        let f = self.files.get_mut(&file).expect("declared");
        if f.dirty == 0 {
            f.dirtied_when = None;
        }
    }

    /// A bio completed: read pages become up to date, written pages clean (a page dirtied again
    /// meanwhile stays dirty). Returns the bio.
    pub fn bio_done(&mut self, id: u32) -> Bio {
        let bio = self.bios.remove(&id).expect("a page-cache bio in flight");
        let (from, epoch) = (if bio.write { PageState::Writeback } else { PageState::Reading }, self.epoch);
        self.set(bio.start_page, bio.start_page + bio.pages, |page| match page {
            Some((state, _)) if state == from => Some((PageState::Clean, epoch)),
            other => other,
        });
        if bio.write {
            self.writeback_bios -= 1;
            self.stats.written_back_bytes += bio.pages * PAGE_BYTES;
        } else {
            self.stats.read_from_array_bytes += bio.pages * PAGE_BYTES;
        }
        self.aged(bio.pages);
        bio
    }

    /// An fsync of `file` (its first page) issued at `now` begins.
    pub fn begin_sync(&mut self, host_io: u32, file: u64, now: Nanos) {
        self.files.get_mut(&file).expect("declared").syncs += 1;
        self.syncs.push(SyncWait { host_io, file, since: now });
    }

    /// Removes and returns the fsyncs whose pages are all stable: no page of the file dirtied
    /// before the fsync began is still dirty or under writeback (tag_pages_for_writeback's
    /// snapshot, so later writes by other threads do not hold it up).
    pub fn take_synced(&mut self, out: &mut Vec<SyncWait>) {
        let mut i = 0;
        while i < self.syncs.len() {
            let wait = self.syncs[i];
            if self.synced(&wait) {
                self.syncs.swap_remove(i);
                self.files.get_mut(&wait.file).expect("declared").syncs -= 1;
                out.push(wait);
            } else {
                i += 1;
            }
        }
    }

    fn synced(&self, wait: &SyncWait) -> bool {
        let f = &self.files[&wait.file];
        if f.dirty + f.writeback == 0 {
            return true;
        }
        !self.pages.unstable_since(wait.file, f.end, wait.since)
    }

    /// The kupdate timer fired (every dirty_writeback_centisecs while anything is dirty);
    /// returns whether to arm it again.
    pub fn timer(&mut self) -> bool {
        if self.dirty_pages() + self.writeback_pages() == 0 {
            self.timer_armed = false;
            return false;
        }
        self.kupdate = true;
        true
    }

    /// Whether the kupdate timer should be armed (something is dirty and it is not).
    pub fn wants_timer(&self) -> bool {
        !self.timer_armed && self.dirty_pages() > 0
    }
}
