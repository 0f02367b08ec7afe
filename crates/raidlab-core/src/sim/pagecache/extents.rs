//! The page cache's pages as runs of equal state: `[start, end)` page ranges, each with a state
//! and a stamp, so a sequential stream of gigabytes is a handful of entries, not one object per
//! 4 KiB page (the kernel keeps one `struct page` per page in the file's xarray; the simulator
//! needs only what those pages' flags say).

use std::collections::{BTreeMap, BTreeSet};

/// A page's state: the page flags that matter here (include/linux/page-flags.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Locked and not up to date: a read into it is in flight (PG_locked, !PG_uptodate).
    Reading,
    /// Up to date and clean: reclaimable.
    Clean,
    /// PG_dirty: written by the host, not yet under writeback.
    Dirty,
    /// PG_writeback: its write to the device is in flight.
    Writeback,
}

impl PageState {
    pub const ALL: [PageState; 4] = [PageState::Reading, PageState::Clean, PageState::Dirty, PageState::Writeback];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// One run of pages. `stamp`: for clean pages their LRU epoch; for dirty and writeback pages the
/// earliest time (ns) one of them was dirtied (fsync waits for pages dirtied before it began).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub end: u64,
    pub state: PageState,
    pub stamp: u64,
}

/// Page counts by state, as a change (`set` returns one) or a total.
pub type Counts = [i64; 4];

#[derive(Debug, Default)]
pub struct Extents {
    runs: BTreeMap<u64, Run>,
    counts: [u64; 4],
    /// Starts of dirty runs (the flusher finds the next dirty page without walking clean ones:
    /// the kernel's PAGECACHE_TAG_DIRTY on the xarray).
    dirty: BTreeSet<u64>,
    /// Dirty and writeback runs by (stamp, start): fsync asks whether any page dirtied before
    /// it began is still unstable.
    unstable: BTreeSet<(u64, u64)>,
}

impl Extents {
    pub fn count(&self, state: PageState) -> u64 {
        self.counts[state.index()]
    }

    pub fn resident(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Runs overlapping `[start, end)`, clipped to it, as `(start, end, run)`.
    pub fn overlapping(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u64, Run)> + '_ {
        let first = self.runs.range(..=start).next_back().filter(|(_, r)| r.end > start).map(|(&s, _)| s).unwrap_or(start);
        self.runs.range(first..end).map(move |(&s, &r)| (s.max(start), r.end.min(end), r))
    }

    /// Every run, in page order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, Run)> + '_ {
        self.runs.iter().map(|(&s, &r)| (s, r))
    }

    /// Whether every page of `[start, end)` is present and up to date (not being read).
    pub fn uptodate(&self, start: u64, end: u64) -> bool {
        let mut at = start;
        for (s, e, run) in self.overlapping(start, end) {
            if s != at || run.state == PageState::Reading {
                return false;
            }
            at = e;
        }
        at >= end
    }

    /// The gaps (absent pages) of `[start, end)`, in order.
    pub fn gaps(&self, start: u64, end: u64, out: &mut Vec<(u64, u64)>) {
        let mut at = start;
        for (s, e, _) in self.overlapping(start, end) {
            if s > at {
                out.push((at, s));
            }
            at = e;
        }
        if at < end {
            out.push((at, end));
        }
    }

    /// Sets each page of `[start, end)` to `f(its state)` (`None`: absent, or evicted when
    /// returned). Returns the change in page counts.
    pub fn set(&mut self, start: u64, end: u64, f: impl Fn(Option<(PageState, u64)>) -> Option<(PageState, u64)>) -> Counts {
        assert!(start < end, "an empty page range");
        // Pages of one run that `f` leaves as they are (a rewrite of dirty pages, a hit).
        if let Some((_, run)) = self.runs.range(..=start).next_back() {
            if run.end >= end && f(Some((run.state, run.stamp))) == Some((run.state, run.stamp)) {
                return [0; 4];
            }
        }
        if let Some(delta) = self.append(start, end, &f) {
            return delta;
        }
        self.split_at(start);
        self.split_at(end);
        let mut pieces: Vec<(u64, u64, Option<(PageState, u64)>)> = Vec::new();
        let mut at = start;
        let old: Vec<(u64, Run)> = self.runs.range(start..end).map(|(&s, &r)| (s, r)).collect();
        let mut delta = [0i64; 4];
        for (s, run) in old {
            if s > at {
                pieces.push((at, s, f(None)));
            }
            self.remove_run(s);
            delta[run.state.index()] -= (run.end - s) as i64;
            pieces.push((s, run.end, f(Some((run.state, run.stamp)))));
            at = run.end;
        }
        if at < end {
            pieces.push((at, end, f(None)));
        }
        for (s, e, new) in pieces {
            if let Some((state, stamp)) = new {
                delta[state.index()] += (e - s) as i64;
                self.insert_run(s, Run { end: e, state, stamp });
            }
        }
        self.apply(delta);
        self.merge_around(start, end);
        delta
    }

    /// The common case of a stream: `[start, end)` is absent and follows a run that `f` turns
    /// absent pages into; that run grows.
    fn append(&mut self, start: u64, end: u64, f: &impl Fn(Option<(PageState, u64)>) -> Option<(PageState, u64)>) -> Option<Counts> {
        if self.runs.range(start..end).next().is_some() {
            return None;
        }
        let (&prev_start, &prev) = self.runs.range(..start).next_back()?;
        if prev.end != start {
            return None;
        }
        // The whole range is absent: `f` is asked about absent pages only now.
        let (state, stamp) = f(None)?;
        if !mergeable(&prev, state, stamp) {
            return None;
        }
        let mut grown = Run { end, state, stamp: prev.stamp.min(stamp) };
        if let Some((&next_start, &next)) = self.runs.range(end..).next() {
            if next_start == end && mergeable(&next, state, stamp) {
                self.remove_run(next_start);
                grown = Run { end: next.end, state, stamp: grown.stamp.min(next.stamp) };
            }
        }
        if grown.stamp == prev.stamp {
            self.runs.get_mut(&prev_start).expect("present").end = grown.end;
        } else {
            self.remove_run(prev_start);
            self.insert_run(prev_start, grown);
        }
        let mut delta = [0i64; 4];
        delta[state.index()] = (end - start) as i64;
        self.apply(delta);
        Some(delta)
    }

    fn insert_run(&mut self, start: u64, run: Run) {
        self.index(start, &run, true);
        self.runs.insert(start, run);
    }

    fn remove_run(&mut self, start: u64) -> Run {
        let run = self.runs.remove(&start).expect("a run starts there");
        self.index(start, &run, false);
        run
    }

    fn index(&mut self, start: u64, run: &Run, add: bool) {
        if run.state == PageState::Dirty {
            if add { self.dirty.insert(start) } else { self.dirty.remove(&start) };
        }
        if matches!(run.state, PageState::Dirty | PageState::Writeback) {
            if add { self.unstable.insert((run.stamp, start)) } else { self.unstable.remove(&(run.stamp, start)) };
        }
    }

    /// The first dirty page range at or after `page` and before `end`.
    pub fn next_dirty(&self, page: u64, end: u64) -> Option<(u64, u64)> {
        if page >= end {
            return None;
        }
        if let Some((_, run)) = self.runs.range(..=page).next_back() {
            if run.state == PageState::Dirty && run.end > page {
                return Some((page, run.end.min(end)));
            }
        }
        let &s = self.dirty.range(page..end).next()?;
        Some((s, self.runs[&s].end.min(end)))
    }

    /// Whether any page of `[start, end)` stamped at or before `since` is dirty or under
    /// writeback.
    pub fn unstable_since(&self, start: u64, end: u64, since: u64) -> bool {
        self.unstable.range(..=(since, u64::MAX)).any(|&(_, s)| s < end && self.runs[&s].end > start)
    }

    fn apply(&mut self, delta: Counts) {
        for (count, change) in self.counts.iter_mut().zip(delta) {
            *count = (*count as i64 + change) as u64;
        }
    }

    fn split_at(&mut self, page: u64) {
        let Some((_, run)) = self.runs.range_mut(..page).next_back() else { return };
        if run.end > page {
            let tail = Run { end: run.end, ..*run };
            run.end = page;
            self.insert_run(page, tail);
        }
    }

    /// Joins runs of one state (and, for clean pages, one epoch) inside and around `[start, end)`.
    fn merge_around(&mut self, start: u64, end: u64) {
        let from = self.runs.range(..start).next_back().map_or(start, |(&s, _)| s);
        let keys: Vec<u64> = self.runs.range(from..=end).map(|(&s, _)| s).collect();
        let mut current: Option<u64> = None;
        for key in keys {
            let run = self.runs[&key];
            if let Some(c) = current {
                let head = self.runs[&c];
                if head.end == key && mergeable(&head, run.state, run.stamp) {
                    self.remove_run(key);
                    self.remove_run(c);
                    self.insert_run(c, Run { end: run.end, state: run.state, stamp: head.stamp.min(run.stamp) });
                    continue;
                }
            }
            current = Some(key);
        }
    }

    /// Asserts the runs are disjoint, non-empty, maximal and counted right.
    pub fn check(&self) {
        let mut counts = [0u64; 4];
        let mut prev: Option<(u64, Run)> = None;
        for (&s, run) in &self.runs {
            assert!(run.end > s, "an empty run at page {s}");
            if let Some((_, p)) = prev {
                assert!(p.end <= s, "runs overlap at page {s}");
                assert!(!(p.end == s && mergeable(&p, run.state, run.stamp)), "runs not merged at page {s}");
            }
            counts[run.state.index()] += run.end - s;
            prev = Some((s, *run));
        }
        assert_eq!(counts, self.counts, "page counts drifted");
        let dirty = self.runs.iter().filter(|(_, r)| r.state == PageState::Dirty).count();
        let unstable = self.runs.iter().filter(|(_, r)| matches!(r.state, PageState::Dirty | PageState::Writeback)).count();
        assert_eq!((dirty, unstable), (self.dirty.len(), self.unstable.len()), "run indexes drifted");
        for &(stamp, start) in &self.unstable {
            assert_eq!(self.runs[&start].stamp, stamp, "unstable index stale at page {start}");
        }
    }
}

/// Dirty and writeback runs join whatever their stamps (the earliest is kept); clean runs only
/// within one LRU epoch.
fn mergeable(run: &Run, state: PageState, stamp: u64) -> bool {
    run.state == state && (state != PageState::Clean || run.stamp == stamp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use PageState::*;

    #[test]
    fn a_stream_stays_one_run_and_overwrites_split_and_rejoin() {
        let mut pages = Extents::default();
        for i in 0..1000 {
            pages.set(i * 2, i * 2 + 2, |_| Some((Dirty, 5)));
        }
        assert_eq!((pages.runs(), pages.count(Dirty)), (1, 2000));
        pages.set(100, 200, |s| s.map(|_| (Writeback, 5)));
        assert_eq!((pages.runs(), pages.count(Writeback), pages.count(Dirty)), (3, 100, 1900));
        pages.set(100, 200, |s| s.map(|_| (Dirty, 9)));
        assert_eq!(pages.runs(), 1);
        assert_eq!(pages.overlapping(0, 10).next().unwrap().2.stamp, 5);
        pages.set(1990, 2010, |_| None);
        let mut gaps = Vec::new();
        pages.gaps(1980, 2020, &mut gaps);
        assert_eq!(gaps, vec![(1990, 2020)]);
        assert!(!pages.uptodate(1980, 2000) && pages.uptodate(0, 1990));
        pages.check();
    }
}
