//! Golden files pin the emitted text of one CRC and one token bucket. Refresh with
//! `UPDATE_GOLDEN=1 cargo test -p hdl-gen --test stdlib_crc_bucket_golden` and review the diff.

mod common;

use hdl_builder::{Design, EmitOptions, Module, ResetStyle};
use hdl_gen::blocks::crc::{crc, CRC32C};
use hdl_gen::blocks::token_bucket::{token_bucket, TokenBucketParams};
use std::rc::Rc;

/// The emitted `<module>.sv` of `m` alone.
fn sv(m: Rc<Module>) -> String {
    let name = format!("{}.sv", m.name());
    let mut d = Design::new("golden");
    d.add_top(m);
    d.emit(&EmitOptions {
        header: vec!["golden test header".into()],
        core_name: "test:golden:golden:0".into(),
        description: "golden".into(),
    })
    .unwrap_or_else(|e| panic!("{e}"))
    .into_iter()
    .find(|f| f.path == name)
    .unwrap_or_else(|| panic!("{name} not emitted"))
    .contents
}

#[test]
fn crc32c_d32_sv() {
    let m = crc(&CRC32C, 32, ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
    common::golden("crc32c_d32.sv", &sv(m));
}

#[test]
fn token_bucket_c8_t8_f8_sv() {
    let p = TokenBucketParams {
        cost_width: 8,
        token_bits: 8,
        frac_bits: 8,
    };
    let m = token_bucket(&p, ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
    common::golden("token_bucket_c8_t8_f8.sv", &sv(m));
}
