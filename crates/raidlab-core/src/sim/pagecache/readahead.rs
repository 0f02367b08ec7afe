//! Readahead as Linux 6.1's mm/readahead.c does it for one open file (`struct file_ra_state`):
//! `ondemand_readahead` detects a sequential stream (a read at the start of the file, at the
//! expected index, or right after the previous read), sizes the first window with
//! `get_init_ra_size`, grows it with `get_next_ra_size` up to the device's `read_ahead_kb`, and
//! marks the page `async_size` pages from the window's end (PG_readahead) so that a read hitting
//! it starts the next window before the stream needs it (`page_cache_async_ra`). A random read
//! reads just its own pages ("standalone, small random read: read as is").

/// One file's readahead state, in pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// Page after the previous read's last byte (`prev_pos >> PAGE_SHIFT`, prev_pos being the
    /// position the previous read ended at, as filemap_read leaves it).
    pub prev_index: u64,
    /// The page carrying PG_readahead, if any.
    pub marker: Option<u64>,
}

/// A window to read: `[start, end)` pages relative to the file.
pub type Window = (u64, u64);

/// mm/readahead.c `get_init_ra_size`: the first window, four or two times the request rounded
/// up to a power of two, or the maximum.
pub fn init_size(request: u64, max: u64) -> u64 {
    let size = request.max(1).next_power_of_two();
    if size <= max / 32 {
        size * 4
    } else if size <= max / 4 {
        size * 2
    } else {
        max
    }
}

/// mm/readahead.c `get_next_ra_size`: quadruple small windows, double medium ones, cap at max.
pub fn next_size(current: u64, max: u64) -> u64 {
    if current < max / 16 {
        4 * current
    } else if current <= max / 2 {
        2 * current
    } else {
        max
    }
}

impl RaState {
    /// A read of `[index, index + pages)` (file pages) missed the cache: the window to read
    /// (`page_cache_sync_ra` → `ondemand_readahead` without a marked folio). `max` is
    /// `ra_pages`, `io_pages` the device's largest request in pages.
    pub fn sync_miss(&mut self, index: u64, pages: u64, max: u64, io_pages: u64) -> Window {
        // "If the request exceeds the readahead window, allow the read to be up to the optimal
        // hardware IO size."
        let max = if pages > max && io_pages > max { pages.min(io_pages) } else { max };
        let expected = self.start + self.size - self.async_size;
        let sequential = index == 0
            || (self.size > 0 && (index == expected || index == self.start + self.size))
            || pages > max
            || index.wrapping_sub(self.prev_index) <= 1;
        if !sequential {
            // Random: read as is, the readahead state untouched (do_page_cache_ra(req_size)).
            return (index, index + pages);
        }
        if index != 0 && self.size > 0 && (index == expected || index == self.start + self.size) {
            self.ramp(max);
        } else {
            self.start = index;
            self.size = init_size(pages, max);
            self.async_size = if self.size > pages { self.size - pages } else { self.size };
        }
        self.readit(index, max)
    }

    /// A read hit the PG_readahead page at `index`: the next window, read asynchronously
    /// (`page_cache_async_ra`; the stream is at the expected index, so the window ramps up).
    pub fn marker_hit(&mut self, max: u64) -> Window {
        self.ramp(max);
        let window = (self.start, self.start + self.size);
        self.mark();
        window
    }

    fn ramp(&mut self, max: u64) {
        self.start += self.size;
        self.size = next_size(self.size, max);
        self.async_size = self.size;
    }

    /// ondemand_readahead's `readit`: a window that would hit its own marker at once gets the
    /// next window merged into it.
    fn readit(&mut self, index: u64, max: u64) -> Window {
        if index == self.start && self.size == self.async_size {
            let add = next_size(self.size, max);
            if self.size + add <= max {
                self.async_size = add;
                self.size += add;
            } else {
                self.size = max;
                self.async_size = max >> 1;
            }
        }
        self.mark();
        (self.start, self.start + self.size)
    }

    fn mark(&mut self) {
        self.marker = if self.async_size > 0 { Some(self.start + self.size - self.async_size) } else { None };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_of_8k_reads_ramps_to_read_ahead_kb_and_random_reads_get_no_readahead() {
        let max = 32; // 128 KiB
        let mut ra = RaState::default();
        // First read at page 0, 2 pages: 2 > 32/32 but ≤ 32/4, so twice the request.
        assert_eq!(ra.sync_miss(0, 2, max, 320), (0, 4));
        assert_eq!(ra.marker, Some(2));
        assert_eq!(ra.marker_hit(max), (4, 12));
        assert_eq!(ra.marker_hit(max), (12, 28));
        assert_eq!(ra.marker_hit(max), (28, 60));
        assert_eq!(ra.marker_hit(max), (60, 92));
        let mut random = RaState { prev_index: 100, ..RaState::default() };
        assert_eq!(random.sync_miss(5000, 2, max, 320), (5000, 5002));
        assert_eq!(random.size, 0);
    }
}
