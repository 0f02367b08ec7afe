//! raidlab's own PRNG: xoshiro256** (Blackman & Vigna, "Scrambled linear pseudorandom number
//! generators", 2018/2021), seeded through SplitMix64 (Steele, Lea & Flood 2014) as its authors
//! recommend. Owning the algorithm keeps results byte-identical across machines and releases
//! of dependencies; the value-stability test below pins the sequence.
//!
//! Floating-point draws use only exact operations (a 53-bit integer scaled by 2^-53), and the
//! transcendental functions used by distributions come from the pure-Rust `libm`, so no platform
//! maths library can change a result.

/// Splits one 64-bit seed into a stream of well-mixed 64-bit values.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The named generator every subsystem uses. One per subsystem, from [`Prng::derive`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prng {
    s: [u64; 4],
}

impl Prng {
    /// Algorithm name recorded in reports.
    pub const ALGORITHM: &'static str = "xoshiro256**/splitmix64";

    pub fn new(seed: u64) -> Prng {
        let mut mixer = SplitMix64::new(seed);
        let s = [mixer.next_u64(), mixer.next_u64(), mixer.next_u64(), mixer.next_u64()];
        assert!(s.iter().any(|&w| w != 0), "xoshiro state must not be all zero");
        Prng { s }
    }

    /// A sub-seeded generator for a named subsystem and index (e.g. "drive", 3): independent
    /// of how many numbers other subsystems draw, so adding a drive does not perturb the workload.
    pub fn derive(seed: u64, subsystem: &str, index: u64) -> Prng {
        // FNV-1a of the name folds it into the seed deterministically.
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for byte in subsystem.bytes() {
            hash = (hash ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
        }
        let mut mixer = SplitMix64::new(seed ^ hash);
        let first = mixer.next_u64();
        Prng::new(first ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..bound` without modulo bias (Lemire's multiply-shift with rejection,
    /// "Fast Random Integer Generation in an Interval", 2019).
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "empty range");
        let mut product = (self.next_u64() as u128) * (bound as u128);
        let mut low = product as u64;
        if low < bound {
            let threshold = bound.wrapping_neg() % bound;
            while low < threshold {
                product = (self.next_u64() as u128) * (bound as u128);
                low = product as u64;
            }
        }
        (product >> 64) as u64
    }

    /// Uniform in [0, 1) with 53 random bits.
    #[inline]
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        debug_assert!((0.0..=1.0).contains(&p));
        self.unit_f64() < p
    }

    /// Exponentially distributed with the given mean (inverse transform with libm's log).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        assert!(mean >= 0.0);
        -mean * libm::log(1.0 - self.unit_f64())
    }

    /// Standard normal (Box-Muller with libm).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit_f64();
        let u2 = self.unit_f64();
        libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_is_stable_across_releases() {
        // Pinned values: changing them changes every simulation result; do so only on purpose.
        let mut rng = Prng::new(42);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(first, PINNED_SEED_42);
        let mut splitmix = SplitMix64::new(0);
        // SplitMix64's published first output for seed 0.
        assert_eq!(splitmix.next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    const PINNED_SEED_42: [u64; 3] = [1546998764402558742, 6990951692964543102, 12544586762248559009];

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut rng = Prng::new(7);
        let mut seen = [0u32; 6];
        for _ in 0..6000 {
            seen[rng.below(6) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (850..1150).contains(&n)), "{seen:?}");
    }

    #[test]
    fn subsystems_get_different_streams() {
        let a = Prng::derive(1, "drive", 0).next_u64();
        let b = Prng::derive(1, "drive", 1).next_u64();
        let c = Prng::derive(1, "workload", 0).next_u64();
        assert!(a != b && a != c && b != c);
        assert_eq!(a, Prng::derive(1, "drive", 0).next_u64());
    }

    #[test]
    fn unit_and_exponential_have_the_right_means() {
        let mut rng = Prng::new(3);
        let n = 20000;
        let mean_unit: f64 = (0..n).map(|_| rng.unit_f64()).sum::<f64>() / n as f64;
        let mean_exp: f64 = (0..n).map(|_| rng.exponential(5.0)).sum::<f64>() / n as f64;
        assert!((mean_unit - 0.5).abs() < 0.01);
        assert!((mean_exp - 5.0).abs() < 0.15);
    }
}
