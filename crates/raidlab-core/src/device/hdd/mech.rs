//! The head-disk assembly in time: moving the heads (seek, head switch, write settle), waiting
//! for the platter, and transferring sectors track by track across skewed track boundaries.
//!
//! The platter angle is a pure function of simulated time, `(t + phase) % rev_ns`, with the
//! phase drawn once per drive; every timing here is integer nanoseconds except one seek-curve
//! evaluation, rounded once (Ruemmler & Wilkes 1994: "rotational position" modelled exactly).

use super::geometry::{Geometry, Location};
use super::seek::SeekCurve;
use crate::time::Nanos;
use std::sync::Arc;

/// Where the heads are: cylinder, surface, and the sector after the last one transferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HeadPos {
    pub cylinder: u32,
    pub head: u32,
    pub lba: u64,
}

/// A target for positioning: the physical place of a request's first sector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    pub cylinder: u32,
    pub head: u32,
    /// Angle of the first sector's start, ns of rotation after the index.
    pub angle: u32,
}

/// Result of one media access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// When the arm started moving.
    pub start: Nanos,
    /// When the heads finished moving to the first track (before rotational latency).
    pub moved: Nanos,
    /// When the first sector began passing under the head.
    pub data_start: Nanos,
    /// When the last sector finished.
    pub end: Nanos,
    /// Sectors still to cross the interface once the last one is read: 1 when sectors come
    /// off the media in order; more after a zero-latency read, whose sectors after the landing
    /// point were buffered first and go out behind the ones picked up last.
    pub tail: u32,
    pub pos: HeadPos,
}

/// Seek time in whole nanoseconds for every cylinder distance the drive can move, evaluated
/// once from the curve when the drive is built (a pure function of distance: the table holds
/// exactly what [`SeekCurve::nanos`] returns), so positioning does no floating point. Shared
/// by clones. The table remembers the curve it was evaluated from, so tables can be found
/// equal without comparing their contents.
#[derive(Clone)]
pub struct SeekTable {
    nanos: Arc<[u32]>,
    source: Arc<SeekCurve>,
}

impl SeekTable {
    pub fn new(seek: SeekCurve, cylinders: u32) -> SeekTable {
        let nanos = (0..cylinders.max(1))
            .map(|d| {
                let ns = seek.nanos(d);
                u32::try_from(ns).unwrap_or_else(|_| panic!("seek of {d} cylinders takes {ns} ns"))
            })
            .collect();
        SeekTable { nanos, source: Arc::new(seek) }
    }
    /// The curve the table was evaluated from.
    pub fn curve(&self) -> &SeekCurve {
        &self.source
    }
    #[inline(always)]
    pub fn nanos(&self, distance: u32) -> Nanos {
        self.nanos[distance as usize] as Nanos
    }

    /// Shares the first table in `seen` evaluated from the same curve over as many cylinders
    /// (so with the same contents), else adds this one to `seen`. An array's members are
    /// usually one model, and one table (hundreds of KB for a drive with tens of thousands of
    /// cylinders) stays in cache where six would not. Comparing curves, not tables, keeps this
    /// cheap: the engine does it for every run.
    pub fn share(&mut self, seen: &mut Vec<SeekTable>) {
        let same = |t: &&SeekTable| {
            Arc::ptr_eq(&t.nanos, &self.nanos)
                || (t.nanos.len() == self.nanos.len() && t.source == self.source)
        };
        match seen.iter().find(same) {
            Some(same) => {
                debug_assert!(same.nanos == self.nanos, "equal curves tabulate equally");
                *self = same.clone();
            }
            None => seen.push(self.clone()),
        }
    }
}

impl std::fmt::Debug for SeekTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SeekTable({} distances)", self.nanos.len())
    }
}

/// Mechanical timing for one drive.
#[derive(Clone, Debug)]
pub struct Mechanics {
    pub geo: Geometry,
    /// The seek curve tabulated by distance (what every movement uses), with the curve.
    pub seek_table: SeekTable,
    pub phase: Nanos,
    pub head_switch: Nanos,
    /// Extra settle before writing after any movement; may be negative (DiskSim's "Add. write
    /// settling delay" for drives that settle faster for writes), never making a move negative.
    pub write_settle: i64,
    /// Zero-latency access on the first track of a read / a write (see [`Mechanics::access`]).
    pub zero_latency: [bool; 2],
}

impl Mechanics {
    /// One revolution in ns (the geometry's).
    #[inline(always)]
    pub fn rev(&self) -> Nanos {
        self.geo.rev_ns()
    }

    pub fn target(&self, loc: &Location) -> Target {
        let angle = self.geo.angle(loc.slot, loc.sectors_per_track);
        // Checked here, once per command, so the SPTF loop need not check it per candidate.
        assert!(
            (angle as Nanos) < self.rev(),
            "angle {angle} outside a revolution of {} ns",
            self.rev()
        );
        Target {
            cylinder: loc.cylinder,
            head: loc.head,
            angle,
        }
    }

    /// The target of sector `lba`.
    #[inline]
    pub fn place(&self, lba: u64) -> Target {
        self.target(&self.geo.locate(lba))
    }

    /// Time to move the heads from `from` to `to`'s track. A seek includes any head switch
    /// (they overlap); writes add the extra settle after any movement (DiskSim "Add. write
    /// settling delay"; Ruemmler & Wilkes: writes settle longer than reads).
    #[inline(always)]
    pub fn move_ns(&self, from: &HeadPos, cylinder: u32, head: u32, write: bool) -> Nanos {
        let distance = from.cylinder.abs_diff(cylinder);
        let moving = if distance > 0 {
            self.seek_table.nanos(distance)
        } else if from.head != head {
            self.head_switch
        } else {
            return 0;
        };
        if write {
            // `moving` < 2^32 and |settle| <= 1000 ms, so the signed sum is exact: the same
            // as `saturating_add_signed`, in two instructions instead of nine.
            (moving as i64 + self.write_settle).max(0) as Nanos
        } else {
            moving
        }
    }

    /// Platter angle at time `t`.
    #[inline]
    pub fn angle_at(&self, t: Nanos) -> u32 {
        self.geo.rev_div().rem_wide(t + self.phase) as u32
    }

    /// Wait from `t` until `angle` comes under the head.
    #[inline]
    pub fn rotational_wait(&self, t: Nanos, angle: u32) -> Nanos {
        let rev = self.rev() as u32;
        assert!(
            angle < rev,
            "angle {angle} outside a revolution of {rev} ns"
        );
        let now = self.angle_at(t);
        (if angle >= now {
            angle - now
        } else {
            angle + rev - now
        }) as Nanos
    }

    /// How long after `t` the first sector of `target` starts under the head if the arm moves
    /// at `t` and the transfer may not begin before `t + lag` (write data still arriving; 0
    /// when it may begin at once). `angle_t` must be [`Mechanics::angle_at`]`(t)`, computed
    /// once for the many targets a choice ranks: delays from one `t` rank as the times do,
    /// with fewer values live in the loop.
    #[inline(always)]
    pub fn delay(&self, angle_t: u32, from: &HeadPos, target: &Target, write: bool, lag: Nanos) -> Nanos {
        let offset = self
            .move_ns(from, target.cylinder, target.head, write)
            .max(lag);
        // The divisor is the revolution (one value live instead of two).
        let rev_div = self.geo.rev_div();
        let rev = rev_div.get();
        debug_assert!(angle_t < rev && target.angle < rev, "angle outside a revolution");
        // angle_t < rev < 2^25, so the sum fits 32 bits whenever the offset is below 2^31.
        let now = if offset < 1 << 31 {
            rev_div.rem(angle_t + offset as u32)
        } else {
            rev_div.rem_wide(angle_t as Nanos + offset) as u32
        };
        // `wait - rev` wraps above `wait` unless `wait >= rev`: a minimum, so the compiler uses
        // a conditional move (which way it goes is a coin toss, a branch would mispredict).
        let wait = target.angle + rev - now;
        let wait = wait.min(wait.wrapping_sub(rev));
        offset + wait as Nanos
    }

    /// Reads or writes `[lba, lba + sectors)` starting to move at `t`, track by track: each
    /// track boundary costs a head switch or a one-cylinder seek, then waits for the (skewed)
    /// first sector of the next track. `start` is the first sector's location (callers have it).
    /// The first move takes at least `min_move` (DiskSim's "Minimum seek delay").
    /// Inlined into its callers (one per kind of arm work), which each use a few fields of the
    /// result: the call and the result through memory cost a fifth of the work.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn access(
        &self,
        t: Nanos,
        from: HeadPos,
        start: &Location,
        sectors: u32,
        write: bool,
        not_before: Nanos,
        min_move: Nanos,
    ) -> Access {
        assert!(sectors > 0);
        debug_assert_eq!(*start, self.geo.locate(start.lba));
        // The first track (most accesses have no other): the move, then either a zero-latency
        // pickup or the wait for the first sector.
        let count = sectors.min(start.contiguous());
        let moving = self.move_ns(&from, start.cylinder, start.head, write);
        let moved = (t + moving.max(min_move)).max(not_before);
        let landed_inside = if self.zero_latency[write as usize] {
            self.landed_inside(moved, start, count)
        } else {
            None
        };
        let (slot, spt) = (start.slot, start.sectors_per_track);
        let (data_start, time, tail) = match landed_inside {
            Some(passed) => {
                // Zero latency: start at the next sector boundary (the `passed` sectors already
                // gone by come round again), so the track's part ends one revolution after
                // that boundary; in-order data begins with the first sector on that lap.
                let boundary = moved + self.geo.span(slot, passed, spt) - self.since_angle(moved, start);
                let end = boundary + self.rev();
                let tail = if count == sectors { count - passed + 1 } else { 1 };
                (end - self.geo.span(slot, passed, spt), end, tail)
            }
            None => {
                let data_start = moved + self.rotational_wait(moved, self.geo.angle(slot, spt));
                (data_start, data_start + self.geo.span(slot, count, spt), 1)
            }
        };
        let lba = start.lba + count as u64;
        let pos = HeadPos {
            cylinder: start.cylinder,
            head: start.head,
            lba,
        };
        let (end, pos, tail) = if count == sectors {
            (time, pos, tail)
        } else {
            let (end, pos) = self.further_tracks(time, pos, sectors - count, write);
            (end, pos, 1)
        };
        Access {
            start: t,
            moved,
            data_start,
            end,
            tail,
            pos,
        }
    }

    /// The rest of a transfer after its first track's part, which ended at `time` with the
    /// heads at `pos`: each further track costs a head switch or a one-cylinder seek, then the
    /// (skewed) first sector, then its part. Out of line: most transfers fit one track, and
    /// [`Mechanics::access`] is inlined into its callers.
    #[inline(never)]
    fn further_tracks(&self, mut time: Nanos, mut pos: HeadPos, mut left: u32, write: bool) -> (Nanos, HeadPos) {
        while left > 0 {
            let loc = self.geo.locate(pos.lba);
            let count = left.min(loc.contiguous());
            time += self.move_ns(&pos, loc.cylinder, loc.head, write);
            time += self.rotational_wait(time, self.geo.angle(loc.slot, loc.sectors_per_track));
            time += self.geo.span(loc.slot, count, loc.sectors_per_track);
            left -= count;
            pos = HeadPos {
                cylinder: loc.cylinder,
                head: loc.head,
                lba: pos.lba + count as u64,
            };
        }
        (time, pos)
    }

    /// Rotation (ns) from the start of `loc`'s sector to the head's angle at `t`.
    fn since_angle(&self, t: Nanos, loc: &Location) -> Nanos {
        let (now, a) = (self.angle_at(t) as Nanos, self.geo.angle(loc.slot, loc.sectors_per_track) as Nanos);
        // Both below a revolution: one subtraction of it at most.
        let since = now + self.rev() - a;
        if since >= self.rev() { since - self.rev() } else { since }
    }

    /// With the heads on `loc`'s track at `t`: if they are inside the `count` sectors from
    /// `loc` (past the start of the first), how many of those sectors begin before the next
    /// sector boundary (1..=count), else None.
    fn landed_inside(&self, t: Nanos, loc: &Location, count: u32) -> Option<u32> {
        let into = self.since_angle(t, loc);
        let spt = loc.sectors_per_track;
        if into == 0 || into >= self.geo.span(loc.slot, count, spt) {
            return None;
        }
        // The estimate can be one off either way on the integer lattice; settle it exactly.
        let mut passed = self.geo.rev_div().div(into * spt as Nanos).max(1) as u32;
        while self.geo.span(loc.slot, passed, spt) < into {
            passed += 1;
        }
        while passed > 1 && self.geo.span(loc.slot, passed - 1, spt) >= into {
            passed -= 1;
        }
        Some(passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_seek_tables_are_shared_and_different_ones_kept() {
        let table = |full_ms| {
            let curve = SeekCurve::fit_three_point(0.6, full_ms / 2.2, full_ms, 1000).unwrap();
            SeekTable::new(curve, 1000)
        };
        let (mut a, mut b, mut c) = (table(9.0), table(9.0), table(12.0));
        let mut seen = Vec::new();
        for t in [&mut a, &mut b, &mut c] {
            t.share(&mut seen);
        }
        assert!(Arc::ptr_eq(&a.nanos, &b.nanos), "equal tables share one allocation");
        assert!(!Arc::ptr_eq(&a.nanos, &c.nanos));
        assert_eq!(seen.len(), 2);
        assert_eq!(c.nanos(999), table(12.0).nanos(999), "a kept table is unchanged");
        // The same curve over fewer cylinders is another table.
        let curve = SeekCurve::fit_three_point(0.6, 9.0 / 2.2, 9.0, 1000).unwrap();
        let mut short = SeekTable::new(curve, 500);
        short.share(&mut seen);
        assert!(!Arc::ptr_eq(&a.nanos, &short.nanos));
        assert_eq!(seen.len(), 3);
    }
}
