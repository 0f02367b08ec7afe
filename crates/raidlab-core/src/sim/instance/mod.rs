//! The host's (cloud instance's) limits on its block volumes: an EC2 instance
//! reaches its EBS volumes over one link with its own IOPS and bandwidth limits, baseline and
//! burst, that cap the sum of all its volumes ("Amazon EBS-optimized instances", Amazon EC2
//! User Guide: each instance type's baseline and maximum bandwidth, throughput and IOPS; "some
//! instance types can burst to their maximum performance for 30 minutes at least once every 24
//! hours"). AWS meters the burst with credit balances for I/O and for bytes (the CloudWatch
//! metrics `EBSIOBalance%` and `EBSByteBalance%`: credits drain while the instance runs above its
//! baseline and refill below it; AWS Compute Blog, "Simulating Amazon EC2 EBS burst credits
//! before downsizing an instance").
//!
//! Model: one [`HostMeter`] shared by every volume member, a serial resource in front of them
//! (I/Os pass it in the order they are submitted). It is metered as a gp2 volume is
//! (`device::volume`): operations counted as the volumes count them ([`IoCounter`]: up to 256 KiB
//! per operation for SSD-backed volumes, sequential I/O merged) and bytes, each at its rate. With
//! a burst (maximum above baseline) each dimension has a credit bucket that earns at the
//! baseline rate, spends one credit per operation (byte), and holds (maximum - baseline) x the
//! burst duration, so from full it lasts exactly the burst duration at the maximum rate; empty,
//! the meter admits I/O at the baseline rate. The daily refill guarantee is not modelled beyond
//! this bucket (runs are hours, not days). Each member gets a [`HostLimited`] drive in front of
//! it that holds commands until the meter admits them.

use crate::device::volume::{IoCounter, Volume};
use crate::device::{Command, Completion, Drive, DriveInfo, Op};
use crate::time::Nanos;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

const NS_PER_S: f64 = 1e9;

/// An instance's EBS limits, resolved (python/raidlab/hosts.py holds the presets with sources).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostLimits {
    pub baseline_iops: f64,
    /// Equal to the baseline: no burst.
    pub burst_iops: f64,
    pub baseline_bytes_s: f64,
    pub burst_bytes_s: f64,
    /// How long a full credit bucket lasts at the maximum rate (AWS: 30 minutes).
    pub burst_s: f64,
    /// The credit balances at the start, as a fraction of the buckets (1: full; CloudWatch's
    /// `EBSIOBalance%` / `EBSByteBalance%` / 100 of an instance that has burst already).
    pub start_balance: f64,
}

impl HostLimits {
    pub fn validate(&self) -> crate::error::Result<()> {
        let ok = self.baseline_iops > 0.0
            && self.baseline_bytes_s > 0.0
            && self.burst_iops >= self.baseline_iops
            && self.burst_bytes_s >= self.baseline_bytes_s
            && self.burst_s >= 0.0
            && (0.0..=1.0).contains(&self.start_balance)
            && [self.burst_iops, self.burst_bytes_s, self.burst_s].iter().all(|v| v.is_finite());
        if ok {
            Ok(())
        } else {
            Err(crate::error::Error::new(
                crate::error::ErrorKind::InvalidConfig,
                format!("host limits {self:?}: baselines must be positive and bursts at least the baselines"),
            ))
        }
    }
}

/// One dimension (operations or bytes) of the meter: its rates, credit bucket and next free time.
#[derive(Clone, Debug)]
struct Dimension {
    baseline: f64,
    burst: f64,
    capacity: f64,
    balance: f64,
    free_at: f64,
    /// When the bucket first ran dry (the burst ended), in ns.
    burst_end_ns: Option<Nanos>,
    admitted: f64,
}

impl Dimension {
    fn new(baseline: f64, burst: f64, burst_s: f64, start_balance: f64) -> Dimension {
        let capacity = (burst - baseline).max(0.0) * burst_s;
        Dimension { baseline, burst, capacity, balance: capacity * start_balance, free_at: 0.0, burst_end_ns: None, admitted: 0.0 }
    }

    fn bursting(&self) -> bool {
        self.capacity > 0.0
    }

    fn earn(&mut self, dt_s: f64) {
        self.balance = (self.balance + self.baseline * dt_s).min(self.capacity);
    }

    /// Waits (from `at`) for the credits `amount` needs; returns the time they are there.
    fn wait_for_credits(&mut self, at: f64, amount: f64) -> f64 {
        if !self.bursting() || self.balance >= amount {
            return at;
        }
        if self.burst_end_ns.is_none() {
            self.burst_end_ns = Some(at.ceil() as Nanos);
        }
        at + (amount - self.balance) / self.baseline * NS_PER_S
    }

    /// Takes `amount` at `at`: spends its credits and reserves the meter.
    fn take(&mut self, at: f64, amount: f64) {
        let rate = if self.bursting() {
            self.balance = (self.balance - amount).max(0.0);
            self.burst
        } else {
            self.baseline
        };
        self.free_at = at + amount / rate * NS_PER_S;
        self.admitted += amount;
    }
}

/// The instance's meter, shared by the drives of all its volumes.
#[derive(Clone, Debug)]
pub struct HostMeter {
    limits: HostLimits,
    ops: Dimension,
    bytes: Dimension,
    credit_time: f64,
    /// I/Os admitted and those that had to wait for the meter.
    pub ios: u64,
    pub delayed_ios: u64,
}

/// What the host's limits did in a run (for the report).
#[derive(Clone, Debug, PartialEq)]
pub struct HostReport {
    pub limits: HostLimits,
    /// When the I/O and the byte credit buckets first ran dry (None: never, or no burst).
    pub iops_burst_end_ns: Option<Nanos>,
    pub bytes_burst_end_ns: Option<Nanos>,
    pub operations: f64,
    pub bytes: f64,
    pub ios: u64,
    pub delayed_ios: u64,
    /// Credits left at the end, as fractions of the buckets (1 without a burst).
    pub io_balance: f64,
    pub byte_balance: f64,
}

impl HostMeter {
    pub fn new(limits: HostLimits) -> HostMeter {
        HostMeter {
            limits,
            ops: Dimension::new(limits.baseline_iops, limits.burst_iops, limits.burst_s, limits.start_balance),
            bytes: Dimension::new(limits.baseline_bytes_s, limits.burst_bytes_s, limits.burst_s, limits.start_balance),
            credit_time: 0.0,
            ios: 0,
            delayed_ios: 0,
        }
    }

    fn earn(&mut self, t: f64) {
        let dt = (t - self.credit_time).max(0.0) / NS_PER_S;
        self.credit_time = self.credit_time.max(t);
        self.ops.earn(dt);
        self.bytes.earn(dt);
    }

    /// The time the meter admits an I/O of `ops` operations and `bytes` bytes arriving at `now`.
    pub fn admit(&mut self, now: f64, ops: f64, bytes: f64) -> f64 {
        let mut at = now.max(self.ops.free_at).max(self.bytes.free_at);
        self.earn(at);
        at = self.ops.wait_for_credits(at, ops);
        self.earn(at);
        at = self.bytes.wait_for_credits(at, bytes);
        self.earn(at);
        self.ops.take(at, ops);
        self.bytes.take(at, bytes);
        self.ios += 1;
        if at > now {
            self.delayed_ios += 1;
        }
        at
    }

    pub fn report(&self) -> HostReport {
        let fraction = |d: &Dimension| if d.bursting() { d.balance / d.capacity } else { 1.0 };
        HostReport {
            limits: self.limits,
            iops_burst_end_ns: self.ops.burst_end_ns,
            bytes_burst_end_ns: self.bytes.burst_end_ns,
            operations: self.ops.admitted,
            bytes: self.bytes.admitted,
            ios: self.ios,
            delayed_ios: self.delayed_ios,
            io_balance: fraction(&self.ops),
            byte_balance: fraction(&self.bytes),
        }
    }

    /// Checks the meter's bookkeeping.
    pub fn check(&self) {
        for d in [&self.ops, &self.bytes] {
            assert!((0.0..=d.capacity).contains(&d.balance), "credit balance outside its bucket");
            assert!(d.free_at >= 0.0 && d.admitted >= 0.0);
        }
        assert!(self.delayed_ios <= self.ios);
    }
}

/// A volume member behind the instance's meter: commands wait here until the meter admits
/// them, then go to the volume (whose own meters apply after).
pub struct HostLimited {
    inner: Box<dyn Drive>,
    meter: Rc<RefCell<HostMeter>>,
    counter: IoCounter,
    /// Commands admitted at a later time, in admission order (the meter's times only grow).
    waiting: VecDeque<(Nanos, Command)>,
}

impl HostLimited {
    /// `drive` must be a cloud volume ([`Volume`]): the instance's EBS limits apply to those.
    pub fn new(drive: Box<dyn Drive>, meter: Rc<RefCell<HostMeter>>) -> HostLimited {
        let unit = (*drive).as_any().downcast_ref::<Volume>().expect("host limits apply to volumes").io_unit_sectors();
        HostLimited { inner: drive, meter, counter: IoCounter::new(unit), waiting: VecDeque::new() }
    }

    /// Hands the volume every command admitted by `now`, each at its admission time.
    fn release(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        while let Some(&(at, command)) = self.waiting.front() {
            if at > now {
                break;
            }
            self.waiting.pop_front();
            self.inner.advance(at, completed);
            self.inner.submit(at, command);
        }
    }
}

impl Drive for HostLimited {
    fn info(&self) -> &DriveInfo {
        self.inner.info()
    }

    fn queue_depth(&self) -> u32 {
        self.inner.queue_depth()
    }

    fn submit(&mut self, now: Nanos, command: Command) {
        if command.op == Op::Flush {
            self.inner.submit(now, command);
            return;
        }
        let ops = self.counter.count(command.sector, command.sectors as u64);
        let bytes = command.sectors as f64 * crate::SECTOR_BYTES as f64;
        let at = self.meter.borrow_mut().admit(now as f64, ops, bytes).ceil() as Nanos;
        if at <= now && self.waiting.is_empty() {
            self.inner.submit(now, command);
        } else {
            self.waiting.push_back((at.max(now), command));
        }
    }

    fn next_event(&self) -> Option<Nanos> {
        let waiting = self.waiting.front().map(|w| w.0);
        match (self.inner.next_event(), waiting) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        self.release(now, completed);
        self.inner.advance(now, completed);
    }

    fn run_to(&mut self, now: Nanos) {
        self.inner.run_to(now);
    }

    fn busy_nanos(&self) -> Nanos {
        self.inner.busy_nanos()
    }
}

/// Puts the instance's meter in front of every member when the run has host limits;
/// they apply to cloud volumes only.
pub(crate) fn limit_by_host(config: &crate::sim::engine::SimConfig, drives: Vec<Box<dyn Drive>>) -> crate::error::Result<(Vec<Box<dyn Drive>>, Option<std::rc::Rc<std::cell::RefCell<crate::sim::instance::HostMeter>>>)> {
    use crate::sim::instance::{HostLimited, HostMeter};
    let Some(limits) = config.host_limits else { return Ok((drives, None)) };
    limits.validate()?;
    if let Some(other) = drives.iter().find(|d| d.info().kind != "volume") {
        return Err(crate::sim::engine::config_error(format!(
            "a host's EBS limits apply to cloud volume members (kind volume); this array's members are kind {}",
            other.info().kind
        )));
    }
    let meter = std::rc::Rc::new(std::cell::RefCell::new(HostMeter::new(limits)));
    let limited = drives.into_iter().map(|d| Box::new(HostLimited::new(d, meter.clone())) as Box<dyn Drive>).collect();
    Ok((limited, Some(meter)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's m5.large: 3,600 / 18,750 IOPS, 81.25 / 593.75 MB/s, 30 minutes of burst.
    fn m5_large() -> HostLimits {
        HostLimits { baseline_iops: 3600.0, burst_iops: 18750.0, baseline_bytes_s: 81.25e6, burst_bytes_s: 593.75e6, burst_s: 1800.0, start_balance: 1.0 }
    }

    #[test]
    fn a_burst_lasts_its_budget_then_falls_to_the_baseline() {
        // Back-to-back 16 KiB I/Os (one operation each): 18,750/s until the bucket of
        // (18,750 - 3,600) x 1,800 = 27.27 M credits is empty, at 1,800 s; then 3,600/s.
        let mut meter = HostMeter::new(m5_large());
        let mut at = 0.0;
        let mut ios = 0u64;
        while at < 1700.0 * NS_PER_S {
            at = meter.admit(at, 1.0, 16384.0);
            ios += 1;
        }
        assert!(meter.report().iops_burst_end_ns.is_none());
        assert!((ios as f64 / 1700.0 - 18750.0).abs() < 0.01 * 18750.0, "{}", ios as f64 / 1700.0);
        while at < 1900.0 * NS_PER_S {
            at = meter.admit(at, 1.0, 16384.0);
        }
        let end_s = meter.report().iops_burst_end_ns.unwrap() as f64 / NS_PER_S;
        assert!((end_s - 1800.0).abs() < 1.0, "{end_s}");
        let (start, before) = (at, meter.ios);
        while at < start + 100.0 * NS_PER_S {
            at = meter.admit(at, 1.0, 16384.0);
        }
        let rate = (meter.ios - before) as f64 / 100.0;
        assert!((rate - 3600.0).abs() < 0.01 * 3600.0, "{rate}");
        meter.check();
    }

    #[test]
    fn bytes_cap_large_ios() {
        // 1 MiB I/Os (four operations each) on m5.4xlarge (593.75 MB/s, no burst): bytes bind.
        let limits = HostLimits { baseline_iops: 18750.0, burst_iops: 18750.0, baseline_bytes_s: 593.75e6, burst_bytes_s: 593.75e6, burst_s: 0.0, start_balance: 1.0 };
        let mut meter = HostMeter::new(limits);
        let mut at = 0.0;
        for _ in 0..10_000 {
            at = meter.admit(at, 4.0, 1048576.0);
        }
        let mb_s = 10_000.0 * 1048576.0 / (at / NS_PER_S) / 1e6;
        assert!((mb_s - 593.75).abs() < 0.01 * 593.75, "{mb_s}");
        assert_eq!(meter.report().bytes_burst_end_ns, None);
    }
}
