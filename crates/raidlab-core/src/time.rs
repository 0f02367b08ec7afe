//! Simulated time: integer nanoseconds since the start of a run. Nothing reads a wall clock.

/// A point in simulated time, or a duration, in nanoseconds.
pub type Nanos = u64;

pub const NANOS_PER_MICRO: Nanos = 1_000;
pub const NANOS_PER_MILLI: Nanos = 1_000_000;
pub const NANOS_PER_SECOND: Nanos = 1_000_000_000;

/// Converts a duration in (fractional) milliseconds to whole nanoseconds, rounding to nearest.
pub fn nanos_from_ms(ms: f64) -> Nanos {
    assert!(ms.is_finite() && ms >= 0.0, "duration {ms} ms");
    (ms * NANOS_PER_MILLI as f64).round() as Nanos
}
