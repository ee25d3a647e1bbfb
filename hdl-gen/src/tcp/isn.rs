//! The keyed function F of RFC 6528's ISN = M + F(4-tuple, key): HalfSipHash-2-4 with a 32-bit
//! result over three 32-bit message words (local IPv4, remote IPv4, local port << 16 | remote
//! port), i.e. the 12-byte message of those words in little-endian order, with the 64-bit key
//! of the `isn_key` CSRs. The hardware runs one SipRound per cycle (12 cycles); this Rust
//! function is its reference (the testbench checks the ISNs with it).

use hdl_builder::prelude::*;

fn round(v: &mut [u32; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(5) ^ v[0];
    v[0] = v[0].rotate_left(16);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(8) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(7) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[2];
    v[2] = v[2].rotate_left(16);
}

/// HalfSipHash-2-4 (32-bit output) of the message words `m` (each 4 message bytes,
/// little-endian) with key (`k0`, `k1`); the message length is `4 * m.len()` bytes (< 4 words
/// of padding rules are not needed: the engine's message is whole words).
pub fn half_siphash(k0: u32, k1: u32, m: &[u32]) -> u32 {
    let mut v = [k0, k1, 0x6c79_6765 ^ k0, 0x7465_6462 ^ k1];
    let last = ((m.len() as u32 * 4) & 0xff) << 24;
    for &w in m.iter().chain(std::iter::once(&last)) {
        v[3] ^= w;
        round(&mut v);
        round(&mut v);
        v[0] ^= w;
    }
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[1] ^ v[3]
}

fn rotl(x: &Expr, n: u32) -> Expr {
    cat([x.slice(31 - n, 0), x.slice(31, 32 - n)])
}

/// One SipRound on four 32-bit expressions.
pub(super) fn round_expr(v: [Expr; 4]) -> [Expr; 4] {
    let [v0, v1, v2, v3] = v;
    let v0 = v0 + &v1;
    let v1 = rotl(&v1, 5) ^ &v0;
    let v0 = rotl(&v0, 16);
    let v2 = v2 + &v3;
    let v3 = rotl(&v3, 8) ^ &v2;
    let v0 = v0 + &v3;
    let v3 = rotl(&v3, 7) ^ &v0;
    let v2 = v2 + &v1;
    let v1 = rotl(&v1, 13) ^ &v2;
    let v2 = rotl(&v2, 16);
    [v0, v1, v2, v3]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference implementation's `vectors_hsip32` (key bytes 0..7, message bytes 0..n-1)
    /// for the whole-word lengths 0, 4, 8 and 12.
    #[test]
    fn matches_the_reference_vectors() {
        let w = |i: u8| u32::from_le_bytes([i, i + 1, i + 2, i + 3]);
        let (k0, k1) = (w(0), w(4));
        let m = [w(0), w(4), w(8)];
        let want: [[u8; 4]; 4] = [
            [0xa9, 0x35, 0x9f, 0x5b],
            [0x2a, 0x6e, 0x46, 0x89],
            [0xd0, 0xb8, 0x84, 0x8f],
            [0x57, 0xf0, 0x87, 0x2f],
        ];
        for (n, v) in want.iter().enumerate() {
            assert_eq!(half_siphash(k0, k1, &m[..n]).to_le_bytes(), *v, "{n} words");
        }
    }
}
