//! Replay of DiskSim "validate" traces and the demerit figure.
//!
//! Trace format (DiskSim 4.0, `valid/*.trace`; described in data/disksim-valid/README.md):
//! `R|W  Hit|Miss  LBN  SIZE  SERVICE_US  NEXT_INTERARRIVAL_US` per line. Requests go one at a
//! time: the next arrives `NEXT_INTERARRIVAL_US` after the current one *completes*.
//!
//! Demerit (Ruemmler & Wilkes, IEEE Computer 1994; DiskSim's `rms` tool as the manual §6
//! describes it): the root-mean-square horizontal distance between the measured and simulated
//! service-time distributions, both sampled at evenly spaced quantiles.

use crate::device::hdd::{Hdd, HddSpec};
use crate::device::{Command, Drive, Op};
use crate::error::{Error, ErrorKind, Result};
use crate::rng::Prng;

/// Largest service or inter-arrival time a trace line may give: one hour, in µs. Validation
/// traces record milliseconds; anything near this is a corrupt line, and the cap keeps each
/// time's conversion to integer nanoseconds (×1000) far from overflow.
pub const MAX_TRACE_US: f64 = 3.6e9;
/// Largest request a trace line may give, in sectors (32 MiB; the validation traces' largest
/// requests are a few hundred sectors).
pub const MAX_TRACE_SECTORS: u32 = 1 << 16;
/// Arrival times stay below 2^53 ns (about 104 days of simulated time): every integer time up
/// to there is exact as an f64, which the drive model's rotational arithmetic relies on.
pub const MAX_ARRIVAL_NS: u64 = 1 << 53;

/// One validation-trace request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRecord {
    /// The line of the trace file it came from (for messages).
    pub line: u32,
    pub write: bool,
    /// The recorded drive-cache outcome was `Hit` (statistics only, not a model input).
    pub hit: bool,
    pub lbn: u64,
    pub sectors: u32,
    pub measured_us: f64,
    pub gap_us: f64,
}

/// Parses a validation trace's text; a malformed line, or a number outside its range
/// ([`MAX_TRACE_US`], [`MAX_TRACE_SECTORS`], an LBN whose request would pass 2^64), is an error
/// naming file and line, and so is a trace without requests.
pub fn parse_trace(file: &str, text: &str) -> Result<Vec<TraceRecord>> {
    let mut out = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let f: Vec<&str> = raw.split_whitespace().collect();
        if f.is_empty() || f[0].starts_with('#') {
            continue;
        }
        let bad = |what: &str| {
            Error::new(ErrorKind::InvalidDevice, format!("{file}:{line}: {what} (expected 'R|W Hit|Miss LBN SECTORS SERVICE_US GAP_US')"))
        };
        if f.len() != 6 {
            return Err(bad(&format!("{} fields", f.len())));
        }
        let write = match f[0] {
            "R" | "r" => false,
            "W" | "w" => true,
            other => return Err(bad(&format!("request type '{other}'"))),
        };
        // Hit, Miss, and in older traces Doub/Trip (statistics only).
        if !f[1].chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(bad(&format!("cache outcome '{}'", f[1])));
        }
        let hit = f[1].eq_ignore_ascii_case("hit");
        let sectors = f[3]
            .parse::<u32>()
            .ok()
            .filter(|s| (1..=MAX_TRACE_SECTORS).contains(s))
            .ok_or_else(|| bad(&format!("size '{}' is not 1 to {MAX_TRACE_SECTORS} sectors", f[3])))?;
        let lbn = f[2]
            .parse::<u64>()
            .ok()
            .filter(|lbn| lbn.checked_add(sectors as u64).is_some())
            .ok_or_else(|| bad(&format!("LBN '{}' is not a sector number below 2^64 - size", f[2])))?;
        let num = |s: &str, what: &str| {
            s.parse::<f64>()
                .ok()
                .filter(|x| (0.0..=MAX_TRACE_US).contains(x))
                .ok_or_else(|| bad(&format!("{what} '{s}' is not 0 to {MAX_TRACE_US} µs")))
        };
        let measured_us = num(f[4], "service time")?;
        let gap_us = num(f[5], "inter-arrival time")?;
        out.push(TraceRecord { line, write, hit, lbn, sectors, measured_us, gap_us });
    }
    if out.is_empty() {
        return Err(Error::new(ErrorKind::InvalidDevice, format!("{file}: trace has no requests")));
    }
    Ok(out)
}

/// Measured and simulated service times (ms), request by request.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayResult {
    pub measured_ms: Vec<f64>,
    pub simulated_ms: Vec<f64>,
}

impl ReplayResult {
    pub fn mean_measured_ms(&self) -> f64 {
        mean(&self.measured_ms)
    }
    pub fn mean_simulated_ms(&self) -> f64 {
        mean(&self.simulated_ms)
    }
    /// The demerit in ms over `quantiles` evenly spaced quantiles.
    pub fn demerit_ms(&self, quantiles: usize) -> f64 {
        demerit_ms(&self.measured_ms, &self.simulated_ms, quantiles)
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Replays the records on a drive built from `spec`, one request at a time, each arriving its
/// gap after the previous completion (the first at time 0). The platter starts at angle 0
/// (DiskSim's convention: its validation runs start every drive there, with the arm at
/// cylinder 0) or, with a `seed`, at an angle drawn from it.
pub fn replay(spec: &HddSpec, records: &[TraceRecord], seed: Option<u64>) -> Result<ReplayResult> {
    spec.validate()?;
    if records.is_empty() {
        return Err(Error::new(ErrorKind::InvalidDevice, "trace has no requests"));
    }
    let capacity = spec.capacity_sectors;
    let mut drive = Hdd::new(spec.clone(), Prng::derive(seed.unwrap_or(0), "drive", 0));
    if seed.is_none() {
        drive.set_phase_ns(0);
    }
    let mut now = 0u64;
    let mut done = Vec::new();
    let mut result = ReplayResult { measured_ms: Vec::with_capacity(records.len()), simulated_ms: Vec::with_capacity(records.len()) };
    for (i, r) in records.iter().enumerate() {
        let beyond = r.lbn.checked_add(r.sectors as u64).is_none_or(|end| end > capacity);
        if beyond || r.sectors == 0 {
            return Err(Error::new(
                ErrorKind::InvalidDevice,
                format!("trace line {}: LBN {} + {} sectors is beyond the drive's {capacity} sectors", r.line, r.lbn, r.sectors),
            ));
        }
        let id = i as u64;
        let op = if r.write { Op::Write } else { Op::Read };
        drive.submit(now, Command { id, op, sector: r.lbn, sectors: r.sectors });
        let finished = loop {
            let t = drive.next_event().expect("a drive with an outstanding command has an event");
            done.clear();
            drive.advance(t, &mut done);
            if let Some(c) = done.iter().find(|c| c.id == id) {
                break c.time;
            }
        };
        result.measured_ms.push(r.measured_us / 1000.0);
        result.simulated_ms.push((finished - now) as f64 / 1e6);
        now = next_arrival_ns(finished, r)?;
    }
    Ok(result)
}

/// When the request after `r` arrives: `r`'s gap after its completion, in checked integer
/// nanoseconds below [`MAX_ARRIVAL_NS`].
fn next_arrival_ns(finished: u64, r: &TraceRecord) -> Result<u64> {
    let gap_us = if (0.0..=MAX_TRACE_US).contains(&r.gap_us) { r.gap_us } else { f64::INFINITY };
    let gap_ns = (gap_us * 1000.0).round();
    let at = if gap_ns.is_finite() { finished.checked_add(gap_ns as u64) } else { None };
    at.filter(|&t| t < MAX_ARRIVAL_NS).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidDevice,
            format!("trace line {}: the next arrival (gap {} µs) passes the replay's limit of 2^53 ns (about 104 days)", r.line, r.gap_us),
        )
    })
}

/// RMS horizontal distance between two empirical CDFs sampled at `quantiles` evenly spaced
/// probabilities (the midpoints (i + ½)/K), in the samples' unit.
pub fn demerit_ms(measured: &[f64], simulated: &[f64], quantiles: usize) -> f64 {
    if measured.is_empty() || simulated.is_empty() || quantiles == 0 {
        return f64::NAN;
    }
    let sorted = |v: &[f64]| {
        let mut s = v.to_vec();
        s.sort_by(|a, b| a.total_cmp(b));
        s
    };
    let (a, b) = (sorted(measured), sorted(simulated));
    let at = |s: &[f64], q: f64| s[((q * s.len() as f64) as usize).min(s.len() - 1)];
    let mut sum = 0.0;
    for i in 0..quantiles {
        let q = (i as f64 + 0.5) / quantiles as f64;
        let d = at(&a, q) - at(&b, q);
        sum += d * d;
    }
    (sum / quantiles as f64).sqrt()
}
