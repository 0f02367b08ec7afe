//! A task's block plug (Linux 6.1 block/blk-core.c `blk_start_plug`, block/blk-mq.c
//! `blk_add_rq_to_plug`, `blk_attempt_plug_merge`): requests a task submits while plugged wait
//! in its plug list and reach the queues together when the plug is flushed, so bios that
//! arrive one page at a time leave as large requests.
//!
//! This is the plug's bookkeeping only: which bios merge into a plugged request and when the
//! plug must be flushed early. The caller holds the I/O itself and hands it to the member
//! queues at a flush (where the elevator merges it further, `blk_mq_sched_insert_requests`).
//!
//! - Merge (`blk_attempt_plug_merge`): a bio is tried against the newest plugged request of its
//!   own queue only (the list is walked from the newest, across other queues' requests only
//!   once the plug holds several queues, and the first request of the bio's queue is the one
//!   tried); it merges when it is contiguous with it at either end, in the same direction, and
//!   the result stays within the queue's largest request.
//! - Early flush (`blk_add_rq_to_plug`): a bio that starts a new request first flushes the plug
//!   if it already holds `BLK_MAX_REQUEST_COUNT` requests (twice that once it spans several
//!   queues: `blk_plug_max_rq_count`, "important for md arrays"), or if the newest request
//!   holds `BLK_PLUG_FLUSH_SIZE` bytes or more.

/// BLK_MAX_REQUEST_COUNT (include/linux/blkdev.h).
pub const BLK_MAX_REQUEST_COUNT: u32 = 32;
/// BLK_PLUG_FLUSH_SIZE (include/linux/blkdev.h): 128 KiB, in sectors.
pub const BLK_PLUG_FLUSH_SECTORS: u64 = 128 * 1024 / 512;

/// A plugged request: its direction and sector range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plugged {
    write: bool,
    start: u64,
    end: u64,
}

/// One task's plug over the queues `0..queues`.
#[derive(Clone, Debug)]
pub struct Plug {
    /// Per queue, its newest plugged request (the one a bio for that queue is tried against).
    newest_of: Vec<Option<Plugged>>,
    /// The queue of the newest plugged request.
    newest: Option<u32>,
    requests: u32,
    multiple_queues: bool,
    /// The largest request a queue takes, in sectors.
    max_sectors: u64,
}

impl Plug {
    pub fn new(queues: usize, max_sectors: u32) -> Plug {
        assert!(max_sectors >= 8, "a request holds at least a page");
        Plug { newest_of: vec![None; queues], newest: None, requests: 0, multiple_queues: false, max_sectors: max_sectors as u64 }
    }

    /// The largest request a queue takes, in sectors.
    pub fn max_sectors(&self) -> u64 {
        self.max_sectors
    }

    /// Requests in the plug.
    pub fn len(&self) -> u32 {
        self.requests
    }

    pub fn is_empty(&self) -> bool {
        self.requests == 0
    }

    /// A run of contiguous bios for `queue` (pages a task submits one after another, as raid5d
    /// does for consecutive heads) goes into the plug: merged into the queue's newest request
    /// as far as it fits, the rest as new requests of up to the largest size. Returns whether
    /// the plug was flushed before a new request went in (`blk_add_rq_to_plug`: the plug held
    /// its request count, or its newest request `BLK_PLUG_FLUSH_SIZE` or more); what it held
    /// then is the caller's to send.
    pub fn add(&mut self, queue: u32, write: bool, sector: u64, sectors: u64) -> bool {
        assert!(sectors > 0, "an empty bio");
        let (mut sector, end) = (sector, sector + sectors);
        let max = self.max_sectors;
        if let Some(rq) = self.newest_of[queue as usize].as_mut() {
            if rq.write == write && sector + sectors == rq.start && rq.end - sector <= max {
                rq.start = sector; // a front merge
                return false;
            }
            if rq.write == write && rq.end == sector {
                let room = max - (rq.end - rq.start);
                let taken = room.min(end - sector);
                rq.end += taken;
                sector += taken;
            }
        }
        let mut flushed = false;
        while sector < end {
            if self.requests > 0 && (self.requests >= self.max_requests() || self.newest_sectors() >= BLK_PLUG_FLUSH_SECTORS) {
                self.flushed();
                flushed = true;
            }
            if self.newest.is_some_and(|q| q != queue) {
                self.multiple_queues = true;
            }
            let next = end.min(sector + max);
            self.newest_of[queue as usize] = Some(Plugged { write, start: sector, end: next });
            self.newest = Some(queue);
            self.requests += 1;
            sector = next;
        }
        flushed
    }

    fn newest_sectors(&self) -> u64 {
        let q = self.newest.expect("a non-empty plug has a newest request");
        let rq = self.newest_of[q as usize].expect("the newest request is its queue's newest");
        rq.end - rq.start
    }

    /// The plug was flushed (`blk_mq_flush_plug_list`): it holds nothing. It keeps knowing that
    /// it spans several queues, as the kernel's plug does until `blk_finish_plug`.
    pub fn flushed(&mut self) {
        if self.requests == 0 {
            return;
        }
        self.newest_of.iter_mut().for_each(|rq| *rq = None);
        self.newest = None;
        self.requests = 0;
    }

    /// The plug ended (`blk_finish_plug`): the next `blk_start_plug` starts afresh.
    pub fn finished(&mut self) {
        self.flushed();
        self.multiple_queues = false;
    }

    fn max_requests(&self) -> u32 {
        if self.multiple_queues { 2 * BLK_MAX_REQUEST_COUNT } else { BLK_MAX_REQUEST_COUNT }
    }

    /// The plug's invariants (tests call this after every step).
    pub fn check(&self) {
        let held = self.newest_of.iter().filter(|rq| rq.is_some()).count() as u32;
        assert!(held <= self.requests, "more queues with requests than requests");
        assert_eq!(self.requests == 0, self.newest.is_none(), "an empty plug has no newest request");
        if let Some(q) = self.newest {
            assert!(self.newest_of[q as usize].is_some(), "the newest request is its queue's newest");
        }
        for rq in self.newest_of.iter().flatten() {
            assert!(rq.start < rq.end && rq.end - rq.start <= self.max_sectors, "request size {rq:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_bios_of_one_queue_merge_up_to_the_largest_request() {
        let mut plug = Plug::new(2, 32);
        for page in 0..4 {
            assert!(!plug.add(0, true, page * 8, 8));
            plug.check();
        }
        assert_eq!(plug.len(), 1, "four pages merged into one request of 32 sectors");
        // A fifth page would exceed the queue's 32 sectors: a new request.
        plug.add(0, true, 32, 8);
        assert_eq!(plug.len(), 2);
        // A front merge, and a read does not merge with a write.
        plug.add(1, true, 100, 8);
        plug.add(1, true, 92, 8);
        assert_eq!(plug.len(), 3);
        plug.add(1, false, 108, 8);
        assert_eq!(plug.len(), 4);
        plug.check();
    }

    #[test]
    fn a_run_fills_the_newest_request_then_starts_requests_of_the_largest_size() {
        let mut plug = Plug::new(1, 32);
        plug.add(0, true, 0, 8);
        // 24 sectors fill the first request, then 32 + 32 + 8 start three more.
        assert!(!plug.add(0, true, 8, 96));
        assert_eq!(plug.len(), 4);
        plug.check();
        // The same pages one at a time make the same requests.
        let mut pages = Plug::new(1, 32);
        for page in 0..13 {
            pages.add(0, true, page * 8, 8);
        }
        assert_eq!(pages.len(), plug.len());
    }

    #[test]
    fn a_new_request_flushes_a_plug_whose_newest_request_reached_128k() {
        let mut plug = Plug::new(1, 2560);
        plug.add(0, true, 0, BLK_PLUG_FLUSH_SECTORS - 8);
        assert!(!plug.add(0, true, 1000, 8), "newest request below 128 KiB");
        assert!(!plug.add(0, true, 1008, BLK_PLUG_FLUSH_SECTORS - 8), "merging never flushes");
        assert!(plug.add(0, true, 5000, 8), "a new request behind a 128 KiB one flushes");
        assert_eq!(plug.len(), 1, "the new request starts the flushed plug");
        plug.check();
    }

    #[test]
    fn the_request_count_limit_doubles_once_the_plug_spans_queues() {
        let mut one = Plug::new(2, 2560);
        for i in 0..BLK_MAX_REQUEST_COUNT as u64 {
            assert!(!one.add(0, true, i * 100, 8));
        }
        assert!(one.add(0, true, 10_000, 8), "32 requests on one queue");
        let mut two = Plug::new(2, 2560);
        for i in 0..BLK_MAX_REQUEST_COUNT as u64 {
            assert!(!two.add((i % 2) as u32, true, i * 100, 8));
        }
        for i in 0..BLK_MAX_REQUEST_COUNT as u64 {
            assert!(!two.add(0, true, 20_000 + i * 100, 8), "two queues: up to 64");
        }
        assert!(two.add(1, true, 50_000, 8));
        two.check();
        // Flushed, it still spans queues; finished, it starts afresh.
        for i in 1..2 * BLK_MAX_REQUEST_COUNT as u64 {
            assert!(!two.add(0, true, i * 100, 8));
        }
        two.finished();
        for i in 0..BLK_MAX_REQUEST_COUNT as u64 {
            assert!(!two.add(0, true, i * 100, 8));
        }
        assert!(two.add(0, true, 10_000, 8));
    }

    #[test]
    fn a_bio_is_tried_against_its_own_queues_newest_request_only() {
        let mut plug = Plug::new(2, 2560);
        plug.add(0, true, 0, 8);
        plug.add(0, true, 1000, 8);
        // Contiguous with the older request of queue 0, not the newest: no merge.
        plug.add(0, true, 8, 8);
        assert_eq!(plug.len(), 3);
        // A request on queue 1 in between does not hide queue 0's newest.
        plug.add(1, true, 0, 8);
        plug.add(0, true, 16, 8);
        assert_eq!(plug.len(), 4, "merged behind queue 0's newest (8..16)");
        plug.check();
    }
}
