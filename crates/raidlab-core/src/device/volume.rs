//! A cloud block volume (AWS EBS, Azure managed disks, GCP persistent disks) as an array member.
//!
//! A volume is not a disk: its service time hardly depends on where the data is, and what limits
//! it is what the provider provisions and meters. Sources (AWS, "Amazon EBS volume types" and
//! "I/O characteristics and monitoring", Amazon EBS User Guide):
//! - **I/O accounting**: an I/O counts as ceil(size / `io_unit_kib`) operations: 256 KiB for
//!   SSD-backed volumes, 1 MiB for HDD-backed (st1, sc1). Sequential I/Os are merged up to that
//!   unit before they are counted ("eight contiguous I/O operations at 32 KiB each count as one
//!   operation"); I/Os smaller than 32 KiB are each one operation.
//! - **Provisioned rates**: operations per second and bytes per second, each a rate the volume
//!   admits I/O at (`baseline_iops`, `throughput_mib_s`).
//! - **Burst buckets**: gp2 earns I/O credits at its baseline rate into a bucket of 5.4 million
//!   and spends one per operation; while the bucket holds credits it runs at `burst_iops` (3,000),
//!   and empty, at its baseline (3 IOPS per GiB, at least 100). st1/sc1 do the same with
//!   throughput (MiB/s per TiB of size, bucket 1 TiB of credit per TiB).
//! - **Latency**: single-digit milliseconds for HDD-backed, sub-millisecond for SSD-backed
//!   volumes; modelled as a log-normal service time (median and 99th percentile) after admission,
//!   with the volume serving its whole queue in parallel.
//!
//! State: the times the IOPS and throughput meters next admit an I/O, the two credit balances
//! (as of `credit_time`), and the in-flight commands in a min-heap by completion time.

use super::params::{self, get, ParamDecl, ParamValues};
use super::{Command, Completion, Drive, DriveInfo, Op};
use crate::error::{Error, Result};
use crate::rng::Prng;
use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
const MIB: f64 = 1024.0 * 1024.0;
const NS_PER_S: f64 = 1e9;
/// AWS: I/Os of 32 KiB or more are merged when sequential; smaller ones count one each.
const MERGE_MIN_SECTORS: u64 = 64;

pub const DECLARATIONS: &[ParamDecl] = &[
    ParamDecl { name: "capacity_bytes", unit: "bytes", default: 100.0 * GIB, min: 1.0 * GIB, max: 64.0 * 1024.0 * GIB, doc: "Provisioned size, in bytes." },
    ParamDecl { name: "baseline_iops", unit: "IOPS", default: 0.0, min: 0.0, max: 1e7, doc: "Provisioned operations per second; 0 = iops_per_gib x size, clamped to iops_min..iops_max." },
    ParamDecl { name: "iops_per_gib", unit: "IOPS/GiB", default: 3.0, min: 0.0, max: 1e4, doc: "Baseline operations per second per GiB of size (gp2: 3), when baseline_iops is 0." },
    ParamDecl { name: "iops_min", unit: "IOPS", default: 100.0, min: 1.0, max: 1e7, doc: "Least baseline operations per second (gp2: 100)." },
    ParamDecl { name: "iops_max", unit: "IOPS", default: 16000.0, min: 1.0, max: 1e7, doc: "Most baseline operations per second (gp2: 16,000)." },
    ParamDecl { name: "burst_iops", unit: "IOPS", default: 0.0, min: 0.0, max: 1e7, doc: "Operations per second while the I/O credit bucket holds credits (gp2: 3,000); 0 = no bucket." },
    ParamDecl { name: "io_credit_bucket", unit: "count", default: 5.4e6, min: 0.0, max: 1e12, doc: "I/O credits the bucket holds when full (gp2: 5.4 million)." },
    ParamDecl { name: "throughput_mib_s", unit: "MiB/s", default: 0.0, min: 0.0, max: 1e6, doc: "Provisioned throughput; 0 = throughput_mib_s_per_tib x size, clamped to throughput_mib_s_max." },
    ParamDecl { name: "throughput_mib_s_per_tib", unit: "MiB/s/TiB", default: 0.0, min: 0.0, max: 1e6, doc: "Baseline throughput per TiB of size (st1: 40, sc1: 12), when throughput_mib_s is 0." },
    ParamDecl { name: "throughput_mib_s_max", unit: "MiB/s", default: 250.0, min: 0.1, max: 1e6, doc: "Most throughput, baseline or burst (gp2: 250, st1: 500, sc1: 250)." },
    ParamDecl { name: "burst_mib_s_per_tib", unit: "MiB/s/TiB", default: 0.0, min: 0.0, max: 1e6, doc: "Throughput per TiB while the throughput credit bucket holds credits (st1: 250, sc1: 80); 0 = no bucket." },
    ParamDecl { name: "io_unit_kib", unit: "KiB", default: 256.0, min: 4.0, max: 4096.0, doc: "Largest I/O counted as one operation (SSD-backed 256, HDD-backed 1024)." },
    ParamDecl { name: "latency_us_median", unit: "us", default: 500.0, min: 1.0, max: 1e7, doc: "Median service time of one I/O after admission, in microseconds." },
    ParamDecl { name: "latency_us_p99", unit: "us", default: 2000.0, min: 1.0, max: 1e8, doc: "99th percentile service time after admission (log-normal tail), in microseconds." },
    ParamDecl { name: "queue_depth", unit: "count", default: 256.0, min: 1.0, max: 65536.0, doc: "Commands the volume accepts at once (all in service in parallel)." },
];

/// The resolved rates of one volume.
#[derive(Clone, Debug, PartialEq)]
pub struct VolumeSpec {
    pub capacity_bytes: u64,
    pub baseline_iops: f64,
    /// 0: no I/O credit bucket.
    pub burst_iops: f64,
    pub io_credit_bucket: f64,
    pub baseline_bytes_s: f64,
    /// 0: no throughput credit bucket.
    pub burst_bytes_s: f64,
    /// Throughput credits (bytes) when full: 1 TiB per TiB of size (st1/sc1).
    pub byte_credit_bucket: f64,
    pub io_unit_sectors: u64,
    pub latency_ns_median: f64,
    /// Log-normal sigma from the median and the 99th percentile.
    pub latency_sigma: f64,
    pub queue_depth: u32,
}

impl VolumeSpec {
    pub fn from_params(values: &ParamValues) -> Result<VolumeSpec> {
        let v = params::resolve(DECLARATIONS, values, "volume")?;
        let capacity = get(&v, "capacity_bytes");
        let (gib, tib) = (capacity / GIB, capacity / GIB / 1024.0);
        let baseline_iops = match get(&v, "baseline_iops") {
            0.0 => (get(&v, "iops_per_gib") * gib).clamp(get(&v, "iops_min"), get(&v, "iops_max").max(get(&v, "iops_min"))),
            given => given,
        };
        let max_bytes_s = get(&v, "throughput_mib_s_max") * MIB;
        let baseline_bytes_s = match get(&v, "throughput_mib_s") {
            0.0 if get(&v, "throughput_mib_s_per_tib") > 0.0 => (get(&v, "throughput_mib_s_per_tib") * tib * MIB).min(max_bytes_s),
            0.0 => max_bytes_s,
            given => given * MIB,
        };
        let (median, p99) = (get(&v, "latency_us_median"), get(&v, "latency_us_p99"));
        if p99 < median {
            return Err(Error::device(format!("latency_us_p99 = {p99} is below latency_us_median = {median}")));
        }
        Ok(VolumeSpec {
            capacity_bytes: capacity as u64 / crate::SECTOR_BYTES * crate::SECTOR_BYTES,
            baseline_iops,
            // A burst rate below the baseline would never be used: the bucket bursts to at least it.
            burst_iops: match get(&v, "burst_iops") {
                0.0 => 0.0,
                burst => burst.max(baseline_iops),
            },
            io_credit_bucket: get(&v, "io_credit_bucket"),
            baseline_bytes_s,
            burst_bytes_s: (get(&v, "burst_mib_s_per_tib") * tib * MIB).min(max_bytes_s),
            byte_credit_bucket: tib * 1024.0 * GIB,
            io_unit_sectors: (get(&v, "io_unit_kib") * 2.0) as u64,
            latency_ns_median: median * 1e3,
            // z(0.99) = 2.3263: p99 = median * exp(2.3263 sigma).
            latency_sigma: libm::log(p99 / median) / 2.326_347_874,
            queue_depth: params::whole(&v, "queue_depth")? as u32,
        })
    }
}

/// How AWS counts I/O operations against an IOPS limit (the volume's and the instance's):
/// an I/O is ceil(size / unit) operations, and a sequential I/O of at least 32 KiB first fills
/// the previous operation up to the unit ("I/O characteristics and monitoring", Amazon EBS
/// User Guide).
#[derive(Clone, Copy, Debug)]
pub struct IoCounter {
    unit_sectors: u64,
    /// End sector of the last I/O, for sequential merging, and the sectors its last operation holds.
    last_end: u64,
    last_op_sectors: u64,
}

impl IoCounter {
    pub fn new(unit_sectors: u64) -> IoCounter {
        assert!(unit_sectors > 0, "an I/O unit of at least one sector");
        IoCounter { unit_sectors, last_end: u64::MAX, last_op_sectors: 0 }
    }

    /// Operations the I/O of `sectors` at `sector` counts as.
    pub fn count(&mut self, sector: u64, sectors: u64) -> f64 {
        let unit = self.unit_sectors;
        let mergeable = sector == self.last_end && sectors >= MERGE_MIN_SECTORS;
        self.last_end = sector + sectors;
        let (mut free, mut ops) = (0, 0u64);
        if mergeable && self.last_op_sectors < unit {
            free = (unit - self.last_op_sectors).min(sectors);
        }
        let rest = sectors - free;
        if rest > 0 {
            ops = rest.div_ceil(unit);
            self.last_op_sectors = rest - (ops - 1) * unit;
        } else {
            self.last_op_sectors += free;
        }
        ops as f64
    }
}

/// A credit bucket: earns at the baseline rate, spends what is used; full at the start.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    balance: f64,
    capacity: f64,
}

pub struct Volume {
    spec: VolumeSpec,
    info: DriveInfo,
    prng: Prng,
    /// When the IOPS and the throughput meters next admit an I/O.
    iops_free_at: f64,
    bytes_free_at: f64,
    io_credits: Bucket,
    byte_credits: Bucket,
    credit_time: f64,
    /// AWS's I/O accounting (sequential merging into `io_unit_kib` operations).
    counter: IoCounter,
    in_flight: BinaryHeap<Reverse<(Nanos, u64)>>,
    now: Nanos,
    busy_ns: Nanos,
}

impl Volume {
    pub fn new(spec: VolumeSpec, prng: Prng) -> Volume {
        let info = DriveInfo { kind: "volume", capacity_bytes: spec.capacity_bytes, rpm: 0, interface: "network block volume".into(), rotational: false };
        let io_credits = Bucket { balance: spec.io_credit_bucket, capacity: spec.io_credit_bucket };
        let byte_credits = Bucket { balance: spec.byte_credit_bucket, capacity: spec.byte_credit_bucket };
        let counter = IoCounter::new(spec.io_unit_sectors);
        Volume { spec, info, prng, iops_free_at: 0.0, bytes_free_at: 0.0, io_credits, byte_credits, credit_time: 0.0,
                 counter, in_flight: BinaryHeap::new(), now: 0, busy_ns: 0 }
    }

    /// The largest I/O counted as one operation, in sectors (256 KiB SSD-backed, 1 MiB HDD-backed).
    pub fn io_unit_sectors(&self) -> u64 {
        self.spec.io_unit_sectors
    }

    /// The interface label reports show (the preset's).
    pub fn set_interface(&mut self, interface: &str) {
        self.info.interface = interface.to_string();
    }

    /// Operations an I/O counts as, merging it into the previous one when it continues it.
    fn operations(&mut self, command: &Command) -> f64 {
        self.counter.count(command.sector, command.sectors as u64)
    }

    /// Brings the credit buckets to `t` (earned at the baseline rates while not spending).
    fn earn(&mut self, t: f64) {
        let dt = (t - self.credit_time).max(0.0) / NS_PER_S;
        self.credit_time = self.credit_time.max(t);
        let io = &mut self.io_credits;
        io.balance = (io.balance + self.spec.baseline_iops * dt).min(io.capacity);
        let bytes = &mut self.byte_credits;
        bytes.balance = (bytes.balance + self.spec.baseline_bytes_s * dt).min(bytes.capacity);
    }

    /// The time the meters admit an I/O of `ops` operations and `bytes` bytes, arriving at `now`.
    /// With a credit bucket the meter runs at the burst rate and each operation (byte) spends a
    /// credit; an empty bucket makes the I/O wait for the credits the baseline rate earns, so the
    /// volume falls back to its baseline exactly when the bucket is empty.
    fn admit(&mut self, now: f64, ops: f64, bytes: f64) -> f64 {
        let mut at = now.max(self.iops_free_at).max(self.bytes_free_at);
        self.earn(at);
        let io_bucket = self.spec.burst_iops > 0.0;
        if io_bucket && self.io_credits.balance < ops {
            at += (ops - self.io_credits.balance) / self.spec.baseline_iops * NS_PER_S;
        }
        self.earn(at);
        let byte_bucket = self.spec.burst_bytes_s > 0.0;
        if byte_bucket && self.byte_credits.balance < bytes {
            at += (bytes - self.byte_credits.balance) / self.spec.baseline_bytes_s * NS_PER_S;
        }
        self.earn(at);
        let iops = if io_bucket {
            self.io_credits.balance = (self.io_credits.balance - ops).max(0.0);
            self.spec.burst_iops
        } else {
            self.spec.baseline_iops
        };
        let bytes_s = if byte_bucket {
            self.byte_credits.balance = (self.byte_credits.balance - bytes).max(0.0);
            self.spec.burst_bytes_s
        } else {
            self.spec.baseline_bytes_s
        };
        self.iops_free_at = at + ops / iops * NS_PER_S;
        self.bytes_free_at = at + bytes / bytes_s * NS_PER_S;
        at
    }

    fn service_ns(&mut self) -> Nanos {
        let z = self.prng.normal();
        (self.spec.latency_ns_median * libm::exp(self.spec.latency_sigma * z)).round().max(1.0) as Nanos
    }

    fn mark(&mut self, t: Nanos) {
        assert!(t >= self.now, "time went backwards: {t} < {}", self.now);
        if !self.in_flight.is_empty() {
            self.busy_ns += t - self.now;
        }
        self.now = t;
    }
}

impl Drive for Volume {
    fn info(&self) -> &DriveInfo {
        &self.info
    }

    fn queue_depth(&self) -> u32 {
        self.spec.queue_depth
    }

    fn submit(&mut self, now: Nanos, command: Command) {
        assert!((self.in_flight.len() as u32) < self.spec.queue_depth, "submit beyond queue depth");
        self.mark(now);
        let due = match command.op {
            Op::Flush => now + self.service_ns(),
            Op::Read | Op::Write => {
                assert!(command.sectors > 0, "zero-length {:?}", command.op);
                let end = (command.sector + command.sectors as u64) * crate::SECTOR_BYTES;
                assert!(end <= self.spec.capacity_bytes, "command beyond capacity: {command:?}");
                let ops = self.operations(&command);
                let bytes = command.sectors as f64 * crate::SECTOR_BYTES as f64;
                let admitted = self.admit(now as f64, ops, bytes);
                admitted.ceil() as Nanos + self.service_ns()
            }
        };
        self.in_flight.push(Reverse((due, command.id)));
    }

    fn next_event(&self) -> Option<Nanos> {
        self.in_flight.peek().map(|Reverse((t, _))| *t)
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        while let Some(&Reverse((t, id))) = self.in_flight.peek() {
            if t > now {
                break;
            }
            self.mark(t);
            self.in_flight.pop();
            completed.push(Completion { id, time: t });
        }
        self.mark(now);
    }

    fn busy_nanos(&self) -> Nanos {
        self.busy_ns
    }
}

/// A volume preset: its parameters and where they come from.
pub struct VolumePreset {
    pub name: &'static str,
    pub description: &'static str,
    pub interface: &'static str,
    pub source: &'static str,
    pub params: &'static [(&'static str, f64)],
}

impl VolumePreset {
    pub fn values(&self) -> ParamValues {
        self.params.iter().map(|&(k, v)| (k.to_string(), v)).collect()
    }
}

const AWS_TYPES: &str = "AWS, Amazon EBS User Guide: \"Amazon EBS volume types\" and \"I/O characteristics and monitoring\"";

/// Cloud volume presets at a typical size; `capacity_bytes` (and the provisioned rates) may be
/// overridden, and the size-derived rates follow.
pub const PRESETS: &[VolumePreset] = &[
    VolumePreset {
        name: "ebs-gp2",
        description: "AWS EBS gp2 (General Purpose SSD, previous generation), 100 GiB: 3 IOPS/GiB (100-16,000), bursts to 3,000 IOPS from a 5.4 M credit bucket, up to 250 MiB/s",
        interface: "AWS EBS (NVMe)",
        source: AWS_TYPES,
        params: &[("capacity_bytes", 100.0 * GIB), ("iops_per_gib", 3.0), ("iops_min", 100.0), ("iops_max", 16000.0),
                  ("burst_iops", 3000.0), ("io_credit_bucket", 5.4e6), ("throughput_mib_s_max", 250.0),
                  ("io_unit_kib", 256.0), ("latency_us_median", 600.0), ("latency_us_p99", 3000.0)],
    },
    VolumePreset {
        name: "ebs-gp3",
        description: "AWS EBS gp3 (General Purpose SSD), 500 GiB at the included 3,000 IOPS and 125 MiB/s (provisionable to 16,000 and 1,000)",
        interface: "AWS EBS (NVMe)",
        source: AWS_TYPES,
        params: &[("capacity_bytes", 500.0 * GIB), ("baseline_iops", 3000.0), ("throughput_mib_s", 125.0),
                  ("throughput_mib_s_max", 1000.0), ("io_unit_kib", 256.0), ("latency_us_median", 600.0), ("latency_us_p99", 3000.0)],
    },
    VolumePreset {
        name: "ebs-io2",
        description: "AWS EBS io2 (Provisioned IOPS SSD), 500 GiB at 16,000 provisioned IOPS (up to 500 IOPS/GiB, 64,000), 1,000 MiB/s",
        interface: "AWS EBS (NVMe)",
        source: AWS_TYPES,
        params: &[("capacity_bytes", 500.0 * GIB), ("baseline_iops", 16000.0), ("throughput_mib_s", 1000.0),
                  ("throughput_mib_s_max", 1000.0), ("io_unit_kib", 256.0), ("latency_us_median", 300.0), ("latency_us_p99", 1000.0)],
    },
    VolumePreset {
        name: "ebs-st1",
        description: "AWS EBS st1 (Throughput Optimized HDD), 2 TiB: 40 MiB/s per TiB baseline, bursts to 250 MiB/s per TiB (max 500), 500 IOPS of 1 MiB",
        interface: "AWS EBS (NVMe)",
        source: AWS_TYPES,
        params: &[("capacity_bytes", 2048.0 * GIB), ("baseline_iops", 500.0), ("throughput_mib_s_per_tib", 40.0),
                  ("burst_mib_s_per_tib", 250.0), ("throughput_mib_s_max", 500.0), ("io_unit_kib", 1024.0),
                  ("latency_us_median", 3000.0), ("latency_us_p99", 20000.0)],
    },
    VolumePreset {
        name: "ebs-sc1",
        description: "AWS EBS sc1 (Cold HDD), 2 TiB: 12 MiB/s per TiB baseline, bursts to 80 MiB/s per TiB (max 250), 250 IOPS of 1 MiB",
        interface: "AWS EBS (NVMe)",
        source: AWS_TYPES,
        params: &[("capacity_bytes", 2048.0 * GIB), ("baseline_iops", 250.0), ("throughput_mib_s_per_tib", 12.0),
                  ("burst_mib_s_per_tib", 80.0), ("throughput_mib_s_max", 250.0), ("io_unit_kib", 1024.0),
                  ("latency_us_median", 5000.0), ("latency_us_p99", 30000.0)],
    },
    VolumePreset {
        name: "azure-premium-p30",
        description: "Azure Premium SSD P30, 1 TiB: 5,000 IOPS, 200 MB/s provisioned",
        interface: "Azure managed disk",
        source: "Microsoft, \"Azure managed disk types\": Premium SSD size table (P30: 1,024 GiB, 5,000 IOPS, 200 MB/s)",
        params: &[("capacity_bytes", 1024.0 * GIB), ("baseline_iops", 5000.0), ("throughput_mib_s", 190.7),
                  ("throughput_mib_s_max", 190.7), ("io_unit_kib", 256.0), ("latency_us_median", 1000.0), ("latency_us_p99", 4000.0)],
    },
    VolumePreset {
        name: "gcp-pd-ssd",
        description: "GCP SSD persistent disk, 500 GiB: 30 IOPS/GiB (15,000), 0.48 MB/s per GiB (240 MB/s)",
        interface: "GCP persistent disk",
        source: "Google Cloud, \"Persistent Disk performance\" (pd-ssd: 30 read/write IOPS per GiB, 0.48 MiBps per GiB)",
        params: &[("capacity_bytes", 500.0 * GIB), ("iops_per_gib", 30.0), ("iops_min", 1.0), ("iops_max", 100000.0),
                  ("throughput_mib_s", 228.9), ("throughput_mib_s_max", 1200.0), ("io_unit_kib", 256.0),
                  ("latency_us_median", 700.0), ("latency_us_p99", 3000.0)],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn volume(name: &str, overrides: &[(&str, f64)]) -> Volume {
        let mut values = PRESETS.iter().find(|p| p.name == name).unwrap().values();
        for &(k, v) in overrides {
            values.insert(k.into(), v);
        }
        Volume::new(VolumeSpec::from_params(&values).unwrap(), Prng::new(1))
    }

    /// Closed loop at `depth` random 16 KiB reads for `seconds`: (IOPS over the run, completions).
    fn random_reads(v: &mut Volume, depth: u32, seconds: f64) -> f64 {
        let (mut now, mut next_id, mut done, mut rng) = (v.now, 1u64 << 40, 0u64, Prng::new(7));
        assert!(v.in_flight.is_empty());
        let sectors_total = v.spec.capacity_bytes / 512 / 32;
        let end = now + (seconds * NS_PER_S) as Nanos;
        let mut completed = Vec::new();
        for _ in 0..depth {
            v.submit(now, Command { id: next_id, op: Op::Read, sector: rng.below(sectors_total) * 32, sectors: 32 });
            next_id += 1;
        }
        while now < end {
            now = v.next_event().unwrap();
            v.advance(now, &mut completed);
            for _ in completed.drain(..) {
                done += 1;
                if now < end {
                    v.submit(now, Command { id: next_id, op: Op::Read, sector: rng.below(sectors_total) * 32, sectors: 32 });
                    next_id += 1;
                }
            }
        }
        // Drain what is still in flight (not counted).
        while let Some(t) = v.next_event() {
            v.advance(t, &mut completed);
        }
        completed.clear();
        done as f64 / seconds
    }

    #[test]
    fn gp3_serves_its_provisioned_iops() {
        let iops = random_reads(&mut volume("ebs-gp3", &[]), 32, 20.0);
        assert!((iops - 3000.0).abs() < 0.03 * 3000.0, "{iops}");
    }

    #[test]
    fn gp2_bursts_until_its_credits_run_out() {
        // 100 GiB: baseline 300 IOPS; bursting at 3,000 drains 2,700 credits a second from 5.4 M:
        // empty after 2,000 s. A 10x smaller bucket empties after 200 s.
        let mut v = volume("ebs-gp2", &[("io_credit_bucket", 5.4e5)]);
        let early = random_reads(&mut v, 32, 150.0);
        assert!((early - 3000.0).abs() < 0.03 * 3000.0, "{early}");
        let mut late = volume("ebs-gp2", &[("io_credit_bucket", 5.4e5)]);
        random_reads(&mut late, 32, 250.0);
        let after = random_reads(&mut late, 32, 50.0);
        assert!((after - 300.0).abs() < 0.05 * 300.0, "{after}");
    }

    #[test]
    fn large_and_sequential_ios_are_counted_in_io_units() {
        let mut v = volume("ebs-gp3", &[]);
        let cmd = |sector, sectors| Command { id: 0, op: Op::Read, sector, sectors };
        assert_eq!(v.operations(&cmd(0, 2048)), 4.0, "1 MiB = four 256 KiB operations");
        // Eight contiguous 32 KiB reads count as one operation.
        let ops: f64 = (0..8).map(|i| v.operations(&cmd(10_000 + i * 64, 64))).sum();
        assert_eq!(ops, 1.0);
        // Small ones count one each, contiguous or not.
        let small: f64 = (0..8).map(|i| v.operations(&cmd(50_000 + i * 8, 8))).sum();
        assert_eq!(small, 8.0);
    }

    #[test]
    fn st1_streams_at_its_throughput() {
        // 2 TiB st1 bursts at 500 MiB/s (250 per TiB, capped); 1 MiB sequential reads.
        let mut v = volume("ebs-st1", &[]);
        let (mut now, mut sector, mut completed, mut done) = (0, 0u64, Vec::new(), 0u64);
        for id in 0..16 {
            v.submit(now, Command { id, op: Op::Read, sector, sectors: 2048 });
            sector += 2048;
        }
        while now < 10_000_000_000 {
            now = v.next_event().unwrap();
            v.advance(now, &mut completed);
            for c in completed.drain(..) {
                done += 1;
                v.submit(now, Command { id: c.id, op: Op::Read, sector, sectors: 2048 });
                sector += 2048;
            }
        }
        let mib_s = done as f64 / 10.0;
        assert!((mib_s - 500.0).abs() < 0.03 * 500.0, "{mib_s}");
    }
}
