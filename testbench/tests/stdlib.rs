//! The standard blocks' properties under `cargo test` (a few cases each; `TB_CASES=N` for more,
//! `testbench regress --suite stdlib` for long runs).

use testbench::prop::check;
use testbench::suites::stdlib::*;

#[test]
fn skid_buffer() {
    check::<skid_buffer::SkidBufferProp>(24);
}

#[test]
fn interval_timer() {
    check::<interval_timer::IntervalTimerProp>(24);
}

#[test]
fn crc32() {
    check::<crc::Crc32Prop>(16);
}

#[test]
fn crc32c() {
    check::<crc::Crc32cProp>(16);
}

#[test]
fn token_bucket() {
    check::<token_bucket::TokenBucketProp>(16);
}

#[test]
fn fifo() {
    check::<fifo::FifoProp>(16);
}

#[test]
fn fifo_ops() {
    check::<fifo_ops::FifoOpsProp>(16);
}

#[test]
fn fifo_fwft() {
    check::<fifo::FifoFwftProp>(16);
}

#[test]
fn rr_arbiter() {
    check::<arbiter::RrArbiterProp>(16);
}

#[test]
fn wrr_arbiter() {
    check::<arbiter::WrrArbiterProp>(16);
}

#[test]
fn async_fifo() {
    check::<async_fifo::AsyncFifoProp>(16);
}

#[test]
fn sync_2ff() {
    check::<sync_2ff::Sync2ffProp>(16);
}

#[test]
fn reset_sync() {
    check::<reset_sync::ResetSyncProp>(16);
}
