//! The on-drive buffer: read segments with read-ahead, and the write cache's dirty set.
//!
//! Modelled after the segmented buffers DiskSim describes (Number of buffer segments, Segment
//! size, Maximum read-ahead, Fast write level; DiskSim 4.0 manual §3.4) and Ruemmler & Wilkes'
//! "read-ahead" and "immediate-reported writes" (IEEE Computer 1994, §"Data caching").

use super::mech::Target;
use crate::time::Nanos;

/// One read segment: a window `[start, valid)` of data in the buffer, and the read-ahead
/// target `target ≥ valid` the drive keeps reading towards while it has nothing better to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub start: u64,
    pub valid: u64,
    pub target: u64,
    /// Last use, for LRU replacement.
    pub stamp: u64,
}

impl Segment {
    fn check(&self) {
        assert!(
            self.start <= self.valid && self.valid <= self.target,
            "segment {self:?}"
        );
    }
}

/// The read segments and which one (if any) has read-ahead pending.
#[derive(Clone, Debug)]
pub struct ReadCache {
    segments: Vec<Segment>,
    segment_sectors: u64,
    read_ahead_sectors: u64,
    capacity_sectors: u64,
    clock: u64,
    /// The segment the drive is reading ahead into.
    active: Option<usize>,
}

impl ReadCache {
    pub fn new(
        segments: u32,
        segment_sectors: u64,
        read_ahead_sectors: u64,
        capacity_sectors: u64,
    ) -> ReadCache {
        assert!(read_ahead_sectors <= segment_sectors);
        ReadCache {
            segments: vec![Segment::default(); segments as usize],
            segment_sectors,
            read_ahead_sectors,
            capacity_sectors,
            clock: 0,
            active: None,
        }
    }

    pub fn active(&self) -> Option<usize> {
        self.active
    }

    pub fn segment(&self, index: usize) -> &Segment {
        &self.segments[index]
    }

    /// The active segment, if it still has read-ahead to do.
    pub fn pending(&self) -> Option<usize> {
        self.active
            .filter(|&i| self.segments[i].valid < self.segments[i].target)
    }

    /// A segment holding all of `[lba, end)` already.
    pub fn full_hit(&self, lba: u64, end: u64) -> Option<usize> {
        // Every segment is tested and the first hit kept by a select: whether a random read
        // starts after a segment's start is a coin toss, and as a branch (an early exit on
        // `&&`, or on `&`, which the compiler splits into two branches again) it mispredicted
        // often enough to cost 4 % of the raid5 benchmark's time.
        let mut found = usize::MAX;
        for (i, s) in self.segments.iter().enumerate().rev() {
            found = std::hint::select_unpredictable((s.start <= lba) & (end <= s.valid), i, found);
        }
        (found != usize::MAX).then_some(found)
    }

    /// The active segment if `lba` continues the stream it reads ahead on (even if the
    /// read-ahead has reached its target: the hit moves the target on and streaming resumes).
    pub fn stream_hit(&self, lba: u64) -> Option<usize> {
        if self.read_ahead_sectors == 0 {
            return None;
        }
        self.active.filter(|&i| {
            let s = &self.segments[i];
            s.start <= lba && lba <= s.target
        })
    }

    /// Whether a hit on segment `index` may (re)start read-ahead there: always while that
    /// segment is being read ahead into; after read-ahead stopped only if `on_idle_hit`
    /// (DiskSim's "Read-ahead on idle hit") and no other segment is reading ahead.
    pub fn may_read_ahead(&self, index: usize, on_idle_hit: bool) -> bool {
        self.read_ahead_sectors > 0
            && (self.pending() == Some(index)
                || (on_idle_hit && (self.active.is_none() || self.active == Some(index))))
    }

    /// Marks a hit on `[lba, end)`: refreshes LRU and, with a read-ahead `target` (see
    /// [`ReadCache::may_read_ahead`]), moves the read-ahead target there so a sequential stream
    /// keeps streaming.
    pub fn touch(&mut self, index: usize, target: Option<u64>) {
        self.clock += 1;
        let (seg_len, cap) = (self.segment_sectors, self.capacity_sectors);
        let s = &mut self.segments[index];
        s.stamp = self.clock;
        if let Some(target) = target {
            s.target = s.target.max(target.min(cap));
            // Keep at most one segment of data: drop what the host has already consumed.
            s.start = s.start.max(s.target.saturating_sub(seg_len)).min(s.valid);
            self.active = Some(index);
        }
        s.check();
    }

    /// After a media read of `[lba, end)` (a miss): keep its tail and read ahead to `target`
    /// (at most one segment beyond the data; `end` for none).
    pub fn fill_after_miss(&mut self, lba: u64, end: u64, target: u64) {
        if self.segments.is_empty() {
            return;
        }
        self.clock += 1;
        let index = self.replacement(lba);
        let (ra, seg_len, cap) = (
            self.read_ahead_sectors,
            self.segment_sectors,
            self.capacity_sectors,
        );
        let target = if ra == 0 { end } else { target.clamp(end, cap) };
        let start = lba
            .max(end.saturating_sub(seg_len))
            .max(target.saturating_sub(seg_len))
            .min(end);
        self.segments[index] = Segment {
            start,
            valid: end,
            target,
            stamp: self.clock,
        };
        self.active = (target > end).then_some(index);
    }

    /// The segment a write of `[lba, end)` takes, when writes share the read segments (the
    /// caller drops overlapping segments first, so they are among the empty ones).
    pub fn write_victim(&self) -> Option<usize> {
        (0..self.segments.len()).min_by_key(|&i| self.segments[i].stamp)
    }

    /// Puts a write's data in segment `index`: readable by later reads if `readable`, else it
    /// only occupies the segment. The segment holds no read-ahead.
    pub fn hold_write(&mut self, index: usize, lba: u64, end: u64, readable: bool) {
        self.clock += 1;
        if self.active == Some(index) {
            self.active = None;
        }
        let start = lba.max(end.saturating_sub(self.segment_sectors));
        let valid = if readable { end } else { start };
        self.segments[index] = Segment { start, valid, target: valid, stamp: self.clock };
    }

    /// A segment that already covers `lba` (reuse it), else the least recently used one.
    fn replacement(&self, lba: u64) -> usize {
        let (mut oldest, mut oldest_stamp) = (0, u64::MAX);
        for (i, s) in self.segments.iter().enumerate() {
            // Non-short-circuit `&`: one branch per segment instead of three.
            if (s.start <= lba) & (lba <= s.target) & (s.target > s.start) {
                return i;
            }
            if s.stamp < oldest_stamp {
                (oldest, oldest_stamp) = (i, s.stamp);
            }
        }
        oldest
    }

    /// Read-ahead ended short (pre-empted): the target falls back to what was read.
    pub fn abandon(&mut self) {
        if let Some(i) = self.active.take() {
            let s = &mut self.segments[i];
            s.target = s.valid;
        }
    }

    /// Read-ahead brought `sectors` more sectors into the active segment.
    pub fn commit(&mut self, index: usize, sectors: u64) {
        let seg_len = self.segment_sectors;
        let s = &mut self.segments[index];
        s.valid += sectors;
        assert!(s.valid <= s.target, "read-ahead past its target: {s:?}");
        s.start = s.start.max(s.valid.saturating_sub(seg_len));
        s.check();
    }

    /// Drops segments overlapping `[lba, end)` (a write made them stale). Returns true if the
    /// active segment was among them, so the caller can stop its read-ahead.
    pub fn invalidate(&mut self, lba: u64, end: u64) -> bool {
        let mut hit_active = false;
        for (i, s) in self.segments.iter_mut().enumerate() {
            // Branch-free, as in `full_hit`: every segment is rewritten, with itself unless
            // it overlaps, and then with the default, all zero: field by field, each a
            // conditional move (a `select_unpredictable` of the whole segment copied it through
            // the stack, three times the instructions; masking the fields, LLVM made a branch).
            let stale = (s.start < end) & (lba < s.target.max(s.valid));
            hit_active |= stale & (self.active == Some(i));
            let zero_if_stale = |field: u64| std::hint::select_unpredictable(stale, 0, field);
            (s.start, s.valid, s.target, s.stamp) =
                (zero_if_stale(s.start), zero_if_stale(s.valid), zero_if_stale(s.target), zero_if_stale(s.stamp));
            debug_assert!(!stale || *s == Segment::default());
        }
        if hit_active {
            self.active = None;
        }
        hit_active
    }
}

/// One dirty extent's length, and the physical place of its first sector, computed whenever
/// the extent gets a new start (by the `place` its caller passes: the drive's geometry), so
/// the destage choice finds every extent placed. Its start is kept apart, in
/// [`DirtySet::starts`].
///
/// Placing on insert costs a location for some extents that merge away before any destage
/// sees them, but the choice no longer tests, per extent in its window, whether it was
/// placed: new extents are scattered at random through the window, and that test mispredicted
/// often enough to cost 4–5 % of the raid5 benchmark's time.
#[derive(Clone, Copy, Debug)]
struct Extent {
    len: u32,
    target: Target,
}

impl Extent {
    fn new(start: u64, end: u64, target: Target) -> Extent {
        let len = u32::try_from(end - start).expect("dirty extents are shorter than the buffer");
        Extent { len, target }
    }
}

/// Acknowledged writes not yet on media: disjoint, non-adjacent extents coalesced on insert,
/// in vectors sorted by start (the buffer holds at most a few hundred; a binary search and a
/// short move beat a B-tree's node walks at that size). The starts, which every search walks,
/// are a vector of their own (8 bytes a slot: the search's first steps keep to a few cache
/// lines), beside the rest of each extent.
///
/// A destage that takes a whole extent leaves its slot as a hole (length 0; its start and
/// placed target kept, as the sort key) instead of moving the tail down, and an insert fills
/// the nearest hole, moving only the extents between it and the insertion point. A full buffer
/// destages and inserts in turn, so a few holes are always about: in the raid benchmarks
/// (~190 extents) an insert moves ~25 extents and a destage none, where a plain sorted vector
/// moved ~95 for each. Invariant: every live extent before a hole ends before the hole's
/// start, so a hole never merges with a live extent and a search that lands on one finds no
/// cover.
#[derive(Clone, Debug, Default)]
pub struct DirtySet {
    /// Each slot's first sector (a hole's too), ascending.
    starts: Vec<u64>,
    /// Each slot's length and target (a hole has length 0).
    extents: Vec<Extent>,
    /// Indices of the holes in `extents`, ascending (at most [`MAX_HOLES`]).
    holes: Vec<usize>,
    sectors: u64,
    /// Sectors being written to media right now (already removed from `extents`).
    inflight: u64,
    capacity: u64,
}

/// Holes kept before the set compacts (drops them all in one pass): enough for a run of
/// destages while a flush drains the buffer, few enough that finding the nearest is cheap.
const MAX_HOLES: usize = 8;

/// The extent [`DirtySet::cheapest`] chose, `[start, end)` at `index`: valid for
/// [`DirtySet::take`] until the set next changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    index: usize,
    pub start: u64,
    pub end: u64,
}

impl DirtySet {
    pub fn new(capacity: u64) -> DirtySet {
        DirtySet {
            capacity,
            ..DirtySet::default()
        }
    }
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// Dirty sectors, including those being destaged.
    pub fn sectors(&self) -> u64 {
        self.sectors + self.inflight
    }
    /// Dirty extents (not counting holes).
    pub fn extents(&self) -> usize {
        self.extents.len() - self.holes.len()
    }
    pub fn is_clean(&self) -> bool {
        self.sectors == 0 && self.inflight == 0
    }
    pub fn has_queued(&self) -> bool {
        self.sectors > 0
    }
    /// Room for `sectors` more (counting them as new even if they overlap dirty data).
    pub fn fits(&self, sectors: u64) -> bool {
        self.sectors() + sectors <= self.capacity
    }
    /// Above three quarters full: destage even while host reads wait (a high watermark).
    pub fn above_high_water(&self) -> bool {
        self.sectors() * 4 > self.capacity * 3
    }

    /// End of the extent in slot `i` (a hole's is its start).
    #[inline(always)]
    fn end(&self, i: usize) -> u64 {
        self.starts[i] + self.extents[i].len as u64
    }

    /// Index of the first extent (or hole) starting after `sector`.
    fn after(&self, sector: u64) -> usize {
        self.starts.partition_point(|&s| s <= sector)
    }

    /// Adds `[start, end)`, merging with overlapping or adjacent extents; `place` puts a
    /// sector on the platter (called only for a new start).
    pub fn insert(&mut self, start: u64, end: u64, place: impl Fn(u64) -> Target) {
        assert!(start < end);
        let (mut start, mut end, mut kept) = (start, end, None);
        let mut lo = self.after(start);
        // An extent that starts at or before `start` and reaches it keeps its start (and target);
        // so does a hole that starts exactly there (its target is that sector's).
        if lo > 0 && self.end(lo - 1) >= start {
            lo -= 1;
            start = self.starts[lo];
            end = end.max(self.end(lo));
            kept = Some(self.extents[lo].target);
        }
        // Extents are disjoint with gaps between them, so those merged (and holes dropped)
        // are exactly the ones starting within the (possibly grown) range.
        let mut hi = lo;
        while self.starts.get(hi).is_some_and(|&s| s <= end) {
            self.sectors -= self.extents[hi].len as u64;
            end = end.max(self.end(hi));
            hi += 1;
        }
        self.sectors += end - start;
        let extent = Extent::new(start, end, kept.unwrap_or_else(|| place(start)));
        let at = if hi == lo { self.open(lo, extent) } else { self.merge(lo, hi) };
        self.starts[at] = start;
        self.extents[at] = extent;
    }

    /// A free slot for `extent`, sorting between slots `lo - 1` and `lo`: the nearest hole,
    /// with the extents between it and `lo` moved over by one; else a new slot at `lo`, made
    /// with `extent` (the caller writes the slot's start and extent either way).
    fn open(&mut self, lo: usize, extent: Extent) -> usize {
        let k = self.holes.partition_point(|&h| h < lo);
        // The nearest hole at or after `lo` (index k) or before it (k - 1).
        let after = self.holes.get(k).map(|&h| h - lo);
        let before = k.checked_sub(1).map(|k| lo - 1 - self.holes[k]);
        match (before, after) {
            (None, None) => {
                self.starts.insert(lo, 0);
                self.extents.insert(lo, extent);
                lo
            }
            (Some(b), a) if a.is_none_or(|a| b < a) => {
                let h = self.holes.remove(k - 1);
                self.starts.copy_within(h + 1..lo, h);
                self.extents.copy_within(h + 1..lo, h);
                lo - 1
            }
            _ => {
                let h = self.holes.remove(k);
                self.starts.copy_within(lo..h, lo + 1);
                self.extents.copy_within(lo..h, lo + 1);
                lo
            }
        }
    }

    /// Slots `lo..hi` become one at `lo`: holes among them are filled, later ones move down.
    fn merge(&mut self, lo: usize, hi: usize) -> usize {
        let gone = hi - lo - 1;
        if !self.holes.is_empty() {
            self.holes.retain_mut(|h| {
                let keep = *h < lo || *h >= hi;
                if *h >= hi {
                    *h -= gone;
                }
                keep
            });
        }
        if gone > 0 {
            self.starts.drain(lo + 1..hi);
            self.extents.drain(lo + 1..hi);
        }
        lo
    }

    /// True if `[start, end)` is entirely dirty (a read can be served from the buffer).
    pub fn covers(&self, start: u64, end: u64) -> bool {
        let i = self.after(start);
        i > 0 && self.end(i - 1) >= end
    }

    /// Of the first `limit` extents in LBA order from `from`, wrapping around (a C-LOOK
    /// window), the first whose start's place `cost` ranks lowest; None if the set is empty.
    /// The window is walked in place (no copy), and the choice keeps its index so taking from
    /// it needs no search.
    pub fn cheapest(&self, from: u64, limit: usize, cost: impl Fn(&Target) -> Nanos) -> Option<Choice> {
        let n = self.extents.len();
        let split = self.starts.partition_point(|&s| s < from);
        let count = limit.min(self.extents());
        // The window is `count` extents from `split` on, then, wrapping, from 0.
        let k = self.holes.partition_point(|&h| h < split);
        let ahead = count.min(n - split - (self.holes.len() - k));
        let mut best = (usize::MAX, Nanos::MAX);
        self.scan(split, ahead, k, &cost, &mut best);
        self.scan(0, count - ahead, 0, &cost, &mut best);
        let start = *self.starts.get(best.0)?;
        Some(Choice { index: best.0, start, end: self.end(best.0) })
    }

    /// Costs the `count` extents from slot `from` on, in runs between the holes (the first at
    /// or after `from` is `holes[k]`), so each run is a tight loop over a plain slice; `best`
    /// keeps the first lowest cost and its slot.
    #[inline(always)]
    fn scan(&self, mut from: usize, mut count: usize, k: usize, cost: &impl Fn(&Target) -> Nanos, best: &mut (usize, Nanos)) {
        let mut holes = self.holes[k..].iter();
        while count > 0 {
            let run = holes.next().map_or(count, |&h| (h - from).min(count));
            for (i, e) in self.extents[from..from + run].iter().enumerate() {
                let c = cost(&e.target);
                if c < best.1 {
                    *best = (from + i, c);
                }
            }
            // Step over the hole that ended the run.
            (from, count) = (from + run + 1, count - run);
        }
    }

    /// Takes the first `sectors` of the extent `choice` names for destaging (`place` places
    /// the rest's new start, if any is left).
    pub fn take(&mut self, choice: Choice, sectors: u64, place: impl Fn(u64) -> Target) {
        let Choice { index, start, end } = choice;
        let e = self.extents[index];
        assert!(self.starts[index] == start && self.end(index) == end, "a stale choice: {choice:?} for {e:?}");
        assert!(sectors > 0 && start + sectors <= end);
        if start + sectors < end {
            self.starts[index] = start + sectors;
            self.extents[index] = Extent::new(start + sectors, end, place(start + sectors));
        } else {
            self.extents[index].len = 0;
            let k = self.holes.partition_point(|&h| h < index);
            self.holes.insert(k, index);
            if self.holes.len() > MAX_HOLES {
                self.compact();
            }
        }
        self.sectors -= sectors;
        self.inflight += sectors;
    }

    /// Drops the holes.
    fn compact(&mut self) {
        let mut kept = 0;
        for i in 0..self.extents.len() {
            if self.extents[i].len > 0 {
                (self.starts[kept], self.extents[kept]) = (self.starts[i], self.extents[i]);
                kept += 1;
            }
        }
        self.starts.truncate(kept);
        self.extents.truncate(kept);
        self.holes.clear();
    }

    /// Panics unless the slots are sorted, live extents disjoint and non-adjacent, every hole
    /// listed once and past the end of every live extent before it, every slot's target
    /// where `place` puts its start, and the sectors add up.
    #[cfg(test)]
    fn check(&self, place: impl Fn(u64) -> Target) {
        let holes: Vec<usize> = (0..self.extents.len()).filter(|&i| self.extents[i].len == 0).collect();
        assert_eq!(holes, self.holes, "holes, ascending");
        assert_eq!(self.starts.len(), self.extents.len(), "a start for every slot");
        let mut reach: Option<u64> = None; // end of the last live extent
        for w in self.starts.windows(2) {
            assert!(w[0] < w[1], "sorted: {w:?}");
        }
        for (i, (&start, e)) in self.starts.iter().zip(&self.extents).enumerate() {
            assert_eq!(e.target, place(start), "the target of slot {i} (start {start})");
            if let Some(r) = reach {
                assert!(r < start, "live extents end before what follows: {start} {e:?}");
            }
            if e.len > 0 {
                reach = Some(self.end(i));
            }
        }
        assert_eq!(self.sectors, self.extents.iter().map(|e| e.len as u64).sum::<u64>());
    }

    /// A destage of `sectors` reached the media.
    pub fn landed(&mut self, sectors: u64) {
        assert!(self.inflight >= sectors);
        self.inflight -= sectors;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_extents_coalesce() {
        let place = |lba: u64| Target { cylinder: 0, head: 0, angle: lba as u32 };
        let mut dirty = DirtySet::new(1000);
        dirty.insert(10, 20, place);
        dirty.insert(30, 40, place);
        dirty.insert(20, 30, place);
        assert_eq!(dirty.extents(), 1);
        assert_eq!(dirty.sectors(), 30);
        dirty.insert(5, 12, place);
        dirty.insert(38, 45, place);
        assert_eq!((dirty.extents(), dirty.sectors()), (1, 40));
        assert!(dirty.covers(5, 45) && !dirty.covers(4, 6));
        let first = dirty.cheapest(0, 16, |_| 0);
        dirty.take(first.expect("an extent"), 15, place);
        dirty.check(place);
        assert_eq!(dirty.sectors(), 40);
        dirty.landed(15);
        assert_eq!(dirty.sectors(), 25);
        assert!(dirty.covers(20, 45));
    }

    /// A whole destage leaves a hole: searches and the destage window pass over it, an insert
    /// at its start takes its slot, and a merge across it drops it.
    #[test]
    fn destaged_extents_leave_holes() {
        let place = |lba: u64| Target { cylinder: 0, head: 0, angle: lba as u32 };
        let mut dirty = DirtySet::new(1000);
        for s in [10, 30, 50, 70] {
            dirty.insert(s, s + 5, place);
        }
        let c = dirty.cheapest(30, 1, |_| 0).expect("an extent");
        assert_eq!((c.start, c.end), (30, 35));
        dirty.take(c, 5, place);
        dirty.landed(5);
        dirty.check(place);
        assert_eq!((dirty.extents(), dirty.extents.len()), (3, 4));
        assert!(!dirty.covers(30, 31) && dirty.covers(10, 15));
        let c = dirty.cheapest(20, 1, |_| 0).expect("an extent");
        assert_eq!(c.start, 50, "the window skips the hole");
        dirty.insert(30, 32, place);
        dirty.check(place);
        assert_eq!((dirty.extents(), dirty.extents.len()), (4, 4), "the insert filled the hole");
        let c = dirty.cheapest(30, 1, |_| 0).expect("an extent");
        dirty.take(c, 2, place);
        dirty.landed(2);
        dirty.insert(12, 52, place);
        dirty.check(place);
        assert_eq!((dirty.extents(), dirty.extents.len(), dirty.sectors()), (2, 2, 50));
    }

    /// With several segments holding a range, a hit names the first; a write drops every
    /// segment it overlaps (and only those), and says whether read-ahead's segment was one.
    #[test]
    fn hits_take_the_first_segment_and_writes_drop_every_overlap() {
        let mut cache = ReadCache::new(4, 100, 50, 10_000);
        cache.hold_write(1, 0, 40, true);
        cache.hold_write(2, 10, 60, true);
        cache.hold_write(3, 500, 540, true);
        assert_eq!(cache.full_hit(10, 40), Some(1), "both 1 and 2 hold it: the first");
        assert_eq!(cache.full_hit(40, 60), Some(2));
        assert_eq!(cache.full_hit(30, 70), None, "no one segment holds it all");
        cache.fill_after_miss(700, 710, 760);
        assert_eq!(cache.pending(), Some(0));
        assert!(!cache.invalidate(35, 45), "read-ahead's segment untouched");
        assert_eq!((cache.full_hit(10, 20), cache.full_hit(500, 540)), (None, Some(3)));
        assert!(cache.invalidate(705, 706));
        assert_eq!((cache.pending(), cache.full_hit(700, 710)), (None, None));
        assert_eq!(cache.full_hit(500, 540), Some(3), "a segment outside every write stays");
    }

    #[test]
    fn read_ahead_window_slides() {
        let mut cache = ReadCache::new(2, 100, 50, 10_000);
        cache.fill_after_miss(0, 40, 90);
        assert_eq!(cache.pending(), Some(0));
        assert_eq!(
            *cache.segment(0),
            Segment {
                start: 0,
                valid: 40,
                target: 90,
                stamp: 1
            }
        );
        cache.commit(0, 50);
        assert_eq!(cache.full_hit(40, 90), Some(0));
        // Read-ahead reached its target: only a drive that reads ahead on idle hits goes on.
        assert!(cache.may_read_ahead(0, true) && !cache.may_read_ahead(0, false));
        cache.touch(0, Some(140));
        let s = *cache.segment(0);
        assert_eq!((s.start, s.valid, s.target), (40, 90, 140));
        assert!(cache.invalidate(100, 101));
        assert_eq!(cache.pending(), None);
    }

    /// The dirty set against a plain model (a B-tree of coalesced extents) under random
    /// inserts, destages and lookups.
    #[test]
    fn dirty_set_matches_a_btree_model() {
        use std::collections::BTreeMap;
        let place = |lba: u64| Target {
            cylinder: (lba / 1000) as u32,
            head: (lba % 7) as u32,
            angle: (lba % 997) as u32,
        };
        let mut prng = crate::rng::Prng::new(11);
        for round in 0..20 {
            let mut dirty = DirtySet::new(u32::MAX as u64);
            let mut model: BTreeMap<u64, u64> = BTreeMap::new();
            let span = 200 + 400 * round;
            for _ in 0..3000 {
                match prng.below(10) {
                    0..=3 => {
                        let start = prng.below(span);
                        let end = start + 1 + prng.below(20);
                        dirty.insert(start, end, place);
                        let (mut s, mut e) = (start, end);
                        let overlapping: Vec<(u64, u64)> = model
                            .range(..=end)
                            .filter(|&(&a, &b)| b >= start && a <= end)
                            .map(|(&a, &b)| (a, b))
                            .collect();
                        for (a, b) in overlapping {
                            model.remove(&a);
                            s = s.min(a);
                            e = e.max(b);
                        }
                        model.insert(s, e);
                    }
                    4..=6 if !model.is_empty() => {
                        let from = prng.below(span);
                        // Few distinct costs, so ties (won by the earlier extent) are common.
                        let salt = prng.below(1000);
                        let cost = |t: &Target| (t.angle as u64 * 31 + salt) % 13;
                        let choice = dirty.cheapest(from, 16, cost).expect("a dirty extent");
                        let window: Vec<(u64, u64)> =
                            model.range(from..).chain(model.range(..from)).take(16).map(|(&a, &b)| (a, b)).collect();
                        let cheapest = window.iter().map(|&(a, _)| cost(&place(a))).min().unwrap();
                        let expected = window.iter().find(|&&(a, _)| cost(&place(a)) == cheapest).unwrap();
                        assert_eq!((choice.start, choice.end), *expected);
                        let (start, end) = (choice.start, choice.end);
                        let sectors = 1 + prng.below(end - start);
                        dirty.take(choice, sectors, place);
                        dirty.landed(sectors);
                        model.remove(&start);
                        if start + sectors < end {
                            model.insert(start + sectors, end);
                        }
                    }
                    _ => {
                        let start = prng.below(span);
                        let end = start + 1 + prng.below(8);
                        let covered = model.range(..=start).next_back().is_some_and(|(_, &b)| b >= end);
                        assert_eq!(dirty.covers(start, end), covered, "[{start}, {end})");
                    }
                }
                dirty.check(place);
                assert_eq!(dirty.extents(), model.len());
                assert_eq!(dirty.sectors(), model.iter().map(|(a, b)| b - a).sum::<u64>());
            }
        }
    }
}
