//! The empirical drive: a device described by what was measured on it, not by its mechanism.
//!
//! `raidlab calibrate` fits it when neither the HDD nor the SSD model reproduces a device's
//! sweep (a virtual disk, a cached array, a network volume). It has three parts:
//!
//! 1. **Access time**, per direction, drawn from a latency distribution given by its minimum and
//!    fio's 17 default percentiles (`read_us_min`, `read_us_p1`, ..., `read_us_p99_99`; the same
//!    for writes): inverse-transform sampling between the knots u = 0, 0.01, 0.05, 0.1, 0.2,
//!    ..., 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, with the last knot held up to u = 1
//!    (the tail above p99.99 is cut off). Between two knots a and b the value is
//!    a + (b − a)·t^`read_shape` (t the position in the interval): shape 1 is linear
//!    interpolation, a larger shape keeps most of an interval near its lower knot, as a
//!    bimodal device (fast hits, rare slow misses) does; `raidlab calibrate` picks the shape
//!    that makes the model's mean equal the measured mean. The values are the measured
//!    queue-depth-1 latencies of the smallest block size, minus its transfer time.
//! 2. **Contention and parallelism**: a command's drawn access time is stretched by
//!    (1 + `read_contention` × n), n the number of other commands in their access phase when it
//!    starts (a device whose latency grows with its queue: a closed loop at depth D then gives
//!    IOPS ≈ D / (access × (1 + contention × (D − 1))), rising with depth ever more slowly), and
//!    the device serves at most `read_parallelism` reads, or `write_parallelism` writes, at once;
//!    a mix shares one capacity (a read takes 1/`read_parallelism` of it, a write
//!    1/`write_parallelism`), admitted in arrival order (FIFO, so a large share cannot starve).
//! 3. **Transfer**: after its access a command moves its bytes through one shared pipe (FIFO) at
//!    `read_mb_s` or `write_mb_s`; this is the bandwidth ceiling and the size-dependent part of
//!    the latency. A command completes when its transfer ends.
//!
//! A flush waits for the device to be idle (it takes the whole capacity, in order) and holds it
//! for `flush_us`. The state is a FIFO of waiting commands, a heap of events and two integers;
//! each command costs O(log outstanding).

use super::params::{self, get, ParamDecl, ParamValues};
use super::{Command, Completion, Drive, DriveInfo, Op};
use crate::error::{Error, Result};
use crate::{rng::Prng, time::Nanos};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Total capacity in units; a command takes `CAPACITY / parallelism` of them.
const CAPACITY: u64 = 1 << 32;
/// Cumulative probabilities of the quantile knots: 0 and fio's default percentile_list.
const KNOTS: [f64; 18] = [
    0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999,
];
/// Suffixes of the quantile parameters, in knot order.
pub const QUANTILES: [&str; 18] = [
    "min", "p1", "p5", "p10", "p20", "p30", "p40", "p50", "p60", "p70", "p80", "p90", "p95", "p99",
    "p99_5", "p99_9", "p99_95", "p99_99",
];

macro_rules! decl {
    ($name:expr, $unit:expr, $default:expr, $min:expr, $max:expr, $doc:expr) => {
        ParamDecl { name: $name, unit: $unit, default: $default, min: $min, max: $max, doc: $doc }
    };
}

/// Every parameter the empirical model reads. The defaults describe a plain SATA SSD at queue
/// depth 1 (about 100 µs reads, 60 µs writes): only a placeholder, the model is meant to be fitted.
pub const DECLARATIONS: &[ParamDecl] = &[
    decl!("capacity_bytes", "bytes", 1e12, 512.0, 1e18, "Capacity reported, in bytes (the span that was measured)."),
    decl!("queue_depth", "count", 128.0, 1.0, 65536.0, "Commands the device accepts at once."),
    decl!("read_us_min", "us", 80.0, 0.0, 1e8, "Read access time, minimum."),
    decl!("read_us_p1", "us", 82.0, 0.0, 1e8, "Read access time, 1st percentile."),
    decl!("read_us_p5", "us", 84.0, 0.0, 1e8, "Read access time, 5th percentile."),
    decl!("read_us_p10", "us", 85.0, 0.0, 1e8, "Read access time, 10th percentile."),
    decl!("read_us_p20", "us", 88.0, 0.0, 1e8, "Read access time, 20th percentile."),
    decl!("read_us_p30", "us", 90.0, 0.0, 1e8, "Read access time, 30th percentile."),
    decl!("read_us_p40", "us", 92.0, 0.0, 1e8, "Read access time, 40th percentile."),
    decl!("read_us_p50", "us", 95.0, 0.0, 1e8, "Read access time, median."),
    decl!("read_us_p60", "us", 98.0, 0.0, 1e8, "Read access time, 60th percentile."),
    decl!("read_us_p70", "us", 100.0, 0.0, 1e8, "Read access time, 70th percentile."),
    decl!("read_us_p80", "us", 105.0, 0.0, 1e8, "Read access time, 80th percentile."),
    decl!("read_us_p90", "us", 110.0, 0.0, 1e8, "Read access time, 90th percentile."),
    decl!("read_us_p95", "us", 120.0, 0.0, 1e8, "Read access time, 95th percentile."),
    decl!("read_us_p99", "us", 150.0, 0.0, 1e8, "Read access time, 99th percentile."),
    decl!("read_us_p99_5", "us", 180.0, 0.0, 1e8, "Read access time, 99.5th percentile."),
    decl!("read_us_p99_9", "us", 300.0, 0.0, 1e8, "Read access time, 99.9th percentile."),
    decl!("read_us_p99_95", "us", 500.0, 0.0, 1e8, "Read access time, 99.95th percentile."),
    decl!("read_us_p99_99", "us", 1000.0, 0.0, 1e8, "Read access time, 99.99th percentile (and the maximum drawn)."),
    decl!("write_us_min", "us", 40.0, 0.0, 1e8, "Write access time, minimum."),
    decl!("write_us_p1", "us", 41.0, 0.0, 1e8, "Write access time, 1st percentile."),
    decl!("write_us_p5", "us", 43.0, 0.0, 1e8, "Write access time, 5th percentile."),
    decl!("write_us_p10", "us", 45.0, 0.0, 1e8, "Write access time, 10th percentile."),
    decl!("write_us_p20", "us", 47.0, 0.0, 1e8, "Write access time, 20th percentile."),
    decl!("write_us_p30", "us", 49.0, 0.0, 1e8, "Write access time, 30th percentile."),
    decl!("write_us_p40", "us", 52.0, 0.0, 1e8, "Write access time, 40th percentile."),
    decl!("write_us_p50", "us", 55.0, 0.0, 1e8, "Write access time, median."),
    decl!("write_us_p60", "us", 58.0, 0.0, 1e8, "Write access time, 60th percentile."),
    decl!("write_us_p70", "us", 61.0, 0.0, 1e8, "Write access time, 70th percentile."),
    decl!("write_us_p80", "us", 65.0, 0.0, 1e8, "Write access time, 80th percentile."),
    decl!("write_us_p90", "us", 70.0, 0.0, 1e8, "Write access time, 90th percentile."),
    decl!("write_us_p95", "us", 80.0, 0.0, 1e8, "Write access time, 95th percentile."),
    decl!("write_us_p99", "us", 120.0, 0.0, 1e8, "Write access time, 99th percentile."),
    decl!("write_us_p99_5", "us", 200.0, 0.0, 1e8, "Write access time, 99.5th percentile."),
    decl!("write_us_p99_9", "us", 500.0, 0.0, 1e8, "Write access time, 99.9th percentile."),
    decl!("write_us_p99_95", "us", 1000.0, 0.0, 1e8, "Write access time, 99.95th percentile."),
    decl!("write_us_p99_99", "us", 2000.0, 0.0, 1e8, "Write access time, 99.99th percentile (and the maximum drawn)."),
    decl!("read_shape", "exponent", 1.0, 0.01, 100.0, "Read interpolation between knots: value = a + (b − a)·t^shape (1 = linear)."),
    decl!("write_shape", "exponent", 1.0, 0.01, 100.0, "Write interpolation between knots (as read_shape)."),
    decl!("read_parallelism", "count", 4.0, 1.0, 65536.0, "Reads in their access phase at once (a whole number)."),
    decl!("write_parallelism", "count", 4.0, 1.0, 65536.0, "Writes in their access phase at once (a whole number)."),
    decl!("read_contention", "fraction", 0.0, 0.0, 100.0, "Read access time grows by this fraction per other command in service."),
    decl!("write_contention", "fraction", 0.0, 0.0, 100.0, "Write access time grows by this fraction per other command in service."),
    decl!("read_mb_s", "MB/s", 500.0, 0.001, 1e7, "Read transfer rate of the shared data pipe, MB/s (10^6 B/s)."),
    decl!("write_mb_s", "MB/s", 450.0, 0.001, 1e7, "Write transfer rate of the shared data pipe, MB/s (10^6 B/s)."),
    decl!("flush_us", "us", 0.0, 0.0, 1e8, "Time a flush holds the idle device, in microseconds."),
];

/// A validated empirical description in integer units.
#[derive(Clone, Debug, PartialEq)]
pub struct EmpiricalSpec {
    pub capacity_bytes: u64,
    pub queue_depth: u32,
    /// Access-time quantiles at [`KNOTS`], nanoseconds, non-decreasing.
    pub read_quantiles_ns: [f64; 18],
    pub write_quantiles_ns: [f64; 18],
    pub read_shape: f64,
    pub write_shape: f64,
    pub read_contention: f64,
    pub write_contention: f64,
    pub read_parallelism: u32,
    pub write_parallelism: u32,
    /// Transfer cost in femtoseconds per byte.
    pub read_fs_per_byte: u64,
    pub write_fs_per_byte: u64,
    pub flush_ns: Nanos,
}



fn quantiles(values: &ParamValues, direction: &str) -> Result<[f64; 18]> {
    let mut out = [0.0; 18];
    for (i, suffix) in QUANTILES.iter().enumerate() {
        out[i] = get(values, &format!("{direction}_us_{suffix}")) * 1e3;
        if i > 0 && out[i] < out[i - 1] {
            return Err(Error::device(format!(
                "{direction}_us_{suffix} = {} is below {direction}_us_{} = {}: quantiles must not decrease",
                out[i] / 1e3,
                QUANTILES[i - 1],
                out[i - 1] / 1e3
            )));
        }
    }
    Ok(out)
}

impl EmpiricalSpec {
    /// Builds a spec from parameter values (unknown names, out-of-range values, fractional
    /// counts and decreasing quantiles are `InvalidDevice` errors naming the parameter).
    pub fn from_params(values: &ParamValues) -> Result<EmpiricalSpec> {
        let v = params::resolve(DECLARATIONS, values, "empirical")?;
        let fs = |name: &str| (1e9 / get(&v, name)).round().max(1.0) as u64;
        let capacity_bytes = get(&v, "capacity_bytes") as u64 / crate::SECTOR_BYTES * crate::SECTOR_BYTES;
        if capacity_bytes == 0 {
            return Err(Error::device("capacity_bytes must be at least 512"));
        }
        Ok(EmpiricalSpec {
            capacity_bytes,
            queue_depth: params::whole(&v, "queue_depth")? as u32,
            read_quantiles_ns: quantiles(&v, "read")?,
            write_quantiles_ns: quantiles(&v, "write")?,
            read_shape: get(&v, "read_shape"),
            write_shape: get(&v, "write_shape"),
            read_contention: get(&v, "read_contention"),
            write_contention: get(&v, "write_contention"),
            read_parallelism: params::whole(&v, "read_parallelism")? as u32,
            write_parallelism: params::whole(&v, "write_parallelism")? as u32,
            read_fs_per_byte: fs("read_mb_s"),
            write_fs_per_byte: fs("write_mb_s"),
            flush_ns: (get(&v, "flush_us") * 1e3).round() as Nanos,
        })
    }

    /// The access time at cumulative probability `u` in [0, 1), nanoseconds.
    pub fn access_ns(&self, op: Op, u: f64) -> Nanos {
        let (q, shape) = match op {
            Op::Read => (&self.read_quantiles_ns, self.read_shape),
            Op::Write => (&self.write_quantiles_ns, self.write_shape),
            Op::Flush => return self.flush_ns,
        };
        let last = KNOTS.len() - 1;
        let mut value = q[last];
        for i in 1..KNOTS.len() {
            if u < KNOTS[i] {
                let t = (u - KNOTS[i - 1]) / (KNOTS[i] - KNOTS[i - 1]);
                value = q[i - 1] + libm::pow(t, shape) * (q[i] - q[i - 1]);
                break;
            }
        }
        value.round().max(0.0) as Nanos
    }

    /// The mean access time of the distribution (ns): Σ over intervals of width × (a + (b − a)/(shape + 1)).
    pub fn mean_access_ns(&self, op: Op) -> f64 {
        let (q, shape) = match op {
            Op::Read => (&self.read_quantiles_ns, self.read_shape),
            Op::Write => (&self.write_quantiles_ns, self.write_shape),
            Op::Flush => return self.flush_ns as f64,
        };
        let last = KNOTS.len() - 1;
        let mut mean = (1.0 - KNOTS[last]) * q[last];
        for i in 1..KNOTS.len() {
            mean += (KNOTS[i] - KNOTS[i - 1]) * (q[i - 1] + (q[i] - q[i - 1]) / (shape + 1.0));
        }
        mean
    }

    fn cost(&self, op: Op) -> u64 {
        match op {
            Op::Read => CAPACITY / self.read_parallelism as u64,
            Op::Write => CAPACITY / self.write_parallelism as u64,
            Op::Flush => CAPACITY,
        }
    }

    fn transfer_ns(&self, op: Op, sectors: u32) -> Nanos {
        let per_byte = match op {
            Op::Read => self.read_fs_per_byte,
            Op::Write => self.write_fs_per_byte,
            Op::Flush => return 0,
        };
        let femtos = sectors as u128 * crate::SECTOR_BYTES as u128 * per_byte as u128;
        femtos.div_ceil(1_000_000) as Nanos
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A command's access phase ends: (op code, sectors, id, cost).
    AccessEnd { op: u8, sectors: u32, id: u64, cost: u64 },
    /// A command completes.
    Done { id: u64 },
}

fn op_code(op: Op) -> u8 {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Flush => 2,
    }
}

fn op_from(code: u8) -> Op {
    match code {
        0 => Op::Read,
        1 => Op::Write,
        _ => Op::Flush,
    }
}

pub struct EmpiricalDrive {
    spec: EmpiricalSpec,
    info: DriveInfo,
    prng: Prng,
    /// Commands not yet admitted to their access phase, in arrival order.
    waiting: VecDeque<Command>,
    /// (time, sequence, event): the sequence keeps equal times in creation order.
    events: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    sequence: u64,
    /// Capacity units in use by commands in their access phase.
    used: u64,
    /// Commands in their access phase.
    in_access: u32,
    /// When the shared transfer pipe is next free.
    pipe_free: Nanos,
    outstanding: u32,
    /// Completions found while catching up in `submit`, handed over by the next `advance`.
    carry: Vec<Completion>,
    now: Nanos,
    busy_ns: Nanos,
    busy_mark: Nanos,
}

impl EmpiricalDrive {
    pub fn new(spec: EmpiricalSpec, prng: Prng) -> EmpiricalDrive {
        assert!(spec.queue_depth > 0 && spec.read_parallelism > 0 && spec.write_parallelism > 0);
        EmpiricalDrive {
            info: DriveInfo {
                kind: "empirical",
                capacity_bytes: spec.capacity_bytes,
                rpm: 0,
                interface: "measured".to_string(),
                rotational: false,
            },
            prng,
            waiting: VecDeque::with_capacity(spec.queue_depth as usize),
            events: BinaryHeap::with_capacity(2 * spec.queue_depth as usize),
            sequence: 0,
            used: 0,
            in_access: 0,
            pipe_free: 0,
            outstanding: 0,
            carry: Vec::new(),
            now: 0,
            busy_ns: 0,
            busy_mark: 0,
            spec,
        }
    }

    fn push(&mut self, time: Nanos, event: Event) {
        self.sequence += 1;
        self.events.push(Reverse((time, self.sequence, event)));
    }

    fn mark(&mut self, t: Nanos) {
        assert!(t >= self.busy_mark, "time went backwards: {t} < {}", self.busy_mark);
        if self.outstanding > 0 {
            self.busy_ns += t - self.busy_mark;
        }
        self.busy_mark = t;
        self.now = t;
    }

    /// Starts waiting commands, in order, while the head fits in the free capacity.
    fn admit(&mut self, at: Nanos) {
        while let Some(&head) = self.waiting.front() {
            let cost = self.spec.cost(head.op);
            if self.used + cost > CAPACITY {
                break;
            }
            self.waiting.pop_front();
            self.used += cost;
            let contention = match head.op {
                Op::Read => self.spec.read_contention,
                Op::Write => self.spec.write_contention,
                Op::Flush => 0.0,
            };
            let drawn = self.spec.access_ns(head.op, self.prng.unit_f64());
            let access = if contention > 0.0 && self.in_access > 0 {
                (drawn as f64 * (1.0 + contention * self.in_access as f64)).round() as Nanos
            } else {
                drawn
            };
            self.in_access += 1;
            let event = Event::AccessEnd { op: op_code(head.op), sectors: head.sectors, id: head.id, cost };
            self.push(at + access, event);
        }
    }

    /// Handles every event due at or before `until`, in time order; completions go to `completed`.
    fn run(&mut self, until: Nanos, completed: &mut Vec<Completion>) {
        while let Some(&Reverse((time, _, event))) = self.events.peek() {
            if time > until {
                break;
            }
            self.events.pop();
            self.mark(time);
            match event {
                Event::AccessEnd { op, sectors, id, cost } => {
                    self.used -= cost;
                    self.in_access -= 1;
                    let op = op_from(op);
                    let start = self.pipe_free.max(time);
                    let done = start + self.spec.transfer_ns(op, sectors);
                    if op != Op::Flush {
                        self.pipe_free = done;
                    }
                    self.push(done, Event::Done { id });
                    self.admit(time);
                }
                Event::Done { id } => {
                    self.outstanding -= 1;
                    completed.push(Completion { id, time });
                }
            }
        }
    }
}

impl Drive for EmpiricalDrive {
    fn info(&self) -> &DriveInfo {
        &self.info
    }

    fn queue_depth(&self) -> u32 {
        self.spec.queue_depth
    }

    fn submit(&mut self, now: Nanos, command: Command) {
        assert!(now >= self.now, "submit at {now} before drive time {}", self.now);
        assert!(self.outstanding < self.spec.queue_depth, "submit beyond queue depth {}", self.spec.queue_depth);
        match command.op {
            Op::Flush => assert_eq!(command.sectors, 0, "flush with a length"),
            Op::Read | Op::Write => {
                assert!(command.sectors > 0, "zero-length {:?}", command.op);
                assert!(
                    (command.sector + command.sectors as u64) * crate::SECTOR_BYTES <= self.spec.capacity_bytes,
                    "command beyond capacity: {command:?}"
                );
            }
        }
        // Catch up on events up to `now` (the engine normally has already); completions found
        // here are handed over by the next `advance`.
        let mut carry = std::mem::take(&mut self.carry);
        self.run(now, &mut carry);
        self.carry = carry;
        self.mark(now);
        self.outstanding += 1;
        self.waiting.push_back(command);
        self.admit(now);
    }

    fn next_event(&self) -> Option<Nanos> {
        if !self.carry.is_empty() {
            return Some(self.now);
        }
        self.events.peek().map(|Reverse((t, _, _))| *t)
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        assert!(now >= self.now, "advance to {now} before drive time {}", self.now);
        completed.append(&mut self.carry);
        self.run(now, completed);
        self.mark(now);
    }

    fn busy_nanos(&self) -> Nanos {
        self.busy_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(extra: &[(&str, f64)]) -> EmpiricalSpec {
        let mut values = ParamValues::new();
        for (k, v) in extra {
            values.insert(k.to_string(), *v);
        }
        EmpiricalSpec::from_params(&values).expect("valid")
    }

    fn run_closed(spec: EmpiricalSpec, op: Op, sectors: u32, depth: u32, commands: u64) -> (f64, f64) {
        let mut drive = EmpiricalDrive::new(spec, Prng::new(9));
        let mut now = 0;
        let mut next_id = 0;
        let mut issued = 0;
        let mut latency_sum = 0u128;
        let mut submitted = std::collections::HashMap::new();
        let mut done = Vec::new();
        let mut finished = 0u64;
        while issued < depth as u64 {
            drive.submit(now, Command { id: next_id, op, sector: 0, sectors });
            submitted.insert(next_id, now);
            next_id += 1;
            issued += 1;
        }
        while finished < commands {
            now = drive.next_event().expect("work pending");
            drive.advance(now, &mut done);
            for c in done.drain(..) {
                latency_sum += (c.time - submitted.remove(&c.id).unwrap()) as u128;
                finished += 1;
                drive.submit(now, Command { id: next_id, op, sector: 0, sectors });
                submitted.insert(next_id, now);
                next_id += 1;
            }
        }
        (finished as f64 / (now as f64 / 1e9), latency_sum as f64 / finished as f64)
    }

    #[test]
    fn queue_depth_one_reproduces_the_quantiles_plus_transfer() {
        let s = spec(&[("read_mb_s", 1000.0)]);
        // 4 KiB at 1000 MB/s = 4.096 µs on top of the access time.
        let (_, mean) = run_closed(s.clone(), Op::Read, 8, 1, 20000);
        let expected = s.mean_access_ns(Op::Read) + 4096.0;
        assert!((mean - expected).abs() / expected < 0.03, "mean {mean} expected {expected}");
    }

    #[test]
    fn saturation_follows_parallelism_and_bandwidth() {
        let s = spec(&[("read_parallelism", 3.0), ("read_mb_s", 1e6)]);
        let (iops1, _) = run_closed(s.clone(), Op::Read, 8, 1, 5000);
        let (iops32, _) = run_closed(s, Op::Read, 8, 32, 20000);
        assert!((iops32 / iops1 - 3.0).abs() < 0.15, "{iops1} {iops32}");
        // 1 MiB reads at 100 MB/s: the pipe caps throughput at 100 MB/s whatever the depth.
        let s = spec(&[("read_parallelism", 8.0), ("read_mb_s", 100.0)]);
        let (iops, _) = run_closed(s, Op::Read, 2048, 16, 500);
        let mb_s = iops * 1048576.0 / 1e6;
        assert!((mb_s - 100.0).abs() < 2.0, "{mb_s}");
    }

    #[test]
    fn contention_bends_the_depth_curve() {
        // Fixed access time 100 µs: IOPS(D) = D / (100 µs × (1 + 0.25 (D − 1))).
        let mut fixed: Vec<(String, f64)> = vec![
            ("read_parallelism".into(), 1000.0),
            ("read_contention".into(), 0.25),
            ("read_mb_s".into(), 1e7),
        ];
        for suffix in QUANTILES {
            fixed.push((format!("read_us_{suffix}"), 100.0));
        }
        let pairs: Vec<(&str, f64)> = fixed.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let s = spec(&pairs);
        for depth in [1u32, 4, 16] {
            let (iops, _) = run_closed(s.clone(), Op::Read, 8, depth, 20000);
            let expected = depth as f64 / (100e-6 * (1.0 + 0.25 * (depth as f64 - 1.0)));
            assert!((iops / expected - 1.0).abs() < 0.05, "depth {depth}: {iops} vs {expected}");
        }
    }

    #[test]
    fn mixed_reads_and_writes_share_one_capacity() {
        // One read and one write may not run at once when each takes the whole device.
        let mut fixed: Vec<(String, f64)> = vec![
            ("read_parallelism".into(), 1.0),
            ("write_parallelism".into(), 1.0),
            ("read_mb_s".into(), 1e7),
            ("write_mb_s".into(), 1e7),
        ];
        for suffix in QUANTILES {
            fixed.push((format!("read_us_{suffix}"), 100.0));
            fixed.push((format!("write_us_{suffix}"), 100.0));
        }
        let pairs: Vec<(&str, f64)> = fixed.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let s = spec(&pairs);
        let mut drive = EmpiricalDrive::new(s, Prng::new(1));
        drive.submit(0, Command { id: 1, op: Op::Read, sector: 0, sectors: 8 });
        drive.submit(0, Command { id: 2, op: Op::Write, sector: 8, sectors: 8 });
        drive.submit(0, Command { id: 3, op: Op::Flush, sector: 0, sectors: 0 });
        let mut done = Vec::new();
        while let Some(t) = drive.next_event() {
            drive.advance(t, &mut done);
        }
        let times: Vec<(u64, Nanos)> = done.iter().map(|c| (c.id, c.time)).collect();
        assert_eq!(times.len(), 3);
        assert!(times[0].1 >= 100_000 && times[0].1 < 101_000, "{times:?}");
        assert!(times[1].1 >= 200_000 && times[1].1 < 201_000, "{times:?}");
        assert!(times[2].1 >= 200_000, "{times:?}");
        assert_eq!(drive.busy_nanos(), times[2].1);
    }

    #[test]
    fn a_larger_shape_lowers_the_mean_and_sampling_follows_it() {
        let linear = spec(&[]);
        let convex = spec(&[("read_shape", 4.0)]);
        assert!(convex.mean_access_ns(Op::Read) < linear.mean_access_ns(Op::Read));
        let mut prng = Prng::new(3);
        let n = 200_000;
        let drawn: f64 = (0..n).map(|_| convex.access_ns(Op::Read, prng.unit_f64()) as f64).sum::<f64>() / n as f64;
        let mean = convex.mean_access_ns(Op::Read);
        assert!((drawn - mean).abs() / mean < 0.01, "{drawn} {mean}");
        // Exact at the knots whatever the shape.
        assert_eq!(convex.access_ns(Op::Read, 0.5), 95_000);
    }

    #[test]
    fn bad_parameters_are_refused_with_their_name() {
        let mut values = ParamValues::new();
        values.insert("read_us_p50".into(), 1.0);
        let error = EmpiricalSpec::from_params(&values).unwrap_err();
        assert!(error.message.contains("read_us_p50"), "{}", error.message);
        let mut values = ParamValues::new();
        values.insert("read_parallelism".into(), 2.5);
        let error = EmpiricalSpec::from_params(&values).unwrap_err();
        assert!(error.message.contains("read_parallelism"), "{}", error.message);
    }
}
