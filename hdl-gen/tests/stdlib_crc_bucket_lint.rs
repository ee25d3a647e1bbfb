//! The CRC and token bucket generators' output is lint-clean (Verilator -Wall) and synthesizes
//! (Yosys): CRC-32 and CRC-32C at 8, 32, 64 and 128-bit beats, token buckets from degenerate to
//! wide, each reset style at least once.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::blocks::crc::{crc, CrcParams, CRC32, CRC32C};
use hdl_gen::blocks::token_bucket::{token_bucket, TokenBucketParams};

/// Lints CRCs `(algorithm, data bits)` and token buckets `(cost, token, fraction bits)` together.
fn lint(style: ResetStyle, crcs: &[(CrcParams, u32)], buckets: &[(u32, u32, u32)]) {
    let mut d = Design::new("lint");
    for (p, width) in crcs {
        d.add_top(crc(p, *width, style).unwrap_or_else(|e| panic!("{e}")));
    }
    for &(cost_width, token_bits, frac_bits) in buckets {
        let p = TokenBucketParams {
            cost_width,
            token_bits,
            frac_bits,
        };
        d.add_top(token_bucket(&p, style).unwrap_or_else(|e| panic!("{e}")));
    }
    hdl_gen::lint::assert_clean(&d);
}

#[test]
fn async_low() {
    lint(
        ResetStyle::AsyncLow,
        &[(CRC32, 8), (CRC32C, 128)],
        &[(16, 24, 16)],
    );
}

#[test]
fn async_high() {
    lint(
        ResetStyle::AsyncHigh,
        &[(CRC32, 32), (CRC32C, 64)],
        &[(8, 8, 8)],
    );
}

/// CRC-16/IBM-3740: not reflected.
const CRC16: CrcParams = CrcParams {
    name: "crc16_ibm3740",
    width: 16,
    poly: 0x1021,
    init: 0xffff,
    reflect_in: false,
    reflect_out: false,
    xor_out: 0,
};

/// CRC-5/USB: narrower than a byte.
const CRC5: CrcParams = CrcParams {
    name: "crc5_usb",
    width: 5,
    poly: 0x05,
    init: 0x1f,
    reflect_in: true,
    reflect_out: true,
    xor_out: 0x1f,
};

#[test]
fn sync_low() {
    // A cost wider than the bucket: requests above the capacity leave a debt. CRCs other than
    // CRC-32, with an odd number of byte lanes.
    lint(
        ResetStyle::SyncLow,
        &[(CRC32, 64), (CRC32C, 8), (CRC16, 24), (CRC5, 16)],
        &[(20, 8, 4)],
    );
}

#[test]
fn sync_high() {
    // The degenerate bucket: one-bit cost and capacity, no fraction bits.
    lint(
        ResetStyle::SyncHigh,
        &[(CRC32, 128), (CRC32C, 32)],
        &[(1, 1, 0), (32, 32, 32)],
    );
}
