//! The null device: every command completes exactly `latency_us` after it is submitted, with
//! unlimited parallelism up to its queue depth. For engine tests and for measuring the engine's
//! own cost; it models no drive.
//!
//! All commands take the same latency, so they complete in submission order: a ring buffer
//! (capacity = queue depth, allocated once) is the whole state. O(1) per command.

use super::params::{self, get, ParamDecl, ParamValues};
use super::{Command, Completion, Drive, DriveInfo, Op};
use crate::error::{Error, ErrorKind, Result};
use crate::{rng::Prng, time::Nanos};
use std::collections::VecDeque;

pub const DECLARATIONS: &[ParamDecl] = &[
    ParamDecl {
        name: "latency_us",
        unit: "us",
        default: 1.0,
        // At least 1 ns: with no time per command a closed loop resubmits at the same instant
        // forever and simulated time never reaches the end of the run.
        min: 0.001,
        max: 1e9,
        doc: "Time from submit to completion of every command, in microseconds (at least 0.001).",
    },
    ParamDecl {
        name: "queue_depth",
        unit: "count",
        default: 256.0,
        min: 1.0,
        max: 1048576.0,
        doc: "Commands accepted at once; all of them are served in parallel.",
    },
    ParamDecl {
        name: "capacity_bytes",
        unit: "bytes",
        default: 1e12,
        min: 512.0,
        max: 1e18,
        doc: "Capacity reported and enforced (commands beyond it are a bug), in bytes.",
    },
];

/// Stable preset names.
pub const PRESET_NAMES: &[&str] = &["null"];
pub const PRESET_DESCRIPTION: &str = "null device: fixed latency (1 µs), unlimited parallelism";
pub const PRESET_SOURCE: &str = "none (engine test device)";

/// Parameter values of a named preset (`null`: the defaults).
pub fn preset(name: &str) -> Option<ParamValues> {
    (name == "null").then(ParamValues::new)
}

#[derive(Clone, Debug, PartialEq)]
pub struct NullSpec {
    pub latency_ns: Nanos,
    pub queue_depth: u32,
    pub capacity_bytes: u64,
}

impl NullSpec {
    pub fn from_params(values: &ParamValues) -> Result<NullSpec> {
        let v = params::resolve(DECLARATIONS, values, "null")?;
        let qd = get(&v, "queue_depth");
        if qd.fract() != 0.0 {
            return Err(Error::new(
                ErrorKind::InvalidDevice,
                format!("queue_depth = {qd} must be a whole number"),
            ));
        }
        Ok(NullSpec {
            latency_ns: (get(&v, "latency_us") * 1e3).round() as Nanos,
            queue_depth: qd as u32,
            capacity_bytes: get(&v, "capacity_bytes") as u64 / crate::SECTOR_BYTES
                * crate::SECTOR_BYTES,
        })
    }
}

pub struct NullDrive {
    spec: NullSpec,
    info: DriveInfo,
    /// (completion time, id), in completion order.
    pending: VecDeque<(Nanos, u64)>,
    now: Nanos,
    busy_ns: Nanos,
    busy_mark: Nanos,
}

impl NullDrive {
    /// The PRNG is accepted for interface uniformity; the null device draws nothing.
    pub fn new(spec: NullSpec, _prng: Prng) -> NullDrive {
        assert!(spec.queue_depth > 0);
        NullDrive {
            info: DriveInfo {
                kind: "null",
                capacity_bytes: spec.capacity_bytes,
                rpm: 0,
                interface: "none".to_string(),
                rotational: false,
            },
            pending: VecDeque::with_capacity(spec.queue_depth as usize),
            now: 0,
            busy_ns: 0,
            busy_mark: 0,
            spec,
        }
    }

    fn mark(&mut self, t: Nanos) {
        assert!(
            t >= self.busy_mark,
            "time went backwards: {t} < {}",
            self.busy_mark
        );
        if !self.pending.is_empty() {
            self.busy_ns += t - self.busy_mark;
        }
        self.busy_mark = t;
        self.now = t;
    }
}

impl Drive for NullDrive {
    fn info(&self) -> &DriveInfo {
        &self.info
    }

    fn queue_depth(&self) -> u32 {
        self.spec.queue_depth
    }

    fn submit(&mut self, now: Nanos, command: Command) {
        assert!(
            now >= self.now,
            "submit at {now} before drive time {}",
            self.now
        );
        // Completions due strictly before `now` must have been collected by `advance`.
        assert!(
            self.pending.front().is_none_or(|&(t, _)| t >= now),
            "submit at {now} with an uncollected completion due earlier"
        );
        assert!(
            (self.pending.len() as u32) < self.spec.queue_depth,
            "submit beyond queue depth {}",
            self.spec.queue_depth
        );
        match command.op {
            Op::Flush => assert_eq!(command.sectors, 0, "flush with a length"),
            Op::Read | Op::Write => {
                assert!(command.sectors > 0, "zero-length {:?}", command.op);
                assert!(
                    (command.sector + command.sectors as u64) * crate::SECTOR_BYTES
                        <= self.spec.capacity_bytes,
                    "command beyond capacity: {command:?}"
                );
            }
        }
        self.mark(now);
        let due = now + self.spec.latency_ns;
        debug_assert!(self.pending.back().is_none_or(|&(t, _)| t <= due));
        self.pending.push_back((due, command.id));
    }

    fn next_event(&self) -> Option<Nanos> {
        self.pending.front().map(|&(t, _)| t)
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        assert!(
            now >= self.now,
            "advance to {now} before drive time {}",
            self.now
        );
        while let Some(&(t, id)) = self.pending.front() {
            if t > now {
                break;
            }
            self.mark(t);
            self.pending.pop_front();
            completed.push(Completion { id, time: t });
        }
        self.mark(now);
    }

    fn busy_nanos(&self) -> Nanos {
        self.busy_ns
    }
}
