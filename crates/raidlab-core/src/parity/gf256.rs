//! Arithmetic in GF(2^8) as Linux md's RAID6 uses it.
//!
//! The field is GF(2)\[x\] modulo x^8+x^4+x^3+x^2+1 (0x11d) with generator g = {02}
//! (kernel `lib/raid6/mktables.c`). Addition is XOR.
//! The exp/log/inverse tables are built by `const fn` at compile time, so there is no lazy
//! initialisation and no runtime cost; a table that failed its own checks would not compile.

/// The reducing polynomial x^8+x^4+x^3+x^2+1, with the x^8 bit.
pub const POLYNOMIAL: u16 = 0x11d;
/// The generator g of the multiplicative group md uses for Q.
pub const GENERATOR: u8 = 2;
/// Order of the multiplicative group: g^255 = 1.
pub const ORDER: u32 = 255;

/// Multiplies by shift-and-add, reducing after every shift. Slow; only builds the tables.
const fn mul_slow(a: u8, b: u8) -> u8 {
    let mut a = a as u16;
    let mut b = b;
    let mut product = 0u16;
    while b != 0 {
        if b & 1 != 0 {
            product ^= a;
        }
        a <<= 1;
        if a & 0x100 != 0 {
            a ^= POLYNOMIAL;
        }
        b >>= 1;
    }
    product as u8
}

/// `EXP[i] = g^(i mod 255)` for i < 510, doubled so `mul` can add two logs without a modulo.
const fn build_exp() -> [u8; 510] {
    let mut table = [0u8; 510];
    let mut power = 1u8;
    let mut i = 0;
    while i < 510 {
        table[i] = power;
        power = mul_slow(power, GENERATOR);
        i += 1;
    }
    // g has order exactly 255 only if it is a generator: g^255 = 1 and no earlier power is 1.
    assert!(table[255] == 1);
    table
}

/// `LOG[x]` = the i with g^i = x, for x ≠ 0 (`LOG[0]` is unused).
const fn build_log(exp: &[u8; 510]) -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut seen = [false; 256];
    let mut i = 0;
    while i < ORDER as usize {
        let x = exp[i] as usize;
        // Every non-zero element appears once among g^0..g^254, so g generates the group.
        assert!(x != 0 && !seen[x]);
        seen[x] = true;
        table[x] = i as u8;
        i += 1;
    }
    table
}

/// `INV[x] = x^-1 = g^(255 - log x)` for x ≠ 0 (md's `gfinv`; `INV[0]` is unused).
const fn build_inv(exp: &[u8; 510], log: &[u8; 256]) -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut x = 1;
    while x < 256 {
        table[x] = exp[(ORDER as usize - log[x] as usize) % ORDER as usize];
        assert!(mul_slow(x as u8, table[x]) == 1);
        x += 1;
    }
    table
}

const EXP: [u8; 510] = build_exp();
const LOG: [u8; 256] = build_log(&EXP);
const INV: [u8; 256] = build_inv(&EXP, &LOG);

/// `a · b` in GF(2^8).
#[inline]
pub const fn mul(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        return 0;
    }
    EXP[LOG[a as usize] as usize + LOG[b as usize] as usize]
}

/// `a^-1`. Panics on zero, which has no inverse: callers divide only by non-zero values.
#[inline]
pub fn inv(a: u8) -> u8 {
    assert!(a != 0, "zero has no inverse in GF(2^8)");
    INV[a as usize]
}

/// `a / b`. Panics if `b` is zero.
#[inline]
pub fn div(a: u8, b: u8) -> u8 {
    mul(a, inv(b))
}

/// `g^power`, for any power (g^255 = g^0 = 1).
#[inline]
pub const fn exp(power: u32) -> u8 {
    EXP[(power % ORDER) as usize]
}

/// The discrete log: the `i` in 0..255 with g^i = a. Panics on zero, which has no log.
#[inline]
pub fn log(a: u8) -> u8 {
    assert!(a != 0, "zero has no logarithm in GF(2^8)");
    LOG[a as usize]
}

/// `a^power` (with 0^0 = 1).
#[inline]
pub fn pow(a: u8, power: u32) -> u8 {
    if a == 0 {
        return u8::from(power == 0);
    }
    let exponent = (LOG[a as usize] as u64 * power as u64) % ORDER as u64;
    EXP[exponent as usize]
}

// The slice helpers below are plain index loops on purpose: with no iterator adaptors to
// inline they run several times faster in unoptimised builds, which is where the property
// tests spend their time. Release builds vectorise them either way.

/// `dst ⊕= src`.
pub fn xor_into(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "xor of blocks of different sizes");
    let mut i = 0;
    while i < dst.len() {
        dst[i] ^= src[i];
        i += 1;
    }
}

/// `dst ⊕= c · src`, the multiply-accumulate step of Q arithmetic.
pub fn mul_acc(dst: &mut [u8], src: &[u8], c: u8) {
    assert_eq!(dst.len(), src.len(), "multiply-accumulate of blocks of different sizes");
    match c {
        0 => {}
        1 => xor_into(dst, src),
        _ => {
            // One 256-byte row of the multiplication table turns each byte into a lookup.
            let row = mul_row(c);
            let mut i = 0;
            while i < dst.len() {
                dst[i] ^= row[src[i] as usize];
                i += 1;
            }
        }
    }
}

/// `buf = c · buf` in place.
pub fn scale(buf: &mut [u8], c: u8) {
    if c == 1 {
        return;
    }
    let row = mul_row(c);
    let mut i = 0;
    while i < buf.len() {
        buf[i] = row[buf[i] as usize];
        i += 1;
    }
}

/// `row[x] = c · x` for every byte x.
fn mul_row(c: u8) -> [u8; 256] {
    let mut row = [0u8; 256];
    for (x, out) in row.iter_mut().enumerate() {
        *out = mul(c, x as u8);
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_powers_of_g_match_mds_gfexp() {
        // g^0..g^15 as listed in the kernel's generated raid6tables.c `raid6_gfexp`.
        let expected = [
            0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1d, 0x3a, 0x74, 0xe8, 0xcd, 0x87,
            0x13, 0x26,
        ];
        for (i, &value) in expected.iter().enumerate() {
            assert_eq!(exp(i as u32), value, "g^{i}");
        }
        assert_eq!(exp(255), 1);
        assert_eq!(exp(254), 0x8e);
    }

    #[test]
    fn spot_products() {
        assert_eq!(mul(2, 0x80), 0x1d, "x · x^7 wraps through 0x11d");
        assert_eq!(mul(0x80, 0x80), 0x13, "x^14 = g^14");
        assert_eq!(mul(3, 3), 5, "(x+1)^2 = x^2+1");
        assert_eq!(mul(0xff, 1), 0xff);
        assert_eq!(mul(0, 0xab), 0);
        assert_eq!(inv(2), 0x8e);
        assert_eq!(div(1, 0x8e), 2);
        assert_eq!(log(0x1d), 8);
        assert_eq!(pow(2, 8), 0x1d);
        assert_eq!(pow(0, 0), 1);
        assert_eq!(pow(0, 3), 0);
    }

    #[test]
    fn tables_agree_with_the_slow_multiply() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul_slow(a, b), "{a:#x} · {b:#x}");
            }
            if a != 0 {
                assert_eq!(mul(a, inv(a)), 1, "{a:#x} · {a:#x}^-1");
                assert_eq!(exp(log(a) as u32), a);
                assert_eq!(pow(a, 255), 1, "Fermat: a^255 = 1");
            }
        }
    }

    #[test]
    fn slice_helpers() {
        let mut dst = [1u8, 2, 3, 0x80];
        mul_acc(&mut dst, &[1, 1, 0, 1], 2);
        assert_eq!(dst, [3, 0, 3, 0x82]);
        scale(&mut dst, 0);
        assert_eq!(dst, [0; 4]);
        let mut buf = [0x80u8, 1];
        scale(&mut buf, 2);
        assert_eq!(buf, [0x1d, 2]);
    }
}
