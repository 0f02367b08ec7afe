//! md's raid4/5/6 stripe cache as state (Linux 6.1 `drivers/md/raid5.c`, `raid5.h`).
//!
//! A stripe head covers one 4 KiB page (STRIPE_SIZE) of every member at the same member
//! offset. The cache has `stripe_cache_size` heads, created at start-up spread over
//! NR_STRIPE_HASH_LOCKS = 8 inactive lists (`grow_one_stripe`: hash = max_nr_stripes % 8); a
//! head serves only sectors of its list's hash (`stripe_hash_locks_hash`: (sector >> 3) & 7).
//! A write bio is added page by page to the heads of the rows it covers (`make_stripe_request`,
//! `add_stripe_bio`): a head found in the cache (`__find_stripe`) keeps the pages an earlier
//! request read or wrote; otherwise the oldest inactive head of the hash is reused
//! (`get_free_stripe` takes the front of the list, `do_release_stripe` adds to its tail), and
//! with none the writer sleeps (`raid5_get_active_stripe`: R5_INACTIVE_BLOCKED, woken when
//! `is_inactive_blocked` allows: an inactive head and fewer than 3/4 of the heads active).
//!
//! Heads to handle wait for raid5d's next pass (`handle_active_stripes`), so every page added
//! before it runs is written together: a head handled once its pages are all being written
//! needs no pre-read. `handle_stripe_dirtying` decides rmw vs rcw by the one cost rule
//! (`plan::RowRule`), counting the pages the head holds up to date as free. Host O_DIRECT
//! writes carry REQ_SYNC, so `make_stripe_request` sets STRIPE_PREREAD_ACTIVE at once: they
//! never wait on the delayed list (only non-sync writes would; none reach md here yet).
//! Heads handled alike in one pass (consecutive pages of one stripe row, same members) are
//! issued as one member I/O per member, as md's 4 KiB bios merge in the member queue.

use crate::layout::Array;
use crate::plan::{RmwLevel, RowRule, RowWay};
use crate::PAGE_SECTORS;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// IO_THRESHOLD (raid5.c): delayed heads are activated only while fewer pre-reading heads are
/// active than this.
const IO_THRESHOLD: u32 = 1;
/// BYPASS_THRESHOLD (raid5.c), the default of sysfs `preread_bypass_threshold`.
pub const BYPASS_THRESHOLD: u32 = 1;
/// NR_STRIPE_HASH_LOCKS (raid5.h).
const HASH_LISTS: usize = 8;
const NIL: u32 = u32::MAX;
const NO_SECTOR: u64 = u64::MAX;

/// A write request md received: its id (for completion) and array sectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteBio {
    pub id: u32,
    pub sector: u64,
    pub sectors: u64,
    /// REQ_SYNC (O_DIRECT writes carry it): its heads pre-read at once (STRIPE_PREREAD_ACTIVE)
    /// instead of waiting on the delayed list.
    pub sync: bool,
    /// Sent under its submitter's plug (`blk_start_plug`): the heads it adds wait on the plug's
    /// list until the submitter unplugs ([`StripeCache::unplug`]) or sleeps for a free head.
    pub plugged: bool,
    /// The thread that submits it: a thread asleep for a free head submits nothing more until
    /// it wakes, so its later bios wait behind the one it sleeps in.
    pub submitter: u32,
}

/// Member I/O for heads handled alike in one pass: `pages` consecutive 4 KiB rows from member
/// sector `sector`, on every member in `members`. When it completes, pass `batch` to
/// [`StripeCache::batch_done`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadIo {
    pub batch: u32,
    pub sector: u64,
    pub pages: u64,
    pub members: u64,
    pub write: bool,
    pub way: RowWay,
    pub p: u32,
    pub q: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Busy {
    Idle,
    Reading,
    Writing,
}

/// The bios a head holds, in the order they joined: the first in place (a head seldom holds
/// more, and then reading its bios touches no memory of their own), any more after it.
#[derive(Clone, Debug, Default)]
struct Bios {
    first: Option<u32>,
    more: Vec<u32>,
}

impl Bios {
    fn last(&self) -> Option<u32> {
        self.more.last().copied().or(self.first)
    }
    fn push(&mut self, bio: u32) {
        if self.first.is_none() {
            debug_assert!(self.more.is_empty());
            self.first = Some(bio);
        } else {
            self.more.push(bio);
        }
    }
    fn is_empty(&self) -> bool {
        self.first.is_none()
    }
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.first.into_iter().chain(self.more.iter().copied())
    }
    /// Empties the list, keeping its allocation.
    fn clear(&mut self) {
        self.first = None;
        self.more.clear();
    }
}

#[derive(Clone, Debug)]
struct Head {
    /// Member sector of the row page, or NO_SECTOR for a head holding nothing.
    sector: u64,
    /// The row's P (and Q), kept so handling needs no layout arithmetic: its data members are
    /// the others (every member has one role in a row, `Raid456::assert_stripe`).
    p: u32,
    q: Option<u32>,
    bucket: u8,
    uptodate: u64,
    /// Pages with new data waiting to be written (`towrite`), and those covered whole.
    towrite: u64,
    overwrite: u64,
    busy: Busy,
    /// Pages being read, or written, by the I/O in flight.
    in_flight: u64,
    way: RowWay,
    queued: bool,
    /// STRIPE_ON_UNPLUG_LIST: queued on the plug's list, not yet released for handling.
    on_plug: bool,
    /// STRIPE_PREREAD_ACTIVE, STRIPE_DELAYED (with the stamp of its delayed-list entry), and
    /// a full-stripe write in flight (counted in `pending_full_writes`).
    preread_active: bool,
    delayed: bool,
    delay_stamp: u32,
    /// On the hold list (with the stamp of its entry).
    on_hold: bool,
    hold_stamp: u32,
    full_write: bool,
    /// STRIPE_IO_STARTED: the head issued member I/O since it was (re)initialised.
    io_started: bool,
    bios: Bios,
    writing_bios: Bios,
    /// The next head of its batch (`StripeCache::batches`), while it has I/O in flight.
    next_in_batch: u32,
    inactive: bool,
    prev: u32,
    next: u32,
}

/// An inactive list (LRU: released at the tail, reused from the front).
#[derive(Clone, Copy, Debug)]
struct List {
    front: u32,
    back: u32,
    len: u32,
}

/// A write being added to heads: the piece of it md is working on (`bio_split_to_limits` cut
/// the bio at md's `max_sectors`; the pieces reach md one after another), and the next head of
/// that piece: its stripe row and how many of the row's heads are done.
struct Pending {
    bio: WriteBio,
    piece_start: u64,
    piece_end: u64,
    row: u64,
    step: u64,
}

/// The heads a piece adds in one stripe row (`StripeCache::row_heads`) and the row's parity
/// members.
#[derive(Clone, Copy)]
struct RowRun {
    row: u64,
    first: u64,
    heads: u64,
    p: u32,
    q: Option<u32>,
    /// The last data index looked up and its member: a small write's heads all take their
    /// page from the same chunk.
    last_data: Option<(u64, u32)>,
}

/// Multiplicative hashing of member sectors (the std SipHash costs more than the cache).
#[derive(Default)]
pub struct SectorHasher(u64);

impl Hasher for SectorHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = (value ^ (value >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// The stripe cache of one array.
pub struct StripeCache {
    array: Array,
    /// The array's chunk (a power of two), data members per row and every member, as masks:
    /// read per page, so kept here rather than asked of the layout each time.
    chunk_sectors: u64,
    chunk_shift: u32,
    data_disks: u64,
    all_members: u64,
    rmw_level: RmwLevel,
    heads: Vec<Head>,
    map: HashMap<u64, u32, BuildHasherDefault<SectorHasher>>,
    lists: [List; HASH_LISTS],
    active: u32,
    /// R5_INACTIVE_BLOCKED: a writer found no free head; others wait behind it.
    blocked: bool,
    /// Writers asleep in `raid5_get_active_stripe` (conf->wait_for_stripe), in the order they
    /// went to sleep, each with the bio it is adding.
    sleepers: Vec<Pending>,
    /// Bios whose submitter is asleep, in the order they were submitted: the thread sends
    /// each once it has added the one before.
    backlog: VecDeque<Pending>,
    handle_list: VecDeque<u32>,
    /// The plug's list of heads (`raid5_plug_cb.list`): heads a plugged submitter added, which
    /// raid5d sees once the plug is released (`raid5_unplug`).
    plug_list: Vec<u32>,
    /// Per bio id: heads holding it, plus one while it is being added.
    bio_refs: Vec<u32>,
    /// Each batch's first and last head, linked through `Head::next_in_batch` (kept in the
    /// heads, which handling and completion touch anyway, rather than in a list of their own).
    batches: Vec<(u32, u32)>,
    free_batches: Vec<u32>,
    /// Bios whose every head is written, for the caller to complete.
    completed: Vec<u32>,
    /// `delayed_list` (entries stale unless the head is still delayed with that stamp) and
    /// `hold_list`; `preread_active_stripes`, `pending_full_writes`, `bypass_count` and
    /// `bypass_threshold` as in `struct r5conf`.
    delayed_list: VecDeque<(u32, u32)>,
    /// Entries are (head, stamp): stale unless the head is still on the hold list with that
    /// stamp (a writer that finds a held head takes it off: `find_get_stripe`'s list_del_init).
    hold_list: VecDeque<(u32, u32)>,
    /// Heads on the hold list (its live entries).
    held: u32,
    preread_active: u32,
    pending_full_writes: u32,
    bypass_count: u32,
    /// `last_hold`: the head first on the hold list when bypasses were last counted.
    last_hold: u32,
    bypass_threshold: u32,
    /// md's queue `max_hw_sectors` for raid4/5/6: RAID5_MAX_REQ_STRIPES (256) stripe pages
    /// (raid5.c `raid5_run`), 1024 KiB: larger writes reach md as several bios.
    max_bio_sectors: u64,
    /// R5_ALLOC_MORE (a writer found no free head) and R5_DID_ALLOC (raid5d grew the cache and
    /// no head was released since): raid5d grows the cache by one head when it goes idle.
    alloc_more: bool,
    did_alloc: bool,
}

/// RAID5_MAX_REQ_STRIPES (raid5.c): md's largest raid4/5/6 request, in 4 KiB stripe pages.
pub const MAX_REQ_STRIPES: u64 = 256;

impl StripeCache {
    /// A cache of `entries` heads (md's `stripe_cache_size`) for a raid4/5/6 array.
    pub fn new(array: Array, entries: u32, rmw_level: RmwLevel) -> StripeCache {
        assert!(array.stripe(0).is_some(), "the stripe cache serves raid4/5/6");
        assert!(entries >= 1);
        let devices = array.devices();
        assert!(array.chunk_sectors().is_power_of_two(), "md's chunk is a power of two");
        let mut cache = StripeCache {
            chunk_sectors: array.chunk_sectors(),
            chunk_shift: array.chunk_sectors().trailing_zeros(),
            data_disks: array.data_disks() as u64,
            all_members: if devices >= 64 { u64::MAX } else { (1u64 << devices) - 1 },
            array,
            rmw_level,
            heads: Vec::with_capacity(entries as usize),
            map: HashMap::with_capacity_and_hasher(entries as usize * 2, Default::default()),
            lists: [List { front: NIL, back: NIL, len: 0 }; HASH_LISTS],
            active: 0,
            blocked: false,
            sleepers: Vec::new(),
            backlog: VecDeque::new(),
            handle_list: VecDeque::new(),
            plug_list: Vec::new(),
            bio_refs: Vec::new(),
            batches: Vec::new(),
            free_batches: Vec::new(),
            completed: Vec::new(),
            delayed_list: VecDeque::new(),
            hold_list: VecDeque::new(),
            held: 0,
            preread_active: 0,
            pending_full_writes: 0,
            bypass_count: 0,
            last_hold: NIL,
            bypass_threshold: BYPASS_THRESHOLD,
            max_bio_sectors: MAX_REQ_STRIPES * PAGE_SECTORS,
            alloc_more: false,
            did_alloc: false,
        };
        for _ in 0..entries {
            cache.grow_one();
        }
        cache
    }

    /// `grow_one_stripe`: a new empty head on inactive list `max_nr_stripes % 8`.
    fn grow_one(&mut self) {
        let index = self.heads.len() as u32;
        self.heads.push(Head {
            sector: NO_SECTOR,
            p: 0,
            q: None,
            bucket: (index as usize % HASH_LISTS) as u8,
            uptodate: 0,
            towrite: 0,
            overwrite: 0,
            busy: Busy::Idle,
            in_flight: 0,
            way: RowWay::Rcw,
            queued: false,
            on_plug: false,
            preread_active: false,
            delayed: false,
            delay_stamp: 0,
            on_hold: false,
            hold_stamp: 0,
            full_write: false,
            io_started: false,
            bios: Bios::default(),
            writing_bios: Bios::default(),
            next_in_batch: NIL,
            inactive: false,
            prev: NIL,
            next: NIL,
        });
        self.push_back(index);
    }

    /// raid5d goes idle (the end of `raid5d()`): with R5_ALLOC_MORE set, it grows the cache by
    /// one head and sets R5_DID_ALLOC, so that a cache too small for the writers grows slowly
    /// beyond `stripe_cache_size` (md shrinks it back only under memory pressure, through its
    /// shrinker, which is not modelled). Sleeping writers may go on with the new head.
    pub fn raid5d_idle(&mut self) {
        if std::mem::take(&mut self.alloc_more) {
            self.grow_one();
            self.did_alloc = true;
            self.wake();
        }
    }

    /// Heads the cache has now (md's `max_nr_stripes`: `stripe_cache_size` plus growth).
    pub fn size(&self) -> u32 {
        self.heads.len() as u32
    }

    /// md's sysfs `preread_bypass_threshold`: how many times full-stripe writes may pass the
    /// heads waiting to pre-read (0: they wait until no full-stripe write is pending).
    pub fn set_bypass_threshold(&mut self, threshold: u32) {
        self.bypass_threshold = threshold;
    }

    /// Heads in use (md's `stripe_cache_active`).
    pub fn active(&self) -> u32 {
        self.active
    }

    /// The array the cache holds rows of.
    pub fn array(&self) -> &Array {
        &self.array
    }

    /// Whether raid5d has heads to handle.
    pub fn has_work(&self) -> bool {
        let hold_may_go = self.pending_full_writes == 0
            || (self.bypass_threshold > 0 && self.bypass_count > self.bypass_threshold);
        !self.handle_list.is_empty()
            || (self.held > 0 && hold_may_go)
            || (!self.delayed_list.is_empty() && self.preread_active < IO_THRESHOLD)
    }

    /// Writers sleeping for a free head.
    pub fn waiting(&self) -> usize {
        self.sleepers.len() + self.backlog.len()
    }

    /// Moves the ids of bios finished since the last call to `out`.
    pub fn take_completed(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.completed);
    }

    /// Adds a write to the heads of its rows. A bio whose heads are all written comes back
    /// from [`StripeCache::batch_done`]; one that must wait for a head is kept and resumed.
    pub fn submit(&mut self, bio: WriteBio) {
        assert!(bio.sectors > 0);
        let id = bio.id as usize;
        if self.bio_refs.len() <= id {
            self.bio_refs.resize(id + 1, 0);
        }
        assert_eq!(self.bio_refs[id], 0, "bio {id} submitted twice");
        self.bio_refs[id] = 1;
        let pending = self.piece(bio, bio.sector);
        if self.is_asleep(bio.submitter) {
            self.backlog.push_back(pending);
            return;
        }
        // A new head is refused while a writer sleeps (R5_INACTIVE_BLOCKED); cached ones are
        // still found, so the bio adds what it can and sleeps behind the others.
        self.add_pages(pending);
    }

    /// The piece of `bio` from `start` that md receives as one bio: `bio_split_to_limits` cuts
    /// at md's max_hw_sectors counted from the piece's start.
    fn piece(&self, bio: WriteBio, start: u64) -> Pending {
        let end = (start + self.max_bio_sectors).min(bio.sector + bio.sectors);
        let row = (start >> self.chunk_shift) / self.data_disks;
        Pending { bio, piece_start: start, piece_end: end, row, step: 0 }
    }

    /// The pages of a piece in stripe row `row`: the cyclic run of page slots its heads cover,
    /// as (first slot, heads). md walks the piece in logical order and adds all of its pages in
    /// a head at once (`make_stripe_request` → `add_all_stripe_bios`), so the heads of a row
    /// come in the order of their first page.
    fn row_heads(&self, pending: &Pending) -> (u64, u64) {
        let chunk = self.chunk_sectors;
        let row_sectors = chunk * self.data_disks;
        let row_start = pending.row * row_sectors;
        let a = pending.piece_start.max(row_start) / PAGE_SECTORS * PAGE_SECTORS;
        let b = pending.piece_end.min(row_start + row_sectors);
        let slots = chunk / PAGE_SECTORS;
        let pages = (b - a).div_ceil(PAGE_SECTORS);
        let (first, heads) = ((a & (chunk - 1)) / PAGE_SECTORS, pages.min(slots));
        if first != 0 && heads == slots && self.starts_at_next_chunk(pending.row, (a - row_start) >> self.chunk_shift) {
            return (0, heads);
        }
        (first, heads)
    }

    /// `raid5_bio_lowest_chunk_sector`: a piece that starts part-way into data chunk `j` of a
    /// row and runs past it is walked from the next chunk's start (the row's lowest member
    /// sector, "the best chances of creating IOs adjacent to previous IOs"), when the member
    /// after chunk j's (past P and Q) exists; its first pages, whose heads the next chunk's
    /// pages share, are then added in slot order from 0. (When chunk j is the row's last, md
    /// would start in the next row and add this row's tail last: not modelled, the walk stays
    /// in order.)
    fn starts_at_next_chunk(&self, row: u64, j: u64) -> bool {
        if j + 1 >= self.data_disks {
            return false;
        }
        let place = self.array.place_in_row(row, j as u32).expect("a raid4/5/6 row");
        let mut next = place.data.member + 1;
        while next == place.p || Some(next) == place.q {
            next += 1;
        }
        next < self.array.devices()
    }

    /// The head run of the piece's current row (`row_heads`) and the row's P and Q.
    fn row_run(&self, pending: &Pending) -> RowRun {
        let (first, heads) = self.row_heads(pending);
        let place = self.array.place_in_row(pending.row, 0).expect("a raid4/5/6 row");
        RowRun { row: pending.row, first, heads, p: place.p, q: place.q, last_data: None }
    }

    /// The member sector of the next head `pending` adds.
    fn next_head_sector(&self, pending: &Pending) -> u64 {
        let chunk = self.chunk_sectors;
        let (first, _) = self.row_heads(pending);
        // Page slots are a power of two (the chunk is): the remainder is a mask.
        let slot = (first + pending.step) & (chunk / PAGE_SECTORS - 1);
        pending.row * chunk + slot * PAGE_SECTORS
    }

    /// Adds the bio's pages from the pending head on, piece by piece; on a missing head, its
    /// thread sleeps (the newest sleeper).
    fn add_pages(&mut self, mut pending: Pending) -> bool {
        let (chunk, k) = (self.chunk_sectors, self.data_disks);
        let slots = chunk / PAGE_SECTORS;
        let bio_end = pending.bio.sector + pending.bio.sectors;
        // The current row's head run and parity members, found once per row.
        let mut row: Option<RowRun> = None;
        loop {
            let run = match &mut row {
                Some(run) if run.row == pending.row => run,
                _ => row.insert(self.row_run(&pending)),
            };
            if pending.step == run.heads {
                let row_end = (pending.row + 1) * chunk * k;
                if row_end < pending.piece_end {
                    (pending.row, pending.step) = (pending.row + 1, 0);
                } else if pending.piece_end < bio_end {
                    pending = self.piece(pending.bio, pending.piece_end);
                    row = None;
                } else {
                    break;
                }
                continue;
            }
            let slot = (run.first + pending.step) & (slots - 1);
            let member_sector = pending.row * chunk + slot * PAGE_SECTORS;
            let (p, q) = (run.p, run.q);
            let Some(head) = self.get_head(member_sector, pending.row, p, q) else {
                self.blocked = true;
                // The submitter sleeps in raid5_get_active_stripe: schedule() flushes its plug
                // (sched_submit_work → blk_flush_plug → raid5_unplug).
                if pending.bio.plugged {
                    self.unplug();
                }
                // wait_event adds a non-exclusive waiter at the queue's head.
                self.sleepers.push(pending);
                return false;
            };
            let run = row.as_mut().expect("the row's run");
            self.attach_pages(head, &pending, slot, &mut run.last_data);
            pending.step += 1;
        }
        if self.unref_bio(pending.bio.id) {
            self.completed.push(pending.bio.id);
        }
        true
    }

    /// Attaches the piece's pages in page slot `slot` of its row (one per data member it
    /// reaches) to `head`, in logical order.
    fn attach_pages(&mut self, head: u32, pending: &Pending, slot: u64, last_data: &mut Option<(u64, u32)>) {
        let chunk = self.chunk_sectors;
        let row_start = pending.row * chunk * self.data_disks;
        for j in 0..self.data_disks {
            // The page of data index j: pages grow with j, so none after the piece's end counts.
            let page = row_start + j * chunk + slot * PAGE_SECTORS;
            if page >= pending.piece_end {
                break;
            }
            if page + PAGE_SECTORS > pending.piece_start {
                let whole = pending.piece_start <= page && page + PAGE_SECTORS <= pending.piece_end;
                let member = match *last_data {
                    Some((index, member)) if index == j => member,
                    _ => self.array.place_in_row(pending.row, j as u32).expect("a raid4/5/6 row").data.member,
                };
                *last_data = Some((j, member));
                debug_assert_eq!(Some(member), self.array.stripe(pending.row).map(|s| s.data[j as usize]));
                self.attach(head, pending.bio, member, whole);
            }
        }
    }

    /// `add_stripe_bio` and what `make_stripe_request` does next: the head is to be handled
    /// (off the delayed list), and a REQ_SYNC bio makes it pre-read at once.
    fn attach(&mut self, index: u32, bio: WriteBio, member: u32, whole: bool) {
        let head = &mut self.heads[index as usize];
        head.delayed = false;
        if bio.sync && !head.preread_active {
            head.preread_active = true;
            self.preread_active += 1;
        }
        let (bio, plugged) = (bio.id, bio.plugged);
        head.towrite |= 1 << member;
        if whole {
            head.overwrite |= 1 << member;
        }
        if head.bios.last() != Some(bio) {
            head.bios.push(bio);
            self.bio_refs[bio as usize] += 1;
        }
        if plugged && head.queued && !head.on_plug {
            // A plugged writer holds the head it found on the handle list until it unplugs
            // (find_get_stripe's list_del_init, then release_stripe_plug).
            let at = self.handle_list.iter().position(|&i| i == index).expect("a queued head is on the handle list");
            self.handle_list.remove(at);
            head.queued = false;
        }
        // A head whose member I/O is in flight is on no list (its count is held by the I/O):
        // releasing it does not queue it, and its I/O's completion will.
        if !head.queued && head.busy == Busy::Idle {
            head.queued = true;
            if plugged {
                // release_stripe_plug: the head waits on the plug's list.
                head.on_plug = true;
                self.plug_list.push(index);
            } else {
                self.handle_list.push_back(index);
            }
        }
    }

    /// `raid5_unplug`: the plug's heads are released for handling, in the order they joined.
    /// A submitter calls it when it is done submitting (`blk_finish_plug`).
    pub fn unplug(&mut self) {
        if self.plug_list.is_empty() {
            return;
        }
        for index in self.plug_list.drain(..) {
            self.heads[index as usize].on_plug = false;
            self.handle_list.push_back(index);
        }
    }

    /// The data members of a row whose P and Q are `p` and `q`: those that hold neither.
    fn data_mask(&self, p: u32, q: Option<u32>) -> u64 {
        self.all_members & !(1u64 << p) & !q.map_or(0, |q| 1u64 << q)
    }

    /// Drops a reference of a bio; the caller completes it when this returns true.
    fn unref_bio(&mut self, bio: u32) -> bool {
        let refs = &mut self.bio_refs[bio as usize];
        assert!(*refs > 0, "bio {bio} released too often");
        *refs -= 1;
        *refs == 0
    }

    /// `raid5_get_active_stripe`: the cached head of the row page, or a free one of its hash.
    fn get_head(&mut self, sector: u64, stripe_row: u64, p: u32, q: Option<u32>) -> Option<u32> {
        // One probe finds the head, or the place a new one takes.
        let vacant = match self.map.entry(sector) {
            Entry::Occupied(found) => Err(*found.get()),
            Entry::Vacant(vacant) => Ok(vacant),
        };
        let vacant = match vacant {
            Ok(vacant) => vacant,
            Err(index) => {
                let head = &mut self.heads[index as usize];
                if head.inactive {
                    self.unlink(index);
                    self.active += 1;
                } else if std::mem::take(&mut head.on_hold) {
                    // find_get_stripe takes a waiting head off its list (list_del_init).
                    self.held -= 1;
                }
                return Some(index);
            }
        };
        if self.blocked {
            return None;
        }
        let index = self.lists[bucket_of(sector)].front;
        if index == NIL {
            // R5_ALLOC_MORE, unless raid5d grew the cache and nothing was released since.
            self.alloc_more |= !self.did_alloc;
            return None;
        }
        vacant.insert(index);
        debug_assert_eq!(self.data_mask(p, q), data_mask_of(&self.array, stripe_row), "row {stripe_row}'s data members");
        self.unlink(index);
        self.active += 1;
        let head = &mut self.heads[index as usize];
        if head.sector != NO_SECTOR {
            self.map.remove(&head.sector);
        }
        // init_stripe: a reused head starts with no pages.
        head.sector = sector;
        (head.p, head.q) = (p, q);
        head.uptodate = 0;
        head.io_started = false;
        Some(index)
    }

    /// Whether `submitter` sleeps for a head, or has bios waiting behind one that does.
    fn is_asleep(&self, submitter: u32) -> bool {
        self.sleepers.iter().chain(&self.backlog).any(|p| p.bio.submitter == submitter)
    }

    /// `is_inactive_blocked`'s second half: writers may take heads again once the cache is not
    /// blocked (R5_INACTIVE_BLOCKED), or under 3/4 of it is active.
    fn unblocked(&self) -> bool {
        !self.blocked || self.active < self.heads.len() as u32 * 3 / 4
    }

    /// A head released to an inactive list wakes every sleeper (`release_inactive_stripe_list`
    /// → `wake_up(&conf->wait_for_stripe)`, a non-exclusive wake). Each checks its own
    /// condition, `is_inactive_blocked`: a free head on its own hash's list and, while
    /// R5_INACTIVE_BLOCKED is set, fewer than 3/4 of the cache active. It does not ask whether
    /// the head it wants was made meanwhile: it finds that once it runs again. Those that may
    /// go run in the wait queue's order, the last to sleep first (`prepare_to_wait_event`
    /// adds non-exclusive waiters at the head, `__wake_up_common` walks from the head); one
    /// that finds no head again sleeps anew, at the head. A thread that finishes its bio goes
    /// on with the bios it had yet to send.
    fn wake(&mut self) {
        // None may go while the cache is blocked and 3/4 active: they stay asleep, in order.
        if self.sleepers.is_empty() || !self.unblocked() {
            self.unplug();
            return;
        }
        let asleep = std::mem::take(&mut self.sleepers);
        let mut still = Vec::with_capacity(asleep.len());
        for pending in asleep.into_iter().rev() {
            let sector = self.next_head_sector(&pending);
            let list = &self.lists[bucket_of(sector)];
            let may_go = list.len > 0 && self.unblocked();
            if !may_go {
                still.push(pending);
                continue;
            }
            self.blocked = false;
            let submitter = pending.bio.submitter;
            if self.add_pages(pending) {
                self.send_backlog(submitter);
            }
        }
        // Those still asleep keep their order; those that slept again are the newest.
        still.reverse();
        still.append(&mut self.sleepers);
        self.sleepers = still;
        // A resumed plugged submitter either added everything (blk_finish_plug) or sleeps
        // again (schedule() flushes its plug): either way its heads are released.
        self.unplug();
    }

    /// A woken thread sends the bios it had yet to, in order, until one sleeps.
    fn send_backlog(&mut self, submitter: u32) {
        while let Some(at) = self.backlog.iter().position(|p| p.bio.submitter == submitter) {
            let pending = self.backlog.remove(at).expect("a backlog entry");
            if !self.add_pages(pending) {
                return;
            }
        }
    }

    /// One raid5d pass: handles every head queued before it, appending the member I/O to
    /// `out`. `failed_mask(sector)` gives the members md cannot use at that member sector.
    pub fn handle(&mut self, failed_mask: impl Fn(u64) -> u64, out: &mut Vec<HeadIo>) {
        self.handle_batch(failed_mask, out, usize::MAX);
    }

    /// Like [`StripeCache::handle`], but takes at most `max_heads` heads off the lists, as
    /// `handle_active_stripes` takes MAX_STRIPE_BATCH at a time; the rest wait for the next.
    pub fn handle_batch(&mut self, failed_mask: impl Fn(u64) -> u64, out: &mut Vec<HeadIo>, max_heads: usize) {
        self.activate_delayed();
        let mut budget = max_heads;
        let queued = self.handle_list.len();
        for _ in 0..queued.min(budget) {
            let index = self.handle_list.pop_front().unwrap();
            budget -= 1;
            self.count_bypass(index);
            self.heads[index as usize].queued = false;
            self.handle_head(index, &failed_mask, out);
        }
        // __get_priority_stripe: the hold list once the handle list is empty, a head at a time
        // while no full-stripe write is pending or new heads passed it more than
        // bypass_threshold times (each hold head taken pays the threshold back).
        while budget > 0 && queued < max_heads {
            let bypassed = self.bypass_threshold > 0 && self.bypass_count > self.bypass_threshold;
            if !(self.pending_full_writes == 0 || bypassed) {
                break;
            }
            let Some(index) = self.hold_front() else { break };
            self.hold_list.pop_front();
            self.heads[index as usize].on_hold = false;
            self.held -= 1;
            self.bypass_count = self.bypass_count.saturating_sub(self.bypass_threshold);
            budget -= 1;
            self.handle_head(index, &failed_mask, out);
        }
        self.wake();
    }

    /// The first live head of the hold list, dropping stale entries before it.
    fn hold_front(&mut self) -> Option<u32> {
        while let Some(&(index, stamp)) = self.hold_list.front() {
            let head = &self.heads[index as usize];
            if head.on_hold && head.hold_stamp == stamp {
                return Some(index);
            }
            self.hold_list.pop_front();
        }
        None
    }

    /// __get_priority_stripe's count of heads that passed the hold list: only heads that have
    /// not issued I/O yet count (STRIPE_IO_STARTED, "do not count towards 'bypass_count'"), and
    /// only while the same head is first on the hold list (`last_hold`); a new first head pays
    /// the threshold back. Inlined: every handled head asks, and most find the hold list empty.
    #[inline]
    fn count_bypass(&mut self, index: u32) {
        let Some(first) = self.hold_front() else {
            self.bypass_count = 0;
            return;
        };
        if self.heads[index as usize].io_started {
            return;
        }
        if self.last_hold == first {
            self.bypass_count += 1;
        } else {
            self.last_hold = first;
            self.bypass_count = self.bypass_count.saturating_sub(self.bypass_threshold);
        }
    }

    /// `raid5_activate_delayed`: with fewer than IO_THRESHOLD heads pre-reading, every delayed
    /// head may pre-read and moves to the hold list.
    fn activate_delayed(&mut self) {
        if self.preread_active >= IO_THRESHOLD {
            return;
        }
        while let Some((index, stamp)) = self.delayed_list.pop_front() {
            let head = &mut self.heads[index as usize];
            if !head.delayed || head.delay_stamp != stamp {
                continue; // stale: the head was handled or reused since
            }
            head.delayed = false;
            if !head.preread_active {
                head.preread_active = true;
                self.preread_active += 1;
            }
            head.on_hold = true;
            head.hold_stamp = head.hold_stamp.wrapping_add(1);
            let stamp = head.hold_stamp;
            self.hold_list.push_back((index, stamp));
            self.held += 1;
        }
    }

    /// One head of a pass. Inlined into the pass's loop (a call per head, three per head a
    /// write holds: its pre-read, its write, its release).
    #[inline(always)]
    fn handle_head(&mut self, index: u32, failed_mask: &impl Fn(u64) -> u64, out: &mut Vec<HeadIo>) {
        let head = &self.heads[index as usize];
        if head.busy != Busy::Idle {
            return; // handled again when its I/O completes
        }
        if head.towrite == 0 {
            self.release(index);
            return;
        }
        let failed = failed_mask(head.sector);
        let parity_mask = (1u64 << head.p) | head.q.map_or(0, |q| 1u64 << q);
        let data_mask = self.all_members & !parity_mask;
        let rule = RowRule { data_mask, parity_mask, devices: self.array.devices(), failed_mask: failed, rmw_level: self.rmw_level };
        let choice = rule.choose(head.towrite, head.overwrite, head.uptodate);
        let head = &mut self.heads[index as usize];
        if choice.reads != 0 && !head.preread_active {
            // handle_stripe_dirtying: pre-reads wait for STRIPE_PREREAD_ACTIVE (STRIPE_DELAYED).
            if !head.delayed {
                head.delayed = true;
                head.delay_stamp = head.delay_stamp.wrapping_add(1);
                self.delayed_list.push_back((index, head.delay_stamp));
            }
            return;
        }
        head.delayed = false;
        head.way = choice.way;
        let (write, ios) = if choice.reads != 0 {
            head.busy = Busy::Reading;
            head.in_flight = choice.reads;
            (false, choice.reads)
        } else {
            head.busy = Busy::Writing;
            // handle_stripe, reconstruct_state_drain_result: the writes are issued and
            // STRIPE_PREREAD_ACTIVE is cleared (s.dec_preread_active) then, not when they end.
            if std::mem::take(&mut head.preread_active) {
                self.preread_active -= 1;
            }
            head.full_write = head.overwrite & data_mask == data_mask;
            self.pending_full_writes += head.full_write as u32;
            head.in_flight = head.towrite | rule.parity_mask;
            head.towrite = 0;
            head.overwrite = 0;
            std::mem::swap(&mut head.bios, &mut head.writing_bios);
            (true, head.in_flight & !failed)
        };
        self.emit(index, ios, write, choice.way, out);
    }

    /// Adds a handled head's I/O to the pass's output, joining the previous group when it is
    /// the next page of the same row with the same members. Inlined into `handle_head`, its
    /// one caller.
    #[inline(always)]
    fn emit(&mut self, index: u32, ios: u64, write: bool, way: RowWay, out: &mut Vec<HeadIo>) {
        self.heads[index as usize].io_started = true;
        let head = &self.heads[index as usize];
        let (sector, p, q) = (head.sector, head.p, head.q);
        let stripe_row = sector >> self.chunk_shift;
        if let Some(last) = out.last_mut() {
            // A group's pages lie in one chunk of each member: its row is its sector's chunk.
            let row = last.sector >> self.chunk_shift;
            debug_assert_eq!(row, self.heads[self.batches[last.batch as usize].0 as usize].sector >> self.chunk_shift);
            if last.write == write && last.members == ios && last.way == way && last.p == p
                && row == stripe_row
                && last.sector + last.pages * PAGE_SECTORS == sector
            {
                last.pages += 1;
                let tail = std::mem::replace(&mut self.batches[last.batch as usize].1, index);
                self.heads[tail as usize].next_in_batch = index;
                self.heads[index as usize].next_in_batch = NIL;
                return;
            }
        }
        let batch = match self.free_batches.pop() {
            Some(batch) => batch,
            None => {
                self.batches.push((NIL, NIL));
                self.batches.len() as u32 - 1
            }
        };
        self.batches[batch as usize] = (index, index);
        self.heads[index as usize].next_in_batch = NIL;
        out.push(HeadIo { batch, sector, pages: 1, members: ios, write, way, p, q });
    }

    /// The member I/O of `batch` completed: reads make pages up to date and the heads are
    /// handled again; writes end, and bios whose every head is written are listed for
    /// [`StripeCache::take_completed`].
    pub fn batch_done(&mut self, batch: u32) {
        let (mut index, _) = std::mem::replace(&mut self.batches[batch as usize], (NIL, NIL));
        debug_assert!(index != NIL, "batch {batch} done twice");
        while index != NIL {
            let next = self.heads[index as usize].next_in_batch;
            self.head_io_done(index);
            index = next;
        }
        self.free_batches.push(batch);
        self.wake();
    }

    /// One head of a completed batch.
    fn head_io_done(&mut self, index: u32) {
        let head = &mut self.heads[index as usize];
        // A failed member's block is computed from the others (compute_block).
        let computed = if head.way == RowWay::Reconstruct { self.all_members } else { 0 };
        head.uptodate |= head.in_flight | computed;
        head.in_flight = 0;
        let was = std::mem::replace(&mut head.busy, Busy::Idle);
        if was == Busy::Writing {
            if std::mem::take(&mut head.full_write) {
                self.pending_full_writes -= 1;
            }
            let mut bios = std::mem::take(&mut head.writing_bios);
            for bio in bios.iter() {
                if self.unref_bio(bio) {
                    self.completed.push(bio);
                }
            }
            bios.clear();
            self.heads[index as usize].writing_bios = bios;
        }
        // raid5_end_read_request/raid5_end_write_request set STRIPE_HANDLE and release the
        // head: raid5d handles it next (handle_stripe completes the writes,
        // handle_stripe_clean_event) and only then may it go inactive, in handle-list
        // order behind the heads queued before it.
        let head = &mut self.heads[index as usize];
        if !head.queued && !head.on_hold {
            head.queued = true;
            self.handle_list.push_back(index);
        }
    }

    /// `do_release_stripe`: an idle head with nothing to do goes to its list's tail. Inlined
    /// into `handle_head`, its one caller.
    #[inline(always)]
    fn release(&mut self, index: u32) {
        let head = &self.heads[index as usize];
        if head.inactive || head.busy != Busy::Idle || head.towrite != 0 || head.queued {
            return;
        }
        self.push_back(index);
        self.active -= 1;
        // raid5d's `release_stripe_list` released a head: R5_DID_ALLOC is cleared.
        self.did_alloc = false;
    }

    fn push_back(&mut self, index: u32) {
        let bucket = self.heads[index as usize].bucket as usize;
        let back = self.lists[bucket].back;
        {
            let head = &mut self.heads[index as usize];
            head.inactive = true;
            head.prev = back;
            head.next = NIL;
        }
        if back == NIL {
            self.lists[bucket].front = index;
        } else {
            self.heads[back as usize].next = index;
        }
        self.lists[bucket].back = index;
        self.lists[bucket].len += 1;
    }

    fn unlink(&mut self, index: u32) {
        let (bucket, prev, next) = {
            let head = &mut self.heads[index as usize];
            debug_assert!(head.inactive);
            head.inactive = false;
            (head.bucket as usize, std::mem::replace(&mut head.prev, NIL), std::mem::replace(&mut head.next, NIL))
        };
        if prev == NIL { self.lists[bucket].front = next } else { self.heads[prev as usize].next = next }
        if next == NIL { self.lists[bucket].back = prev } else { self.heads[next as usize].prev = prev }
        self.lists[bucket].len -= 1;
    }

    /// The cache's invariants; panics with the first broken one. Tests call it after every step.
    pub fn check(&self) {
        let size = self.heads.len() as u32;
        assert!(self.active <= size, "active {} > size {size}", self.active);
        let inactive: u32 = self.lists.iter().map(|l| l.len).sum();
        assert_eq!(inactive + self.active, size, "heads neither active nor inactive");
        for (bucket, list) in self.lists.iter().enumerate() {
            let (mut index, mut count, mut prev) = (list.front, 0, NIL);
            while index != NIL {
                let head = &self.heads[index as usize];
                assert!(head.inactive && head.bucket as usize == bucket && head.prev == prev, "list {bucket} broken");
                (prev, index, count) = (index, head.next, count + 1);
            }
            assert_eq!((count, prev), (list.len, list.back), "list {bucket} length or tail");
        }
        let mut refs = vec![0u32; self.bio_refs.len()];
        for pending in self.sleepers.iter().chain(&self.backlog) {
            refs[pending.bio.id as usize] += 1;
        }
        for (i, pending) in self.sleepers.iter().enumerate() {
            let submitter = pending.bio.submitter;
            assert!(!self.sleepers[..i].iter().any(|p| p.bio.submitter == submitter), "a thread asleep twice");
        }
        for pending in &self.backlog {
            let submitter = pending.bio.submitter;
            assert!(self.sleepers.iter().any(|p| p.bio.submitter == submitter), "a bio waits behind a thread that is awake");
        }
        for (index, head) in self.heads.iter().enumerate() {
            if head.sector == NO_SECTOR {
                assert!(head.towrite == 0 && head.uptodate == 0 && head.busy == Busy::Idle, "a free head holds pages");
            } else {
                assert_eq!(self.map.get(&head.sector), Some(&(index as u32)), "head {index} not found by its sector");
                assert_eq!(bucket_of(head.sector), head.bucket as usize, "head {index} in another hash");
            }
            if head.inactive {
                assert!(head.towrite == 0 && head.busy == Busy::Idle && !head.queued, "an inactive head has work");
            }
            assert!(!head.on_plug || head.queued, "a head on the plug's list not queued");
            assert_eq!(head.overwrite & !head.towrite, 0, "overwrite outside towrite");
            match head.busy {
                Busy::Idle => assert!(head.in_flight == 0 && head.writing_bios.is_empty()),
                Busy::Reading => assert!(head.in_flight & head.uptodate == 0 && head.in_flight != 0, "reading a page up to date"),
                Busy::Writing => assert!(head.in_flight != 0),
            }
            for bio in head.bios.iter().chain(head.writing_bios.iter()) {
                refs[bio as usize] += 1;
            }
        }
        assert_eq!(self.map.len(), self.heads.iter().filter(|h| h.sector != NO_SECTOR).count());
        assert_eq!(self.plug_list.len() as u32, self.heads.iter().filter(|h| h.on_plug).count() as u32, "plug list");
        assert!(self.plug_list.iter().all(|&i| self.heads[i as usize].on_plug), "a head on the plug list twice");
        let count = |f: fn(&Head) -> bool| self.heads.iter().filter(|h| f(h)).count() as u32;
        assert_eq!(self.preread_active, count(|h| h.preread_active), "preread_active_stripes");
        assert_eq!(self.pending_full_writes, count(|h| h.full_write), "pending_full_writes");
        assert_eq!(self.held, count(|h| h.on_hold), "heads on the hold list");
        for head in self.heads.iter().filter(|h| h.on_hold) {
            assert!(!head.inactive && !head.queued && !head.delayed, "a held head on another list");
        }
        for head in self.heads.iter().filter(|h| h.delayed) {
            assert!(!head.inactive && head.busy == Busy::Idle && head.towrite != 0, "a delayed head with nothing to pre-read for");
        }

        for (bio, (&counted, &held)) in refs.iter().zip(&self.bio_refs).enumerate() {
            assert_eq!(counted, held, "bio {bio}: {held} references held, {counted} found");
        }
        self.check_batches();
    }

    /// Every head with I/O in flight is linked into exactly one batch, ending at its tail.
    fn check_batches(&self) {
        let mut linked = 0;
        for (batch, &(first, last)) in self.batches.iter().enumerate() {
            let (mut index, mut tail) = (first, NIL);
            while index != NIL {
                assert!(self.heads[index as usize].busy != Busy::Idle, "idle head {index} in batch {batch}");
                (tail, index, linked) = (index, self.heads[index as usize].next_in_batch, linked + 1);
            }
            assert_eq!(tail, last, "batch {batch}'s tail");
        }
        assert_eq!(linked, self.heads.iter().filter(|h| h.busy != Busy::Idle).count(), "heads in flight outside a batch");
    }
}

/// The data members of stripe row `row` as the layout lists them (the reference `get_head`'s
/// mask is checked against).
fn data_mask_of(array: &Array, row: u64) -> u64 {
    let stripe = array.stripe(row).expect("a raid4/5/6 row");
    stripe.data_members().iter().fold(0, |m, &d| m | 1 << d)
}

/// `stripe_hash_locks_hash`: the inactive list of a member sector.
fn bucket_of(sector: u64) -> usize {
    ((sector / PAGE_SECTORS) % HASH_LISTS as u64) as usize
}

#[cfg(test)]
mod tests;
