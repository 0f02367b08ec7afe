//! Seek time as a function of cylinder distance.
//!
//! Two sources, as DiskSim offers (`dm_mech_g1` seek types "extracted" and "curve"):
//! - a measured table (distance → ms) interpolated linearly, as DIXtrac extracts them
//!   (Schindler & Ganger, "Automated disk drive characterization", CMU-CS-99-176) and as the
//!   validated `.seek` files hold;
//! - three data-sheet figures (single-cylinder, average, full stroke) fitted with Lee's
//!   three-point equation (E. K. Lee, PhD thesis, UC Berkeley 1993; DiskSim "curve" type):
//!   `t(0) = 0`, `t(x) = a·√(x−1) + b·(x−1) + c`. Lee's closed form for a, b is the large-N
//!   limit; here a and b are solved exactly on the discrete distance distribution of uniformly
//!   random cylinder pairs, so the curve reproduces all three figures to rounding for any N.
//!
//! Floating point is used inside one seek-time evaluation and rounded once to nanoseconds.

use crate::error::{Error, Result};
use crate::time::Nanos;

/// How a drive's seek curve is specified.
#[derive(Clone, Debug, PartialEq)]
pub enum SeekSpec {
    /// Data-sheet figures in ms, fitted with Lee's three-point equation.
    ThreePoint {
        single_ms: f64,
        average_ms: f64,
        full_stroke_ms: f64,
    },
    /// Measured (distance in cylinders, ms) points, distances strictly increasing from ≥ 1.
    Table(Vec<(u32, f64)>),
}

#[derive(Clone, Debug, PartialEq)]
enum Curve {
    Lee(Lee),
    Table { distance: Vec<u32>, ms: Vec<f64> },
}

/// Lee's curve `a·√(x−1) + b·(x−1) + c` (ms). [`SeekCurve::nanos`] delegates here, so both
/// give bit-identical results (the drive tabulates them per distance: `mech::SeekTable`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lee {
    pub a: f64,
    pub b: f64,
    pub c: f64,
}

impl Lee {
    #[inline(always)]
    pub fn ms(&self, distance: u32) -> f64 {
        if distance == 0 {
            return 0.0;
        }
        let x = (distance - 1) as f64;
        self.a * x.sqrt() + self.b * x + self.c
    }

    #[inline(always)]
    pub fn nanos(&self, distance: u32) -> Nanos {
        ms_to_nanos(self.ms(distance))
    }
}

/// Rounds once to whole nanoseconds (half up: the value is never negative, and adding ½ then
/// truncating is exact IEEE arithmetic, cheaper than a libm `round` call). Through i64: one
/// conversion instruction, where u64 needs a range fix-up; seeks are small.
#[inline(always)]
fn ms_to_nanos(ms: f64) -> Nanos {
    debug_assert!(ms >= 0.0);
    (ms * 1e6 + 0.5) as i64 as Nanos
}

/// A seek curve over a drive with a given number of cylinders.
#[derive(Clone, Debug, PartialEq)]
pub struct SeekCurve {
    curve: Curve,
    cylinders: u32,
}


/// Probability of cylinder distance `d` for two independent uniform cylinders in `0..n`.
fn distance_probability(d: u32, n: u32) -> f64 {
    let n = n as f64;
    if d == 0 {
        1.0 / n
    } else {
        2.0 * (n - d as f64) / (n * n)
    }
}

/// Longest seek a curve may give, in ms (a full stroke takes tens of ms on any drive). The
/// drive tabulates seeks as u32 nanoseconds (at most 4.29 s), so a longer one cannot be held.
pub const MAX_SEEK_MS: f64 = 1000.0;

impl SeekCurve {
    pub fn new(spec: &SeekSpec, cylinders: u32) -> Result<SeekCurve> {
        match spec {
            SeekSpec::ThreePoint {
                single_ms,
                average_ms,
                full_stroke_ms,
            } => SeekCurve::fit_three_point(*single_ms, *average_ms, *full_stroke_ms, cylinders),
            SeekSpec::Table(points) => SeekCurve::from_table(points, cylinders),
        }
    }

    /// Lee's equation through t(1) = `single`, t(N−1) = `full`, and mean over random pairs = `avg`.
    pub fn fit_three_point(single: f64, avg: f64, full: f64, cylinders: u32) -> Result<SeekCurve> {
        if !(single > 0.0 && single < avg && avg < full && full <= MAX_SEEK_MS) {
            return Err(Error::device(format!(
                "seek_ms_single_cylinder < seek_ms_average < seek_ms_full_stroke <= {MAX_SEEK_MS} is required, got {single} / {avg} / {full}"
            )));
        }
        if cylinders < 3 {
            return Err(Error::device(format!(
                "cylinders = {cylinders}: a three-point seek fit needs at least 3"
            )));
        }
        // Expectations of √(d−1) and (d−1) over d ≥ 1, and P(d ≥ 1), for random cylinder pairs.
        let (mut e_root, mut e_lin) = (0.0, 0.0);
        for d in 1..cylinders {
            let p = distance_probability(d, cylinders);
            e_root += p * ((d - 1) as f64).sqrt();
            e_lin += p * (d - 1) as f64;
        }
        let p_moving = 1.0 - distance_probability(0, cylinders);
        let (root_max, lin_max) = (((cylinders - 2) as f64).sqrt(), (cylinders - 2) as f64);
        // Two linear equations in a, b (c = single): the mean and the full stroke.
        let (r1, r2) = (avg - single * p_moving, full - single);
        let det = e_root * lin_max - e_lin * root_max;
        let a = (r1 * lin_max - e_lin * r2) / det;
        let b = (e_root * r2 - r1 * root_max) / det;
        let curve = SeekCurve {
            curve: Curve::Lee(Lee { a, b, c: single }),
            cylinders,
        };
        curve.check_increasing()?;
        Ok(curve)
    }

    fn check_increasing(&self) -> Result<()> {
        // Lee's increments a(√(y+1)−√y) + b are monotone in y, so checking both ends suffices.
        let n = self.cylinders;
        let first = self.ms(2) - self.ms(1);
        let last = self.ms(n - 1) - self.ms(n - 2);
        if first < 0.0 || last < 0.0 {
            return Err(Error::device("seek_ms_average is inconsistent with the single-cylinder and full-stroke times: the fitted seek curve would not increase with distance",
            ));
        }
        Ok(())
    }

    /// A measured curve; a distance beyond the last point takes the last point's time.
    pub fn from_table(points: &[(u32, f64)], cylinders: u32) -> Result<SeekCurve> {
        if points.is_empty() {
            return Err(Error::device("seek table is empty"));
        }
        let mut previous = 0u32;
        for &(distance, ms) in points {
            if distance <= previous || !(ms > 0.0 && ms <= MAX_SEEK_MS) {
                return Err(Error::device(format!(
                    "seek table point ({distance}, {ms}): distances must increase from 1 and times be 0 to {MAX_SEEK_MS} ms"
                )));
            }
            previous = distance;
        }
        let distance = points.iter().map(|p| p.0).collect();
        let ms = points.iter().map(|p| p.1).collect();
        Ok(SeekCurve {
            curve: Curve::Table { distance, ms },
            cylinders,
        })
    }

    pub fn cylinders(&self) -> u32 {
        self.cylinders
    }

    /// Lee coefficients (a, b, c) in ms when the curve is a three-point fit.
    pub fn lee_coefficients(&self) -> Option<(f64, f64, f64)> {
        self.lee().map(|l| (l.a, l.b, l.c))
    }

    /// The fitted curve, when it is one (for hot loops that want it by value).
    pub fn lee(&self) -> Option<Lee> {
        match self.curve {
            Curve::Lee(lee) => Some(lee),
            Curve::Table { .. } => None,
        }
    }

    /// Seek time in ms for a distance in cylinders (0 → 0).
    #[inline(always)]
    pub fn ms(&self, distance: u32) -> f64 {
        match &self.curve {
            Curve::Lee(lee) => lee.ms(distance),
            Curve::Table { .. } if distance == 0 => 0.0,
            Curve::Table { distance: ds, ms } => interpolate(ds, ms, distance),
        }
    }

    /// Seek time rounded once to whole nanoseconds.
    #[inline(always)]
    pub fn nanos(&self, distance: u32) -> Nanos {
        match &self.curve {
            Curve::Lee(lee) => lee.nanos(distance),
            Curve::Table { .. } => ms_to_nanos(self.ms(distance)),
        }
    }

    /// Mean seek (ns, as simulated after rounding) over two independent uniform cylinders.
    pub fn mean_uniform_ns(&self) -> f64 {
        let n = self.cylinders;
        (1..n)
            .map(|d| distance_probability(d, n) * self.nanos(d) as f64)
            .sum()
    }
}

fn interpolate(distances: &[u32], ms: &[f64], distance: u32) -> f64 {
    let i = distances.partition_point(|&d| d <= distance);
    if i == 0 {
        return ms[0];
    }
    if i == distances.len() {
        return ms[i - 1];
    }
    let (d0, d1) = (distances[i - 1] as f64, distances[i] as f64);
    let weight = (distance as f64 - d0) / (d1 - d0);
    ms[i - 1] + weight * (ms[i] - ms[i - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolates_and_clamps() {
        let curve = SeekCurve::from_table(&[(1, 1.0), (11, 2.0), (100, 5.0)], 200).unwrap();
        assert_eq!(curve.ms(0), 0.0);
        assert_eq!(curve.ms(1), 1.0);
        assert!((curve.ms(6) - 1.5).abs() < 1e-12);
        assert_eq!(curve.ms(150), 5.0);
        assert!(SeekCurve::from_table(&[(2, 1.0), (2, 3.0)], 10).is_err());
    }

    #[test]
    fn lee_closed_form_is_the_large_n_limit() {
        // Lee's closed form (E. K. Lee, PhD thesis, UC Berkeley 1993; DiskSim's "curve" seek
        // type) against the exact discrete solve.
        let (min, avg, max, n) = (0.5, 5.0, 11.0, 200_000u32);
        let curve = SeekCurve::fit_three_point(min, avg, max, n).unwrap();
        let (a, b, c) = curve.lee_coefficients().unwrap();
        let root_n = (n as f64).sqrt();
        let a_lee = (-10.0 * min + 15.0 * avg - 5.0 * max) / (3.0 * root_n);
        let b_lee = (7.0 * min - 15.0 * avg + 8.0 * max) / (3.0 * n as f64);
        assert!((a - a_lee).abs() / a_lee.abs() < 1e-3, "{a} vs {a_lee}");
        assert!((b - b_lee).abs() / b_lee.abs() < 1e-3, "{b} vs {b_lee}");
        assert_eq!(c, min);
    }
}
