//! Latency histogram with a bounded relative error (log-linear buckets, as in HdrHistogram and
//! fio's own latency buckets, `stat.h` FIO_IO_U_PLAT_BITS).
//!
//! Values below 256 ns are kept exactly. Above, each power of two [2^e, 2^(e+1)) is split into
//! 128 equal sub-buckets, so a bucket's width is at most 1/128 of its lower bound. A percentile
//! is reported as the midpoint of its bucket: the **relative error is at most 1/256 (0.39%)**.

const SUB_BITS: u32 = 7;
const SUB_COUNT: u64 = 1 << SUB_BITS;
const EXACT_LIMIT: u64 = 2 * SUB_COUNT;
const BUCKETS: usize = (EXACT_LIMIT + (64 - SUB_BITS as u64 - 1) * SUB_COUNT) as usize;

/// Documented bound on the relative error of reported percentiles.
pub const RELATIVE_ERROR_BOUND: f64 = 1.0 / 256.0;

/// fio's default `percentile_list` (fio's HOWTO; stat.c `fio_default_percentiles`): the
/// percentiles every job and phase reports, and every output names.
pub const FIO_PERCENTILES: [f64; 17] =
    [1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
    sum: u128,
    sum_squares: u128,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram::new()
    }
}

fn bucket_of(value: u64) -> usize {
    if value < EXACT_LIMIT {
        return value as usize;
    }
    let exponent = 63 - value.leading_zeros();
    let shift = exponent - SUB_BITS;
    let top = value >> shift;
    debug_assert!((SUB_COUNT..2 * SUB_COUNT).contains(&top));
    (EXACT_LIMIT + (shift as u64 - 1) * SUB_COUNT + (top - SUB_COUNT)) as usize
}

/// The lowest value and width of a bucket.
fn bucket_range(index: usize) -> (u64, u64) {
    let index = index as u64;
    if index < EXACT_LIMIT {
        return (index, 1);
    }
    let shift = (index - EXACT_LIMIT) / SUB_COUNT + 1;
    let top = (index - EXACT_LIMIT) % SUB_COUNT + SUB_COUNT;
    (top << shift, 1 << shift)
}

impl Histogram {
    pub fn new() -> Histogram {
        Histogram { counts: vec![0; BUCKETS], total: 0, min: u64::MAX, max: 0, sum: 0, sum_squares: 0 }
    }

    #[inline]
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_of(value)] += 1;
        self.total += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum += value as u128;
        self.sum_squares += (value as u128) * (value as u128);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            *mine += theirs;
        }
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_squares += other.sum_squares;
    }

    pub fn count(&self) -> u64 {
        self.total
    }
    pub fn min(&self) -> u64 {
        if self.total == 0 { 0 } else { self.min }
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    pub fn mean(&self) -> f64 {
        if self.total == 0 { 0.0 } else { self.sum as f64 / self.total as f64 }
    }
    pub fn sum(&self) -> u128 {
        self.sum
    }
    /// Population standard deviation, as fio reports it.
    pub fn stddev(&self) -> f64 {
        if self.total < 2 {
            return 0.0;
        }
        let n = self.total as f64;
        let mean = self.sum as f64 / n;
        let variance = (self.sum_squares as f64 / n - mean * mean).max(0.0);
        variance.sqrt()
    }

    /// The non-empty buckets as (lowest value, width, count), lowest first (fio's
    /// json+ bins are re-bucketed from these; each of fio's buckets is a whole number of ours).
    pub fn buckets(&self) -> Vec<(u64, u64, u64)> {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(_, &count)| count > 0)
            .map(|(index, &count)| {
                let (low, width) = bucket_range(index);
                (low, width, count)
            })
            .collect()
    }

    /// The value at percentile `p` (0-100): the midpoint of the bucket holding the
    /// ceil(p/100 · N)-th smallest value, clamped to the observed min and max.
    pub fn percentile(&self, p: f64) -> u64 {
        assert!((0.0..=100.0).contains(&p));
        if self.total == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (index, &count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                let (low, width) = bucket_range(index);
                return (low + width / 2).clamp(self.min, self.max);
            }
        }
        unreachable!("rank {rank} within {} values", self.total)
    }
}

/// A distribution kept as its non-empty buckets only, (bucket, count) ascending: the compact
/// form of the many small distributions a run keeps when asked for each second's latencies
/// (`SimConfig::latency_by_second`), merged later over whichever seconds a report wants (the
/// steady state `raidlab compare` finds after the run). Same buckets, so the same error bound.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseHistogram {
    buckets: Vec<(u32, u32)>,
}

impl SparseHistogram {
    /// The distribution of `values` (sorted in place).
    pub fn of(values: &mut [u64]) -> SparseHistogram {
        values.sort_unstable();
        let mut buckets: Vec<(u32, u32)> = Vec::new();
        for &value in values.iter() {
            // bucket_of is monotonic, so sorted values give ascending buckets.
            let bucket = bucket_of(value) as u32;
            match buckets.last_mut() {
                Some((last, count)) if *last == bucket => *count += 1,
                _ => buckets.push((bucket, 1)),
            }
        }
        SparseHistogram { buckets }
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Each non-empty bucket as (its lowest value, count), lowest first: the form
    /// [`Histogram::from_lows`] takes back.
    pub fn lows(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.buckets.iter().map(|&(bucket, count)| (bucket_range(bucket as usize).0, count as u64))
    }
}

impl Histogram {
    /// A histogram from bucket counts named by each bucket's lowest value (as
    /// [`SparseHistogram::lows`] and [`Histogram::buckets`] give them), in any order, a bucket
    /// possibly more than once: for its counts and percentiles, which come out as over the
    /// values themselves (the minimum and maximum are known only to their buckets; the sums
    /// behind the mean and deviation are not kept, so those read 0).
    pub fn from_lows(lows: &[(u64, u64)]) -> Result<Histogram, String> {
        let mut histogram = Histogram::new();
        for &(low, count) in lows {
            let index = bucket_of(low);
            let (start, width) = bucket_range(index);
            if start != low {
                return Err(format!("{low} ns is not where a latency bucket starts"));
            }
            if count == 0 {
                continue;
            }
            histogram.counts[index] += count;
            histogram.total += count;
            histogram.min = histogram.min.min(low);
            histogram.max = histogram.max.max(low + (width - 1));
        }
        Ok(histogram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut previous = 0;
        for value in (0..5000u64).chain([1 << 20, (1 << 40) + 12345, u64::MAX]) {
            let index = bucket_of(value);
            let (low, width) = bucket_range(index);
            assert!(low <= value && value - low < width, "value {value} bucket {index}");
            assert!(width == 1 || (width as f64) / (low as f64) <= 1.0 / 128.0 + 1e-12);
            assert!(index >= previous || value > 5000);
            previous = index;
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    /// Per-second sparse histograms merged over any run of seconds give the percentiles of
    /// one histogram of the same values.
    #[test]
    fn sparse_seconds_merge_to_the_whole() {
        let mut whole = Histogram::new();
        let mut lows = Vec::new();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for second in 0..20u64 {
            let mut values: Vec<u64> = (0..500)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (state >> 40) % (1 + second * 100_000) + 100
                })
                .collect();
            values.iter().for_each(|&v| whole.record(v));
            let sparse = SparseHistogram::of(&mut values);
            assert!(sparse.buckets.windows(2).all(|w| w[0].0 < w[1].0), "ascending, one entry a bucket");
            lows.extend(sparse.lows());
        }
        let merged = Histogram::from_lows(&lows).unwrap();
        assert_eq!(merged.count(), whole.count());
        assert_eq!(merged.buckets(), whole.buckets());
        // Away from the extremes (where the whole clamps to the exact minimum and maximum).
        for p in [1.0, 50.0, 90.0, 99.0, 99.9] {
            assert_eq!(merged.percentile(p), whole.percentile(p), "p{p}");
        }
        assert!(Histogram::from_lows(&[(1001, 1)]).is_err(), "1001 ns is inside a bucket");
        assert_eq!(Histogram::from_lows(&[]).unwrap().percentile(50.0), 0);
    }

    #[test]
    fn percentiles_are_within_the_bound() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for p in [1.0, 50.0, 90.0, 99.0, 99.9] {
            let exact = (p / 100.0 * 100_000.0) as f64 * 1000.0;
            let got = h.percentile(p) as f64;
            assert!(((got - exact) / exact).abs() <= RELATIVE_ERROR_BOUND * 2.0, "p{p}: {got} vs {exact}");
        }
        assert_eq!(h.min(), 1000);
        assert_eq!(h.max(), 100_000_000);
        assert!((h.mean() - 50_000_500.0).abs() < 1.0);
    }
}
