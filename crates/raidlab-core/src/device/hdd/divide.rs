//! Exact division by a divisor fixed when a drive is built, with multiplications.
//!
//! The drive model divides by the same few numbers (sectors per track, surfaces, the
//! revolution) on every positioning decision; a hardware 64-bit divide costs several times a
//! multiply there. With `m = ⌊2^64 / d⌋ + 1` (Lemire, Kaser & Kurz, "Faster remainder by direct
//! computation", Software: Practice and Experience 49(6), 2019), write `m·d = 2^64 + e` with
//! `0 < e ≤ d`; then `n·m / 2^64 = n/d + n·e / (d·2^64)`, and the floor is `⌊n/d⌋` whenever
//! `n·e < 2^64`, so whenever `n·d < 2^64`. Every 32-bit `n` qualifies (`d < 2^32`); larger ones
//! are checked against that bound and divided in hardware beyond it.

/// A divisor `1 ≤ d < 2^32` with its reciprocal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u32,
    m: u64,
    /// The largest `n` with `n·d < 2^64` (0 for `d = 1`, whose `m` wraps to 0).
    limit: u64,
}

impl Divisor {
    pub fn new(d: u32) -> Divisor {
        assert!(d >= 1, "a divisor of at least 1");
        let limit = if d == 1 { 0 } else { u64::MAX / d as u64 };
        Divisor { d, m: (u64::MAX / d as u64).wrapping_add(1), limit }
    }

    #[inline(always)]
    pub fn get(self) -> u32 {
        self.d
    }

    /// `(n / d, n % d)`: the quotient is the high word of `m·n`, the remainder the high word of
    /// `(m·n mod 2^64)·d`.
    #[inline(always)]
    pub fn div_rem(self, n: u32) -> (u32, u32) {
        if self.d == 1 {
            return (n, 0);
        }
        let product = self.m as u128 * n as u128;
        ((product >> 64) as u32, self.rem_of_low(product as u64))
    }

    /// `n % d` (also for `d = 1`: `m` is 0, and so is the result).
    #[inline(always)]
    pub fn rem(self, n: u32) -> u32 {
        self.rem_of_low(self.m.wrapping_mul(n as u64))
    }

    #[inline(always)]
    fn rem_of_low(self, low: u64) -> u32 {
        ((low as u128 * self.d as u128) >> 64) as u32
    }

    /// `n / d` for any `n`: a multiplication while `n·d < 2^64`, else a divide.
    #[inline(always)]
    pub fn div(self, n: u64) -> u64 {
        if n <= self.limit {
            ((self.m as u128 * n as u128) >> 64) as u64
        } else {
            n / self.d as u64
        }
    }

    /// `n % d` for any `n`.
    #[inline(always)]
    pub fn rem_wide(self, n: u64) -> u64 {
        n - self.div(n) * self.d as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Prng;

    const DIVISORS: [u32; 12] = [1, 2, 3, 7, 8, 457, 938, 4248, 65_537, 6_000_000, u32::MAX - 1, u32::MAX];

    #[test]
    fn narrow_division_is_exact() {
        let mut prng = Prng::new(7);
        for d in DIVISORS {
            let div = Divisor::new(d);
            let edges = [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX];
            let random = (0..10_000).map(|_| prng.below(1 << 32) as u32);
            for n in edges.into_iter().chain(random) {
                assert_eq!(div.div_rem(n), (n / d, n % d), "{n} / {d}");
                assert_eq!(div.rem(n), n % d, "{n} % {d}");
            }
        }
    }

    /// Around the bound where the multiplication stops being exact, at the top of the range,
    /// and at random magnitudes from 2^0 to 2^64.
    #[test]
    fn wide_division_is_exact() {
        let mut prng = Prng::new(8);
        for d in DIVISORS {
            let div = Divisor::new(d);
            let d64 = d as u64;
            let limit = u64::MAX / d64;
            let edges = [0, 1, d64 - 1, d64, limit - 1, limit, limit.saturating_add(1), limit.saturating_mul(2), u64::MAX - 1, u64::MAX];
            let random = (0..20_000).map(|i| prng.next_u64() >> (i % 64));
            for n in edges.into_iter().chain(random) {
                assert_eq!(div.div(n), n / d64, "{n} / {d}");
                assert_eq!(div.rem_wide(n), n % d64, "{n} % {d}");
            }
        }
    }
}
