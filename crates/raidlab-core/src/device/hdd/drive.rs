//! The HDD as a state machine in simulated time: the host side (queue, cache hits, write-cache
//! acknowledgements, flushes) and one arm that serves host commands, destages dirty data and
//! reads ahead, always choosing its next piece of work when it becomes free.

use super::cache::{DirtySet, ReadCache};
use super::geometry::Location;
use super::mech::{HeadPos, Mechanics, SeekTable};
use super::queue::{self, CommandQueue, Done, Parked, Pending, Wait};
use super::spec::{BufferPolicy, HddSpec, QueuePolicy, ReadAheadBound};
use crate::device::{Command, Completion, Drive, DriveInfo, Op};
use crate::{rng::Prng, time::Nanos};

/// How many dirty extents (in LBA order from the heads) destage chooses among by positioning
/// time: a bounded C-LOOK window keeps the choice cheap with tens of thousands of extents.
const DESTAGE_WINDOW: usize = 16;
/// Longest single destage, so a huge coalesced extent does not hold the arm for long.
const DESTAGE_MAX_SECTORS: u64 = 2048;
/// How long the drive's reordering may pass a host command over, whatever is cheaper to do
/// (SPTF's nearer commands, a full write cache's destaging): a command older than this is
/// served next, oldest first. Drive firmware bounds starvation this way (aged scheduling:
/// Jacobson & Wilkes 1991; Worthington, Ganger & Patt 1994), with undisclosed limits; tests at
/// Google (c. 2008, cited by Wikipedia "Native Command Queuing") saw NCQ drives delay an I/O
/// by up to 1-2 s, so the limit here is 1 s.
const COMMAND_AGE_LIMIT_NS: Nanos = 1_000_000_000;

/// Counters for tests and reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HddStats {
    pub reads: u64,
    /// Reads served from the buffer (read segments, read-ahead in progress, or dirty data).
    pub read_hits: u64,
    /// Of the hits, those that waited for read-ahead still under way.
    pub read_ahead_waits: u64,
    pub writes: u64,
    /// Writes acknowledged from the write cache.
    pub writes_cached: u64,
    pub flushes: u64,
    pub destages: u64,
    pub destaged_sectors: u64,
    pub read_ahead_sectors: u64,
    /// Media operations for host commands (read misses and write-through writes).
    pub media_ops: u64,
}

/// Fixed per-drive timings in nanoseconds.
#[derive(Clone, Debug)]
pub(super) struct Timing {
    pub overhead_read: Nanos,
    pub overhead_write: Nanos,
    pub overhead_hit: Nanos,
    pub read_disconnect: Nanos,
    /// Interface time per sector in picoseconds (integer, so sums stay exact), reads and writes.
    pub iface_ps_per_sector: u64,
    pub iface_write_ps_per_sector: u64,
    /// (read miss, write, read hit, read disconnect) overheads after a read and after a write;
    /// `submit` copies the set for the previous command's type into the fields above.
    pub overheads_by_previous: [[Nanos; 4]; 2],
    /// Read-miss data in the buffer (per mille of the media transfer) before the host transfer
    /// starts; 0 streams (`HddSpec::read_transfer_watermark`).
    pub read_watermark_permille: u64,
    /// See [`super::spec::BusOverheads`].
    pub prep: Nanos,
    pub reselect: Nanos,
    pub done_read: Nanos,
    pub done_write: Nanos,
    pub write_start_sectors: u32,
    pub min_write_seek: Nanos,
}

impl Timing {
    /// Interface transfer time for `sectors` read, rounded to nearest ns.
    #[inline]
    pub fn iface(&self, sectors: u64) -> Nanos {
        (sectors * self.iface_ps_per_sector + 500) / 1000
    }

    /// Interface transfer time for `sectors` written.
    #[inline]
    pub fn iface_write(&self, sectors: u64) -> Nanos {
        (sectors * self.iface_write_ps_per_sector + 500) / 1000
    }
}

/// A read-ahead transfer of part of one track, which a host command may cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Chunk {
    segment: usize,
    first: u64,
    sectors: u32,
    slot: u32,
    spt: u32,
    start: Nanos,
    moved: Nanos,
    data_start: Nanos,
    end: Nanos,
    pos: HeadPos,
}

/// What the arm is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Work {
    Idle,
    Host {
        start: Nanos,
        end: Nanos,
        lba: u64,
        sectors: u32,
        write: bool,
        /// First sector a read leaves in the buffer: `lba`, or earlier with free blocks.
        keep_from: u64,
    },
    Destage {
        start: Nanos,
        end: Nanos,
        sectors: u64,
    },
    ReadAhead(Chunk),
}

/// What the arm would do if free at a given time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Plan {
    Destage,
    Host,
    ReadAhead,
    WaitUntil(Nanos),
    Nothing,
}

/// A simulated hard disk drive. Build with [`Hdd::new`]; drive through [`Drive`].
#[derive(Clone, Debug)]
pub struct Hdd {
    pub(super) info: DriveInfo,
    pub(super) mech: Mechanics,
    pub(super) timing: Timing,
    policy: QueuePolicy,
    depth: u32,
    write_cache: bool,
    clock: Nanos,
    next_seq: u64,
    outstanding: u32,
    queue: CommandQueue,
    parked: Vec<Parked>,
    /// Scratch for commands leaving `parked` together (empty between calls).
    unparked: Vec<Parked>,
    /// Commands with a known completion time, kept sorted by (time, seq) descending so the
    /// earliest is last: `next_event` reads it and `advance` pops from the end.
    done: Vec<Done>,
    pos: HeadPos,
    free_at: Nanos,
    work: Work,
    cache: ReadCache,
    dirty: DirtySet,
    busy: Nanos,
    stats: HddStats,
    /// The previous host read/write was a write (selects the overhead set).
    last_write: bool,
    /// The arm's last work was a destage: while the full write cache forces destaging, a host
    /// command waiting for the mechanism goes next, so forced destages and host commands take
    /// turns (read only then, `plan`).
    host_turn: bool,
    /// The buffer's behaviour (shared segments only with segments to share).
    buffer: BufferPolicy,
    read_ahead: u64,
    /// A sector's time under the head in the fastest zone, in picoseconds rounded down: no
    /// transfer of `n` sectors takes less than `n` of them.
    fastest_sector_ps: u64,
}

fn ms_ns(ms: f64) -> Nanos {
    (ms * 1e6).round() as Nanos
}

impl Hdd {
    /// Builds the drive. The spec must be valid (from [`HddSpec::from_params`] or checked with
    /// [`HddSpec::validate`]); an invalid one is a caller bug and panics. The platter's starting
    /// angle is drawn from `prng`.
    pub fn new(spec: HddSpec, mut prng: Prng) -> Hdd {
        let (geo, seek) = spec
            .checked_parts()
            .unwrap_or_else(|e| panic!("invalid HddSpec: {e}"));
        let rev = geo.rev_ns();
        let mech = Mechanics {
            seek_table: SeekTable::new(seek, geo.cylinders()),
            phase: prng.below(rev),
            head_switch: ms_ns(spec.head_switch_ms),
            write_settle: (spec.write_settle_ms * 1e6).round() as i64,
            zero_latency: [spec.buffer.zero_latency_reads, spec.buffer.zero_latency_writes],
            geo,
        };
        let bus = &spec.bus;
        // 512 bytes at a rate in 10^6 B/s, in picoseconds.
        let ps_per_sector = |mb_s: f64| (512.0 * 1e6 / mb_s).round() as u64;
        let timing = Timing {
            overhead_read: ms_ns(spec.overhead_ms_read),
            overhead_write: ms_ns(spec.overhead_ms_write),
            overhead_hit: ms_ns(spec.overhead_ms_cache_hit),
            read_disconnect: ms_ns(bus.read_disconnect_ms[0]),
            iface_ps_per_sector: ps_per_sector(spec.interface_mb_s),
            iface_write_ps_per_sector: ps_per_sector(bus.write_mb_s.unwrap_or(spec.interface_mb_s)),
            overheads_by_previous: {
                let [read, write, hit] = [spec.overhead_ms_read, spec.overhead_ms_write, spec.overhead_ms_cache_hit];
                let [r, w, h] = spec.overhead_ms_after_write.unwrap_or([read, write, hit]);
                let [after_read, after_write] = bus.read_disconnect_ms;
                [[read, write, hit, after_read].map(ms_ns), [r, w, h, after_write].map(ms_ns)]
            },
            read_watermark_permille: (spec.read_transfer_watermark * 1000.0).round() as u64,
            prep: ms_ns(bus.data_prep_ms),
            reselect: ms_ns(bus.reselect_ms),
            done_read: ms_ns(bus.read_completion_ms),
            done_write: ms_ns(bus.write_completion_ms),
            write_start_sectors: bus.write_start_sectors,
            min_write_seek: ms_ns(bus.min_write_seek_ms),
        };
        let capacity = spec.capacity_sectors;
        let info = DriveInfo {
            kind: "hdd",
            capacity_bytes: capacity * 512,
            rpm: spec.rpm.round() as u32,
            interface: spec.interface.clone(),
            rotational: true,
        };
        let write_buffer = if spec.write_cache {
            spec.write_buffer_sectors
        } else {
            0
        };
        Hdd {
            info,
            mech,
            timing,
            policy: spec.queue_policy,
            depth: spec.queue_depth,
            write_cache: spec.write_cache,
            clock: 0,
            next_seq: 0,
            outstanding: 0,
            queue: CommandQueue::with_capacity(spec.queue_depth as usize),
            parked: Vec::with_capacity(spec.queue_depth as usize),
            unparked: Vec::new(),
            done: Vec::with_capacity(spec.queue_depth as usize),
            pos: HeadPos::default(),
            free_at: 0,
            work: Work::Idle,
            cache: ReadCache::new(
                spec.cache_segments,
                spec.cache_segment_sectors,
                spec.read_ahead_sectors,
                capacity,
            ),
            dirty: DirtySet::new(write_buffer),
            busy: 0,
            stats: HddStats::default(),
            last_write: false,
            host_turn: false,
            buffer: BufferPolicy {
                writes_share_segments: spec.buffer.writes_share_segments && spec.cache_segments > 0,
                ..spec.buffer.clone()
            },
            read_ahead: spec.read_ahead_sectors,
            fastest_sector_ps: rev * 1000
                / spec.zones.iter().map(|z| z.sectors_per_track as u64).max().expect("a zone"),
        }
    }

    /// Shares the seek table with an identical one already in `seen` (see [`SeekTable::share`]).
    pub fn share_seek_table(&mut self, seen: &mut Vec<SeekTable>) {
        self.mech.seek_table.share(seen);
    }

    pub fn stats(&self) -> &HddStats {
        &self.stats
    }
    /// Dirty sectors in the write cache (including any being destaged).
    pub fn dirty_sectors(&self) -> u64 {
        self.dirty.sectors()
    }
    pub fn policy(&self) -> QueuePolicy {
        self.policy
    }
    pub fn geometry(&self) -> &super::geometry::Geometry {
        &self.mech.geo
    }
    pub fn seek_curve(&self) -> &super::seek::SeekCurve {
        self.mech.seek_table.curve()
    }
    /// Starting platter angle (ns of rotation), drawn from the drive's Prng.
    pub fn phase_ns(&self) -> Nanos {
        self.mech.phase
    }

    /// Sets the platter angle at time 0 (before any command): e.g. 0, DiskSim's convention.
    pub fn set_phase_ns(&mut self, phase: Nanos) {
        assert!(phase < self.mech.rev(), "phase {phase} ns is not within one revolution");
        assert!(self.next_seq == 0, "the phase is set before the first command");
        self.mech.phase = phase;
    }

    // ---- event loop -------------------------------------------------------------------------

    /// Processes every arm event up to and including `t`. Most calls find none due, so that
    /// check stays inline and the arm's (large) step code is entered only when there is work.
    #[inline]
    fn run_until(&mut self, t: Nanos) {
        assert!(t >= self.clock, "time ran backwards: {t} < {}", self.clock);
        if let Some(event) = self.arm_event().filter(|&event| event <= t) {
            self.run_arm((event, None), t);
        }
        self.clock = t;
    }

    /// Steps the arm from its due `event` through every later one up to `t`.
    #[inline(never)]
    fn run_arm(&mut self, mut event: (Nanos, Option<Plan>), t: Nanos) {
        loop {
            self.arm_step(event);
            match self.arm_next() {
                Some(next) if next.0 <= t => event = next,
                _ => break,
            }
        }
    }

    /// The earliest time a completion can come out of stepping the arm from its next event
    /// `e`, until the next command arrives (which steps the arm and asks again); None if none
    /// can. Waiters outside the queue (flushes, writes waiting for room, reads waiting for
    /// read-ahead) may complete at any arm step. Otherwise only a queued command started at
    /// or after `e` completes, and not before its data has passed under the head: at least
    /// its sectors' time in the fastest zone (less one ns per sector for rounding), however
    /// it is positioned.
    #[inline]
    fn visible_from(&self, e: Nanos) -> Option<Nanos> {
        if !self.parked.is_empty() {
            return Some(e);
        }
        if self.queue.is_empty() {
            return None;
        }
        let sectors = self.queue.fewest_sectors() as u64;
        // Picoseconds over a constant 1000: a multiply, where dividing by the sectors per
        // track would be a hardware divide on every call (the engine asks after every kick).
        let transfer = (sectors * self.fastest_sector_ps / 1000).saturating_sub(sectors);
        Some(e + transfer)
    }

    /// When the arm next changes state.
    #[inline]
    fn arm_event(&self) -> Option<Nanos> {
        match &self.work {
            Work::Host { end, .. } | Work::Destage { end, .. } => Some(*end),
            Work::ReadAhead(c) => Some(self.read_ahead_event(c)),
            Work::Idle => {
                let t = self.free_at.max(self.clock);
                match self.plan(t) {
                    Plan::Nothing => None,
                    Plan::WaitUntil(w) => Some(w),
                    _ => Some(t),
                }
            }
        }
    }

    /// A host command that becomes eligible cuts read-ahead short (once the heads have
    /// finished any switch they started).
    #[inline]
    fn read_ahead_event(&self, c: &Chunk) -> Nanos {
        let preempt = self.queue.first_eligible().map(|e| e.max(c.moved));
        preempt.map_or(c.end, |p| p.min(c.end))
    }

    /// [`Hdd::arm_event`] and, if the arm is idle and has work then, the plan for it (made to
    /// find the time; stepping the arm at that time uses it instead of planning again). Kept
    /// apart from `arm_event`, which the engine's hottest checks inline: defining one through
    /// the other cost ~130 instructions per host I/O.
    #[inline]
    fn arm_next(&self) -> Option<(Nanos, Option<Plan>)> {
        match &self.work {
            Work::Host { end, .. } | Work::Destage { end, .. } => Some((*end, None)),
            Work::ReadAhead(c) => Some((self.read_ahead_event(c), None)),
            Work::Idle => {
                let t = self.free_at.max(self.clock);
                match self.plan(t) {
                    Plan::Nothing => None,
                    Plan::WaitUntil(w) => Some((w, None)),
                    plan => Some((t, Some(plan))),
                }
            }
        }
    }

    /// Steps the arm at `e`; `planned` is the plan made for `e` while finding it, if one was.
    fn arm_step(&mut self, (e, planned): (Nanos, Option<Plan>)) {
        match std::mem::replace(&mut self.work, Work::Idle) {
            Work::Idle => self.dispatch(e, planned),
            Work::Host {
                start,
                end,
                lba,
                sectors,
                write,
                keep_from,
            } => {
                assert_eq!(e, end);
                self.busy += end - start;
                if !write {
                    // A hit may have started read-ahead on another segment meanwhile; reads
                    // waiting on it go to the queue before this miss takes over read-ahead.
                    self.stop_read_ahead(end);
                    let data_end = lba + sectors as u64;
                    let target = self.read_ahead_target(keep_from, data_end);
                    self.cache.fill_after_miss(keep_from, data_end, target);
                }
                self.free_at = end;
            }
            Work::Destage {
                start,
                end,
                sectors,
            } => {
                assert_eq!(e, end);
                self.busy += end - start;
                self.dirty.landed(sectors);
                self.free_at = end;
                self.after_destage(end);
            }
            Work::ReadAhead(chunk) => self.finish_read_ahead(chunk, e),
        }
    }

    /// What the arm does when free at `t`, in priority order: a host command that has waited
    /// [`COMMAND_AGE_LIMIT_NS`]; destage if the write cache must drain (a Flush, a write
    /// waiting for space, or above the high watermark); else host commands; else read-ahead;
    /// else idle destage once no host command is even pending.
    fn plan(&self, t: Nanos) -> Plan {
        let flush = self.parked.iter().any(|p| p.wait == Wait::Flush);
        let forced = flush
            || self.dirty.above_high_water()
            || self.parked.iter().any(|p| p.wait == Wait::Space);
        if self.dirty.has_queued() && forced {
            if self.queue.starved(t, COMMAND_AGE_LIMIT_NS).is_some() {
                return Plan::Host;
            }
            // A full write cache destages, but not ahead of every read: after each destage it
            // forced, a host command waiting for the mechanism goes (the firmware makes room
            // for writes without leaving reads, the cache's reason to exist, behind all of
            // them; before, a read next to a saturating writer waited the 1 s age limit). A
            // pending Flush drains first: SATA's FLUSH CACHE is not queued, nothing else runs.
            if !flush && self.host_turn && self.queue.first_eligible().is_some_and(|e| e <= t) {
                return Plan::Host;
            }
            return Plan::Destage;
        }
        if self.queue.first_eligible().is_some_and(|e| e <= t) {
            return Plan::Host;
        }
        if self.cache.pending().is_some() {
            return Plan::ReadAhead;
        }
        if let Some(w) = self.queue.first_eligible() {
            return Plan::WaitUntil(w);
        }
        if self.dirty.has_queued() {
            return Plan::Destage;
        }
        Plan::Nothing
    }

    /// Starts the work `planned` for `t` (planned now if not given: the state is unchanged
    /// since a plan was made for `t`, so it still holds).
    fn dispatch(&mut self, t: Nanos, planned: Option<Plan>) {
        assert!(matches!(self.work, Work::Idle) && t >= self.free_at);
        match planned.unwrap_or_else(|| self.plan(t)) {
            Plan::Destage => {
                self.stop_read_ahead(t);
                self.start_destage(t);
                self.host_turn = true;
            }
            Plan::Host => {
                self.host_turn = false;
                self.stop_read_ahead(t);
                let i = self
                    .queue
                    .starved(t, COMMAND_AGE_LIMIT_NS)
                    .or_else(|| queue::select(self.policy, &self.queue, t, &self.pos, &self.mech));
                self.start_host(i.expect("an eligible command"), t);
            }
            Plan::ReadAhead => self.start_read_ahead(t),
            Plan::WaitUntil(_) | Plan::Nothing => {}
        }
    }

    fn finish_at(&mut self, time: Nanos, seq: u64, id: u64, arrival: Nanos) {
        assert!(
            time >= arrival,
            "command {id} would complete at {time} before its arrival {arrival}"
        );
        queue::insert_done(&mut self.done, Done { time, seq, id });
    }

    // ---- arm work ---------------------------------------------------------------------------

    fn start_host(&mut self, position: usize, t: Nanos) {
        let p = self.queue.take(position);
        let tm = &self.timing;
        // DiskSim pads every write's positioning to its "Minimum seek delay" unless it appends
        // to a write under way, which one command at a time never does.
        let min_move = if p.write { tm.min_write_seek } else { 0 };
        let access = self
            .mech
            .access(t, self.pos, &p.location, p.sectors, p.write, p.data_ready, min_move);
        let n = p.sectors as u64;
        let time = if p.write {
            // Done once the last sector is written and all data has come in, after the drive
            // reconnects to report it.
            let data_in = p.eligible + tm.prep + tm.iface_write(n);
            access.end.max(data_in) + tm.reselect + tm.done_write
        } else {
            // Reads stream to the host as sectors reach the buffer: done when the last sector
            // has crossed the interface, which cannot start before the first sector is read.
            // With a read watermark the transfer starts once that share of the media transfer
            // is done (DiskSim's high water mark; time-proportional, so track switches count
            // too), and not before the drive has let go of the bus and reconnected.
            let media = access.end - access.data_start;
            let buffered = access.data_start + media * tm.read_watermark_permille / 1000;
            let start = buffered.max(p.eligible + tm.read_disconnect) + tm.reselect + tm.prep;
            (access.end + tm.iface(access.tail as u64)).max(start + tm.iface(n)) + tm.done_read
        };
        self.finish_at(time, p.seq, p.id, p.arrival);
        self.pos = access.pos;
        let keep_from = if p.write || !self.buffer.read_free_blocks {
            p.lba
        } else {
            p.lba - self.free_blocks(&p.location, access.data_start - access.moved) as u64
        };
        self.work = Work::Host {
            start: t,
            end: access.end,
            lba: p.lba,
            sectors: p.sectors,
            write: p.write,
            keep_from,
        };
        self.stats.media_ops += 1;
    }

    /// Sectors of `loc`'s track before it that pass whole under the head during a rotational
    /// wait of `wait` ns (DiskSim's "Read any free blocks": read while waiting, kept in front of
    /// the request's data); never before the track's first sector.
    fn free_blocks(&self, loc: &Location, wait: Nanos) -> u32 {
        let whole = self.mech.geo.rev_div().div(wait * loc.sectors_per_track as u64) as u32;
        whole.min(loc.sector)
    }

    /// Where read-ahead stops for data buffered over `[start, end)` (see [`ReadAheadBound`]).
    /// The default bound (a sum and a minimum) inline; the others call out.
    #[inline]
    fn read_ahead_target(&self, start: u64, end: u64) -> u64 {
        let count = (end + self.read_ahead).min(self.mech.geo.capacity_sectors());
        match self.buffer.read_ahead_bound {
            ReadAheadBound::Count => count,
            _ => self.read_ahead_bounded(start, end, count),
        }
    }

    /// [`Hdd::read_ahead_target`] for the bounds that depend on the layout, with `count` the
    /// target by count alone.
    #[inline(never)]
    fn read_ahead_bounded(&self, start: u64, end: u64, count: u64) -> u64 {
        let geo = &self.mech.geo;
        let cap = geo.capacity_sectors();
        match self.buffer.read_ahead_bound {
            ReadAheadBound::Count => count,
            ReadAheadBound::Track => count.min(self.track_end(end - 1)),
            ReadAheadBound::Cylinder => {
                let cylinder = geo.locate(end - 1).cylinder;
                let mut stop = self.track_end(end - 1);
                while stop < count && geo.locate(stop).cylinder == cylinder {
                    stop = self.track_end(stop);
                }
                count.min(stop)
            }
            ReadAheadBound::NextTrack if end >= cap => cap,
            ReadAheadBound::NextTrack => {
                let loc = geo.locate(end);
                let stop = end + loc.left_on_track() as u64;
                let began_before = start < end - loc.sector as u64;
                // One more track's worth of sectors, counted as DiskSim counts it (physical
                // sectors per track, so one LBN over where tracks hold spares).
                if began_before { (stop + loc.sectors_per_track as u64).min(cap) } else { stop }
            }
        }
    }

    /// First sector after the track holding `lba`.
    fn track_end(&self, lba: u64) -> u64 {
        lba + self.mech.geo.locate(lba).left_on_track() as u64
    }

    /// Writes the dirty extent (from a C-LOOK window ahead of the heads) with the shortest
    /// positioning time (ties keep the earlier extent); adjacent writes were coalesced on
    /// insert, so they go out as one.
    fn start_destage(&mut self, t: Nanos) {
        let (mech, from) = (&self.mech, self.pos);
        let angle_t = mech.angle_at(t);
        // Ranked by the delay from `t` (the same order as the time `t` plus it).
        let choice = self
            .dirty
            .cheapest(from.lba, DESTAGE_WINDOW, move |target| mech.delay(angle_t, &from, target, true, 0))
            .expect("destage with dirty data");
        let sectors = (choice.end - choice.start).min(DESTAGE_MAX_SECTORS);
        self.dirty.take(choice, sectors, |lba| mech.place(lba));
        // Located again: the set keeps only each extent's target (keeping whole locations
        // would triple its size).
        let location = self.mech.geo.locate(choice.start);
        let access = self
            .mech
            .access(t, self.pos, &location, sectors as u32, true, 0, 0);
        self.pos = access.pos;
        self.work = Work::Destage {
            start: t,
            end: access.end,
            sectors,
        };
        self.stats.destages += 1;
        self.stats.destaged_sectors += sectors;
    }

    fn start_read_ahead(&mut self, t: Nanos) {
        let segment = self.cache.pending().expect("read-ahead pending");
        let s = *self.cache.segment(segment);
        let loc = self.mech.geo.locate(s.valid);
        let sectors = (s.target - s.valid).min(loc.contiguous() as u64) as u32;
        let access = self.mech.access(t, self.pos, &loc, sectors, false, 0, 0);
        let chunk = Chunk {
            segment,
            first: s.valid,
            sectors,
            slot: loc.slot,
            spt: loc.sectors_per_track,
            start: t,
            moved: access.moved,
            data_start: access.data_start,
            end: access.end,
            pos: access.pos,
        };
        self.work = Work::ReadAhead(chunk);
        self.resolve_read_ahead_waiters(&chunk);
    }

    /// Ends a read-ahead chunk at `e`: at its natural end, or cut short by a host command.
    fn finish_read_ahead(&mut self, c: Chunk, e: Nanos) {
        let read = if e >= c.end {
            c.sectors
        } else if e <= c.data_start {
            0
        } else {
            self.mech
                .geo
                .sectors_within(c.slot, c.sectors, c.spt, e - c.data_start)
        };
        let stop = e.min(c.end);
        self.busy += stop.max(c.start) - c.start;
        self.cache.commit(c.segment, read as u64);
        self.stats.read_ahead_sectors += read as u64;
        self.pos = HeadPos {
            cylinder: c.pos.cylinder,
            head: c.pos.head,
            lba: c.first + read as u64,
        };
        // A head switch already under way cannot be abandoned.
        self.free_at = stop.max(c.moved);
        if e < c.end {
            self.stop_read_ahead(e);
        }
    }

    /// Gives up pending read-ahead; reads that were waiting for it go to the queue as misses.
    /// Inline, so the common call with nothing pending costs a test, not a call.
    #[inline]
    fn stop_read_ahead(&mut self, t: Nanos) {
        if self.cache.pending().is_some() {
            self.abandon_read_ahead(t);
        }
    }

    #[inline(never)]
    fn abandon_read_ahead(&mut self, t: Nanos) {
        self.cache.abandon();
        while let Some(i) = self.parked.iter().position(|p| p.wait == Wait::ReadAhead) {
            let p = self.parked.remove(i);
            let eligible = (p.arrival + self.timing.overhead_read).max(t);
            self.enqueue_media(p.command, p.seq, p.arrival, eligible);
        }
    }

    /// Completes the waiting reads whose last sector this chunk brings in.
    fn resolve_read_ahead_waiters(&mut self, c: &Chunk) {
        let chunk_end = c.first + c.sectors as u64;
        let mut i = 0;
        while i < self.parked.len() {
            let p = self.parked[i];
            let end = p.command.sector + p.command.sectors as u64;
            if p.wait == Wait::ReadAhead && end <= chunk_end {
                self.parked.remove(i);
                let ready = self.chunk_ready(c, end);
                let time = self.stream_hit_time(p.arrival, p.command.sectors, ready);
                self.finish_at(time, p.seq, p.command.id, p.arrival);
            } else {
                i += 1;
            }
        }
    }

    /// When sector `end − 1` of a read-ahead chunk has passed under the head.
    fn chunk_ready(&self, c: &Chunk, end: u64) -> Nanos {
        assert!(end > c.first && end <= c.first + c.sectors as u64);
        c.data_start + self.mech.geo.span(c.slot, (end - c.first) as u32, c.spt)
    }

    /// A hit on data arriving at `ready`: the host transfer streams behind the media.
    fn stream_hit_time(&self, arrival: Nanos, sectors: u32, ready: Nanos) -> Nanos {
        let t = &self.timing;
        (arrival + t.overhead_hit + t.prep + t.iface(sectors as u64)).max(ready + t.iface(1)) + t.done_read
    }

    // ---- write cache ------------------------------------------------------------------------

    fn after_destage(&mut self, t: Nanos) {
        self.admit_space_waiters(t);
        if !self.dirty.is_clean() {
            return;
        }
        // The flushes complete, then the writes held behind them may enter the cache, each in
        // arrival order. (`unparked` is kept only to reuse its allocation.)
        let mut unparked = std::mem::take(&mut self.unparked);
        queue::unpark(&mut self.parked, Wait::Flush, &mut unparked);
        for p in unparked.drain(..) {
            let time = (p.arrival + self.timing.overhead_write).max(t);
            self.finish_at(time, p.seq, p.command.id, p.arrival);
        }
        // `cached_write` parks a write that finds no room at the end of `parked`, as before.
        queue::unpark(&mut self.parked, Wait::BehindFlush, &mut unparked);
        for p in unparked.drain(..) {
            self.cached_write(t, p.command, p.seq, p.arrival);
        }
        self.unparked = unparked;
    }

    fn admit_space_waiters(&mut self, t: Nanos) {
        while let Some(i) = self.parked.iter().position(|p| p.wait == Wait::Space) {
            let p = self.parked[i];
            if !self.dirty.fits(p.command.sectors as u64) {
                break;
            }
            self.parked.remove(i);
            self.accept_write(t, p.command, p.seq, p.arrival);
        }
    }

    /// A write for the cache: accepted now if there is room and nobody queued for room first.
    fn cached_write(&mut self, t: Nanos, command: Command, seq: u64, arrival: Nanos) {
        let space_queue = self.parked.iter().any(|p| p.wait == Wait::Space);
        if !space_queue && self.dirty.fits(command.sectors as u64) {
            self.accept_write(t, command, seq, arrival);
        } else {
            self.parked.push(Parked {
                command,
                seq,
                arrival,
                wait: Wait::Space,
            });
        }
    }

    /// Immediate reporting: done once the controller has processed it and the data is in.
    fn accept_write(&mut self, t: Nanos, command: Command, seq: u64, arrival: Nanos) {
        let mech = &self.mech;
        self.dirty.insert(command.sector, command.sector + command.sectors as u64, |lba| mech.place(lba));
        let tm = &self.timing;
        let ack = arrival + tm.overhead_write + tm.prep + tm.iface_write(command.sectors as u64) + tm.done_write;
        self.finish_at(ack.max(t), seq, command.id, arrival);
        self.stats.writes_cached += 1;
    }

    // ---- host side --------------------------------------------------------------------------

    fn enqueue_media(&mut self, command: Command, seq: u64, arrival: Nanos, eligible: Nanos) {
        let write = command.op == Op::Write;
        let loc = self.mech.geo.locate(command.sector);
        // Media writing starts once the first `write_start_sectors` (all: 0) are in the buffer.
        let data_ready = if write {
            let t = &self.timing;
            let first = match t.write_start_sectors {
                0 => command.sectors,
                k => k.min(command.sectors),
            };
            eligible + t.prep + t.iface_write(first as u64)
        } else {
            eligible
        };
        self.queue.push(Pending {
            id: command.id,
            write,
            lba: command.sector,
            sectors: command.sectors,
            seq,
            arrival,
            eligible,
            data_ready,
            target: self.mech.target(&loc),
            location: loc,
        });
    }

    fn submit_read(&mut self, now: Nanos, command: Command, seq: u64) {
        self.stats.reads += 1;
        let (lba, n) = (command.sector, command.sectors);
        let end = lba + n as u64;
        let t = &self.timing;
        let hit_time = now + t.overhead_hit + t.prep + t.iface(n as u64) + t.done_read;
        if self.dirty.covers(lba, end) {
            self.stats.read_hits += 1;
            return self.finish_at(hit_time, seq, command.id, now);
        }
        if let Some(i) = self.cache.full_hit(lba, end) {
            self.touch_hit(i, end);
            self.stats.read_hits += 1;
            return self.finish_at(hit_time, seq, command.id, now);
        }
        let idle_hit = self.buffer.read_ahead_on_idle_hit;
        if let Some(i) = self.cache.stream_hit(lba).filter(|&i| self.cache.may_read_ahead(i, idle_hit)) {
            self.touch_hit(i, end);
            self.stats.read_hits += 1;
            self.stats.read_ahead_waits += 1;
            match self.work {
                Work::ReadAhead(c) if c.segment == i && end <= c.first + c.sectors as u64 => {
                    let time = self.stream_hit_time(now, n, self.chunk_ready(&c, end));
                    self.finish_at(time, seq, command.id, now);
                }
                _ => self.parked.push(Parked {
                    command,
                    seq,
                    arrival: now,
                    wait: Wait::ReadAhead,
                }),
            }
            return;
        }
        self.enqueue_media(command, seq, now, now + self.timing.overhead_read);
    }

    /// A hit on segment `index` up to `end`: moves read-ahead on if this segment may read ahead.
    fn touch_hit(&mut self, index: usize, end: u64) {
        let target = self
            .cache
            .may_read_ahead(index, self.buffer.read_ahead_on_idle_hit)
            .then(|| self.read_ahead_target(self.cache.segment(index).start, end));
        self.cache.touch(index, target);
    }

    fn submit_write(&mut self, now: Nanos, command: Command, seq: u64) {
        self.stats.writes += 1;
        let (lba, end) = (command.sector, command.sector + command.sectors as u64);
        // The write makes overlapping read segments stale; stop reading ahead into them first.
        if let Some(a) = self.cache.active() {
            let s = self.cache.segment(a);
            if s.start < end && lba < s.target {
                self.preempt_read_ahead(now);
            }
        }
        self.cache.invalidate(lba, end);
        if self.buffer.writes_share_segments {
            self.hold_write_data(now, lba, end);
        }
        let fits_buffer = (command.sectors as u64) <= self.dirty.capacity();
        if self.write_cache && fits_buffer {
            if self.parked.iter().any(|p| p.wait == Wait::Flush) {
                self.parked.push(Parked {
                    command,
                    seq,
                    arrival: now,
                    wait: Wait::BehindFlush,
                });
            } else {
                self.cached_write(now, command, seq, now);
            }
        } else {
            self.enqueue_media(command, seq, now, now + self.timing.overhead_write);
        }
    }

    /// The write's data takes a buffer segment (drives without a separate write area); if that
    /// was the segment being read ahead into, the read-ahead stops first.
    fn hold_write_data(&mut self, now: Nanos, lba: u64, end: u64) {
        let Some(victim) = self.cache.write_victim() else { return };
        if self.cache.active() == Some(victim) {
            self.preempt_read_ahead(now);
        }
        self.cache.hold_write(victim, lba, end, self.buffer.read_hits_on_write_data);
    }

    fn preempt_read_ahead(&mut self, now: Nanos) {
        if let Work::ReadAhead(c) = self.work {
            self.work = Work::Idle;
            self.finish_read_ahead(c, now);
        }
        self.stop_read_ahead(now);
    }

    fn submit_flush(&mut self, now: Nanos, command: Command, seq: u64) {
        self.stats.flushes += 1;
        if self.dirty.is_clean() {
            self.finish_at(now + self.timing.overhead_write, seq, command.id, now);
        } else {
            self.parked.push(Parked {
                command,
                seq,
                arrival: now,
                wait: Wait::Flush,
            });
        }
    }

    fn check_command(&self, command: &Command) {
        match command.op {
            Op::Flush => assert_eq!(command.sectors, 0, "flush with a length: {command:?}"),
            Op::Read | Op::Write => {
                assert!(command.sectors > 0, "empty transfer: {command:?}");
                let end = command
                    .sector
                    .checked_add(command.sectors as u64)
                    .expect("sector overflow");
                assert!(
                    end <= self.mech.geo.capacity_sectors(),
                    "{command:?} beyond the drive's capacity"
                );
            }
        }
    }

    fn check_invariants(&self) {
        let held = self.queue.len() + self.parked.len() + self.done.len();
        assert_eq!(
            held, self.outstanding as usize,
            "commands lost or duplicated"
        );
        assert!(self.outstanding <= self.depth, "queue over depth");
        assert!(
            self.dirty.sectors() <= self.dirty.capacity(),
            "write cache overfull"
        );
    }
}

impl Drive for Hdd {
    fn info(&self) -> &DriveInfo {
        &self.info
    }

    fn queue_depth(&self) -> u32 {
        self.depth
    }

    fn submit(&mut self, now: Nanos, command: Command) {
        self.run_until(now);
        assert!(
            self.outstanding < self.depth,
            "submit beyond queue depth {}",
            self.depth
        );
        self.check_command(&command);
        self.outstanding += 1;
        if command.op != Op::Flush {
            // Overheads depend on the previous command's type (exact at queue depth 1; with
            // deeper queues commands processed later use the latest arrival's set).
            let t = &mut self.timing;
            [t.overhead_read, t.overhead_write, t.overhead_hit, t.read_disconnect] =
                t.overheads_by_previous[self.last_write as usize];
            self.last_write = command.op == Op::Write;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        match command.op {
            Op::Read => self.submit_read(now, command, seq),
            Op::Write => self.submit_write(now, command, seq),
            Op::Flush => self.submit_flush(now, command, seq),
        }
        self.check_invariants();
    }

    /// The next completion, or the earliest time the arm's own work could produce one: arm
    /// steps that cannot change what the host sees before then run lazily, on the next
    /// `submit`, `advance` or `run_to` (each first steps the arm up to its time).
    // Inlined into the engine's `kick` (through `AnyDrive`), which asks after every dispatch.
    #[inline(always)]
    fn next_event(&self) -> Option<Nanos> {
        let done = self.done.last().map(|d| d.time);
        let arm = self.arm_event().and_then(|e| self.visible_from(e));
        match (done, arm) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn run_to(&mut self, now: Nanos) {
        self.run_until(now);
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        self.run_until(now);
        let mut ready = 0;
        while let Some(d) = self.done.last().copied().filter(|d| d.time <= now) {
            completed.push(Completion { id: d.id, time: d.time });
            self.done.pop();
            ready += 1;
        }
        self.outstanding -= ready as u32;
        self.check_invariants();
    }

    fn busy_nanos(&self) -> Nanos {
        let (start, end) = match self.work {
            Work::Idle => return self.busy,
            Work::Host { start, end, .. } | Work::Destage { start, end, .. } => (start, end),
            Work::ReadAhead(c) => (c.start, c.end),
        };
        self.busy + self.clock.clamp(start, end) - start
    }
}
