//! How a drive behaves in an array beyond its mechanics: idle power management
//! (heads parked on the ramp, spindle stopped) and what it does with a sector it cannot read
//! (error recovery control, or none), against the host's command timeout.
//!
//! [`Behaviour`] is read from the drive's parameters (declared in [`DECLARATIONS`], appended to
//! the HDD model's); [`Behaved`] wraps any [`Drive`] and adds that behaviour. The engine wraps a
//! member only when its behaviour can show (an idle timer, or a scripted latent error), so a run
//! without either is the bare model, command for command.
//!
//! Facts behind the figures:
//! - ERC: ATA SCT Error Recovery Control (`smartctl -l scterc,READ,WRITE`, deciseconds; "for
//!   RAID configurations, this is typically set to 70,70", smartctl(8)). WD calls it TLER: "the
//!   hard drive will only spend 7 seconds to attempt to recover", and a desktop drive without it
//!   "will enter into a deep recovery cycle ... This process can take up to 2 minutes" (WD
//!   knowledge base answer 1397, "Difference between Desktop edition and RAID (Enterprise)
//!   edition drives"). The Linux raid wiki ("Timeout Mismatch") says desktop drives "can take
//!   over two minutes to give up"; 180 s covers every known one.
//! - The host's timeout: the SCSI disk driver's default command timeout is 30 s (`SD_TIMEOUT`,
//!   drivers/scsi/sd.h, `30 * HZ`), per device in `/sys/block/sdX/device/timeout`. When it
//!   expires the error handler resets the device, the I/O fails, md computes the block and
//!   tries to write it back while the drive is still busy retrying, the write fails and md
//!   fails the member (`md_error`): the array is degraded by a read error (raid wiki, ibid.).
//! - Idle: WD Green drives unload their heads after 8 s idle (the "idle3" timer, read and set by
//!   `idle3ctl`/`wdidle3`); a standby (spin-down) timer is the host's `hdparm -S` or the drive's
//!   own power management. Wake latencies after Seagate's PowerChoice idle states [memory]: heads
//!   unloaded (Idle_B) ≈ 0.5 s to serve again, spindle stopped (Standby_Z) ≈ 8 s to spin up.

use super::params::{self, ParamDecl, ParamValues};
use super::{Command, Completion, Drive, DriveInfo, Op};
use crate::rng::Prng;
use crate::time::Nanos;
use std::collections::VecDeque;

const NS_PER_S: f64 = 1e9;

/// The behaviour parameters, appended to the HDD model's declarations.
pub const DECLARATIONS: &[ParamDecl] = &[
    ParamDecl {
        name: "idle_park_s",
        unit: "s",
        default: 0.0,
        min: 0.0,
        max: 86400.0,
        doc: "Idle time before the heads unload to the ramp (WD Green idle3 timer: 8 s); 0: never.",
    },
    ParamDecl {
        name: "park_wake_ms",
        unit: "ms",
        default: 500.0,
        min: 0.0,
        max: 60000.0,
        doc: "Time to load the heads again before the first command after a park.",
    },
    ParamDecl {
        name: "spin_down_s",
        unit: "s",
        default: 0.0,
        min: 0.0,
        max: 86400.0,
        doc: "Idle time before the spindle stops (standby timer, hdparm -S); 0: never.",
    },
    ParamDecl {
        name: "spin_up_s",
        unit: "s",
        default: 8.0,
        min: 0.0,
        max: 120.0,
        doc: "Time to spin up from standby before the first command.",
    },
    ParamDecl {
        name: "erc_read_s",
        unit: "s",
        default: 7.0,
        min: 0.0,
        max: 6553.5,
        doc: "Error recovery limit for reads (SCT ERC/TLER/CCTL; RAID drives 7 s); 0: none, the drive retries for its full recovery time.",
    },
    ParamDecl {
        name: "recovery_s_min",
        unit: "s",
        default: 10.0,
        min: 0.0,
        max: 3600.0,
        doc: "Shortest deep recovery of an unreadable sector (the drive's own retries, without ERC).",
    },
    ParamDecl {
        name: "recovery_s_max",
        unit: "s",
        default: 120.0,
        min: 0.0,
        max: 3600.0,
        doc: "Longest deep recovery (WD: up to 2 minutes); the time is uniform between the two.",
    },
    ParamDecl {
        name: "ure_per_bit",
        unit: "per bit",
        default: 0.0,
        min: 0.0,
        max: 1e-3,
        doc: "Unreadable sectors met in a simulation, per bit read (datasheets: 1e-14 desktop, 1e-15 enterprise); 0: only scripted latent errors.",
    },
];

/// One drive's behaviour, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Behaviour {
    pub idle_park_ns: Nanos,
    pub park_wake_ns: Nanos,
    pub spin_down_ns: Nanos,
    pub spin_up_ns: Nanos,
    /// `None`: no error recovery control.
    pub erc_read_ns: Option<Nanos>,
    pub recovery_ns_min: Nanos,
    pub recovery_ns_max: Nanos,
    /// Unreadable sectors per bit read, drawn per read command (0: none but scripted ones).
    pub ure_per_bit: f64,
}

impl Default for Behaviour {
    /// The declared defaults: no idle timers, ERC at 7 s.
    fn default() -> Behaviour {
        Behaviour::from_params(&ParamValues::new()).expect("declared defaults are valid")
    }
}

fn ns(seconds: f64) -> Nanos {
    (seconds * NS_PER_S).round() as Nanos
}

impl Behaviour {
    /// Reads the behaviour parameters from a drive's values (others are ignored).
    pub fn from_params(values: &ParamValues) -> crate::error::Result<Behaviour> {
        let mut v = ParamValues::new();
        for decl in DECLARATIONS {
            let value = values.get(decl.name).copied().unwrap_or(decl.default);
            v.insert(decl.name.to_string(), decl.check(value)?);
        }
        let (lo, hi) = (params::get(&v, "recovery_s_min"), params::get(&v, "recovery_s_max"));
        if lo > hi {
            return Err(crate::error::Error::device(format!("recovery_s_min = {lo} exceeds recovery_s_max = {hi}")));
        }
        let erc = params::get(&v, "erc_read_s");
        Ok(Behaviour {
            idle_park_ns: ns(params::get(&v, "idle_park_s")),
            park_wake_ns: ns(params::get(&v, "park_wake_ms") / 1e3),
            spin_down_ns: ns(params::get(&v, "spin_down_s")),
            spin_up_ns: ns(params::get(&v, "spin_up_s")),
            erc_read_ns: (erc > 0.0).then(|| ns(erc)),
            recovery_ns_min: ns(lo),
            recovery_ns_max: ns(hi),
            ure_per_bit: params::get(&v, "ure_per_bit"),
        })
    }

    /// Whether idle timers can delay a command.
    pub fn has_idle_timers(&self) -> bool {
        self.idle_park_ns > 0 || self.spin_down_ns > 0
    }

    /// Whether the drive can show its behaviour without a scripted event (idle timers, or
    /// unreadable sectors drawn from its error rate).
    pub fn shows_by_itself(&self) -> bool {
        self.has_idle_timers() || self.ure_per_bit > 0.0
    }

    /// P(a read of `sectors` meets an unreadable sector): 1 − (1 − u)^(8 · bytes) (the UBER
    /// arithmetic of reliability/ure.rs).
    pub fn p_read_error(&self, sectors: u32) -> f64 {
        if self.ure_per_bit <= 0.0 {
            return 0.0;
        }
        -libm::expm1(8.0 * 512.0 * sectors as f64 * libm::log1p(-self.ure_per_bit))
    }

    /// The wake latency a command pays after the drive was idle for `idle_ns`.
    pub fn wake_ns(&self, idle_ns: Nanos) -> Nanos {
        if self.spin_down_ns > 0 && idle_ns >= self.spin_down_ns {
            self.spin_up_ns
        } else if self.idle_park_ns > 0 && idle_ns >= self.idle_park_ns {
            self.park_wake_ns
        } else {
            0
        }
    }

    /// How long the drive works on an unreadable sector before it reports the error: its deep
    /// recovery (uniform between the bounds: a modelling choice, the documents give only the
    /// upper end), cut at the ERC limit when it has one.
    pub fn recovery_ns(&self, prng: &mut Prng) -> Nanos {
        let span = self.recovery_ns_max - self.recovery_ns_min;
        let deep = self.recovery_ns_min + (span as f64 * prng.unit_f64()) as Nanos;
        match self.erc_read_ns {
            Some(limit) => deep.min(limit),
            None => deep,
        }
    }

    /// P(recovery time > `timeout_ns`) under the same distribution (for reliability).
    pub fn p_recovery_over(&self, timeout_ns: Nanos) -> f64 {
        let (lo, hi) = (self.recovery_ns_min, self.recovery_ns_max);
        let hi_capped = self.erc_read_ns.map_or(hi, |limit| hi.min(limit));
        if timeout_ns >= hi_capped {
            return 0.0;
        }
        if timeout_ns < lo || hi == lo {
            return 1.0;
        }
        (hi - timeout_ns) as f64 / (hi - lo) as f64
    }
}

/// How a command ended, when not plainly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The drive gave up on an unreadable sector and reported a medium error (within the
    /// timeout).
    ReadError,
    /// The host's command timer expired while the drive was still recovering: the I/O failed
    /// and the drive is dropped.
    Timeout,
    /// The drive was dropped (a timeout): every command it still had fails at once.
    Offline,
}

#[derive(Clone, Copy, Debug)]
struct Held {
    command: Command,
    /// When the host gave the command to the drive (its timer starts, blk_add_timer).
    submitted: Nanos,
    /// It meets an unreadable sector drawn from the drive's error rate.
    unreadable: bool,
}

/// The command the drive is recovering.
#[derive(Clone, Copy, Debug)]
struct Recovery {
    id: u64,
    /// When it ends: the drive's report, or the host's timer, whichever is first.
    ends: Nanos,
    fault: Fault,
}

/// Counters for reports and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BehaviourStats {
    /// Commands that waited for the heads to load or the spindle to spin up.
    pub wakes: u64,
    pub wake_ns: Nanos,
    pub read_errors: u64,
    pub timeouts: u64,
}

/// A drive with [`Behaviour`]: commands wait while it wakes or recovers a sector.
pub struct Behaved {
    inner: Box<dyn Drive>,
    spec: Behaviour,
    timeout_ns: Nanos,
    prng: Prng,
    /// Commands accepted and not yet given to the inner drive, in order.
    held: VecDeque<Held>,
    in_inner: u32,
    /// Commands accepted and not completed (held, recovering and in the inner drive).
    outstanding: u32,
    idle_since: Nanos,
    /// Held commands may go to the inner drive from this time (the wake ends).
    ready_at: Nanos,
    /// A latent error waits for the next read.
    armed: bool,
    /// The unreadable sectors (first, count) until a write covers them (the drive reallocates).
    bad: Vec<(u64, u32)>,
    recovery: Option<Recovery>,
    offline: bool,
    /// Completions and faults of the wrapper's own (recovery, offline) not yet reported.
    own: Vec<(Completion, Fault)>,
    /// Faults reported with the last `advance`, by command id.
    faults: Vec<(u64, Fault)>,
    recovery_busy_ns: Nanos,
    pub stats: BehaviourStats,
}

impl Behaved {
    pub fn new(inner: Box<dyn Drive>, spec: Behaviour, timeout_ns: Nanos, prng: Prng) -> Behaved {
        Behaved {
            inner,
            spec,
            timeout_ns,
            prng,
            held: VecDeque::new(),
            in_inner: 0,
            outstanding: 0,
            idle_since: 0,
            ready_at: 0,
            armed: false,
            bad: Vec::new(),
            recovery: None,
            offline: false,
            own: Vec::new(),
            faults: Vec::new(),
            recovery_busy_ns: 0,
            stats: BehaviourStats::default(),
        }
    }

    /// A latent sector error: the next read the drive services meets a sector it cannot read.
    pub fn arm_latent_error(&mut self) {
        self.armed = true;
    }

    /// A new drive takes this one's place (md recovery onto a replacement or spare). Commands
    /// the old drive still held (waiting for its wake or its recovery) fail with it; those in
    /// its mechanics complete as they would have.
    pub fn replaced(&mut self, now: Nanos) {
        if let Some(recovery) = self.recovery.take() {
            self.own.push((Completion { id: recovery.id, time: now }, Fault::Offline));
        }
        for held in std::mem::take(&mut self.held) {
            self.own.push((Completion { id: held.command.id, time: now }, Fault::Offline));
        }
        self.offline = false;
        self.armed = false;
        self.bad.clear();
        self.idle_since = now;
        self.ready_at = now;
    }

    pub fn is_offline(&self) -> bool {
        self.offline
    }

    /// Faults of the commands the last `advance` completed.
    pub fn take_faults(&mut self, out: &mut Vec<(u64, Fault)>) {
        out.append(&mut self.faults);
    }

    fn hits_bad(&self, command: &Command) -> bool {
        self.bad.iter().any(|&(first, n)| overlaps(command, first, n))
    }

    /// Gives held commands to the inner drive while it may take them.
    fn pump(&mut self, now: Nanos) {
        if self.recovery.is_some() || self.offline || now < self.ready_at {
            return;
        }
        while let Some(&head) = self.held.front() {
            let command = head.command;
            if command.op == Op::Write {
                // md's rewrite: the drive reallocates the sectors a write covers.
                self.bad.retain(|&(first, n)| !overlaps(&command, first, n));
            }
            let error = command.op == Op::Read && (head.unreadable || self.armed || self.hits_bad(&command));
            if error {
                // The drive works on the sector alone, once what it had queued is done.
                if self.in_inner > 0 {
                    return;
                }
                self.held.pop_front();
                self.start_recovery(now, head);
                return;
            }
            self.held.pop_front();
            self.inner.submit(now, command);
            self.in_inner += 1;
        }
    }

    /// Draws whether a read of `sectors` meets an unreadable sector (no draw at rate 0, so a
    /// drive without the rate uses its PRNG for recovery times alone).
    fn prng_chance(&mut self, sectors: u32) -> bool {
        let p = self.spec.p_read_error(sectors);
        p > 0.0 && self.prng.chance(p)
    }

    fn start_recovery(&mut self, now: Nanos, head: Held) {
        if self.armed || head.unreadable {
            self.armed &= head.unreadable; // a drawn error leaves the scripted one for the next read
            self.bad.push((head.command.sector, head.command.sectors));
        }
        let reported = now + self.spec.recovery_ns(&mut self.prng);
        // The host's timer started when the command (or an older one still held) was sent.
        let oldest = self.held.iter().map(|h| h.submitted).fold(head.submitted, Nanos::min);
        let deadline = if self.timeout_ns > 0 { oldest + self.timeout_ns } else { Nanos::MAX };
        let (ends, fault) = if deadline < reported { (deadline.max(now), Fault::Timeout) } else { (reported, Fault::ReadError) };
        self.recovery_busy_ns += ends - now;
        self.recovery = Some(Recovery { id: head.command.id, ends, fault });
    }

    fn finish_recovery(&mut self, now: Nanos) {
        let Some(recovery) = self.recovery else { return };
        if now < recovery.ends {
            return;
        }
        self.recovery = None;
        self.own.push((Completion { id: recovery.id, time: now }, recovery.fault));
        match recovery.fault {
            Fault::Timeout => {
                self.stats.timeouts += 1;
                self.offline = true;
                for held in std::mem::take(&mut self.held) {
                    self.own.push((Completion { id: held.command.id, time: now }, Fault::Offline));
                }
            }
            _ => self.stats.read_errors += 1,
        }
    }
}

impl Drive for Behaved {
    fn info(&self) -> &DriveInfo {
        self.inner.info()
    }
    fn queue_depth(&self) -> u32 {
        self.inner.queue_depth()
    }
    fn submit(&mut self, now: Nanos, command: Command) {
        if self.offline {
            self.outstanding += 1;
            self.own.push((Completion { id: command.id, time: now }, Fault::Offline));
            return;
        }
        if self.outstanding == 0 {
            let wake = self.spec.wake_ns(now - self.idle_since);
            if wake > 0 {
                self.stats.wakes += 1;
                self.stats.wake_ns += wake;
                self.ready_at = self.ready_at.max(now + wake);
            }
        }
        self.outstanding += 1;
        let unreadable = command.op == Op::Read && self.prng_chance(command.sectors);
        self.held.push_back(Held { command, submitted: now, unreadable });
        self.pump(now);
    }
    fn next_event(&self) -> Option<Nanos> {
        let mut next = self.inner.next_event();
        let mut at = |t: Nanos| next = Some(next.map_or(t, |n: Nanos| n.min(t)));
        if let Some(first) = self.own.first() {
            at(first.0.time);
        }
        if let Some(recovery) = self.recovery {
            at(recovery.ends);
        } else if !self.held.is_empty() && !self.offline && self.in_inner == 0 {
            at(self.ready_at);
        }
        next
    }
    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        let before = completed.len();
        self.inner.advance(now, completed);
        self.in_inner -= (completed.len() - before) as u32;
        self.finish_recovery(now);
        for (completion, fault) in std::mem::take(&mut self.own) {
            completed.push(completion);
            self.faults.push((completion.id, fault));
        }
        self.outstanding -= (completed.len() - before) as u32;
        if self.outstanding == 0 {
            self.idle_since = now;
        }
        self.pump(now);
    }
    fn run_to(&mut self, now: Nanos) {
        self.inner.run_to(now);
    }
    fn busy_nanos(&self) -> Nanos {
        self.inner.busy_nanos() + self.recovery_busy_ns
    }
}

fn overlaps(command: &Command, first: u64, sectors: u32) -> bool {
    command.sector < first + sectors as u64 && first < command.sector + command.sectors as u64
}

/// The behaviour of a drive built from `values` of model `kind` (only HDDs declare it; other
/// models behave as the defaults say: no idle timers, ERC).
pub fn for_drive(kind: super::catalog::DriveKind, values: &ParamValues) -> Behaviour {
    match kind {
        super::catalog::DriveKind::Hdd => Behaviour::from_params(values).unwrap_or_default(),
        _ => Behaviour::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::null::{NullDrive, NullSpec};

    fn drive(values: &[(&str, f64)], timeout_s: f64) -> Behaved {
        let values: ParamValues = values.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        let spec = Behaviour::from_params(&values).unwrap();
        let inner = Box::new(NullDrive::new(NullSpec::from_params(&ParamValues::new()).unwrap(), Prng::new(1)));
        Behaved::new(inner, spec, ns(timeout_s), Prng::new(2))
    }

    fn run(d: &mut Behaved, mut now: Nanos, done: &mut Vec<Completion>) -> Nanos {
        while let Some(t) = d.next_event() {
            now = t.max(now);
            d.advance(now, done);
        }
        now
    }

    fn read(id: u64) -> Command {
        Command { id, op: Op::Read, sector: 100, sectors: 8 }
    }

    #[test]
    fn a_parked_drive_pays_the_wake_once() {
        let mut d = drive(&[("idle_park_s", 8.0), ("park_wake_ms", 500.0)], 30.0);
        let mut done = Vec::new();
        d.submit(ns(10.0), read(1));
        run(&mut d, ns(10.0), &mut done);
        assert!(done[0].time >= ns(10.5) && done[0].time < ns(10.501), "{:?}", done);
        d.submit(done[0].time + 1000, read(2));
        let t = run(&mut d, done[0].time, &mut done);
        assert!(t < ns(10.501), "no second wake within the timer");
        assert_eq!(d.stats.wakes, 1);
    }

    #[test]
    fn without_erc_the_timeout_drops_the_drive_and_with_erc_it_reports() {
        let mut d = drive(&[("erc_read_s", 0.0), ("recovery_s_min", 60.0), ("recovery_s_max", 60.0)], 30.0);
        d.arm_latent_error();
        let mut done = Vec::new();
        d.submit(ns(1.0), read(1));
        d.submit(ns(2.0), read(2));
        run(&mut d, ns(1.0), &mut done);
        assert_eq!(done.iter().map(|c| c.time).collect::<Vec<_>>(), vec![ns(31.0), ns(31.0)]);
        let mut faults = Vec::new();
        d.take_faults(&mut faults);
        assert_eq!(faults, vec![(1, Fault::Timeout), (2, Fault::Offline)]);
        assert!(d.is_offline());

        let mut d = drive(&[("erc_read_s", 7.0)], 30.0);
        d.arm_latent_error();
        let mut done = Vec::new();
        d.submit(ns(1.0), read(1));
        run(&mut d, ns(1.0), &mut done);
        assert_eq!(done[0].time, ns(8.0));
        let mut faults = Vec::new();
        d.take_faults(&mut faults);
        assert_eq!(faults, vec![(1, Fault::ReadError)]);
        // The sector stays bad until a write covers it.
        d.submit(ns(9.0), Command { id: 3, op: Op::Write, sector: 100, sectors: 8 });
        d.submit(ns(9.0), read(4));
        let t = run(&mut d, ns(9.0), &mut done);
        assert!(t < ns(9.1), "read after the rewrite is served at once, at {t}");
    }

    #[test]
    fn recovery_over_timeout_probability() {
        let spec = Behaviour::from_params(&[("erc_read_s".to_string(), 0.0)].into_iter().collect()).unwrap();
        assert!((spec.p_recovery_over(ns(30.0)) - 90.0 / 110.0).abs() < 1e-12);
        assert_eq!(Behaviour::default().p_recovery_over(ns(30.0)), 0.0);
    }
}
