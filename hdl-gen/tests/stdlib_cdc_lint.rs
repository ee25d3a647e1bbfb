//! The clock-domain-crossing blocks (two-flop synchronizer, reset synchronizer, asynchronous
//! FIFO) over a spread of parameters and every reset style: lint-clean under
//! `verilator --lint-only -Wall` and synthesized by Yosys; bad parameters are refused.

use hdl_builder::{Design, ErrorKind, ResetStyle};
use hdl_gen::blocks::async_fifo::async_fifo;
use hdl_gen::blocks::reset_sync::reset_sync;
use hdl_gen::blocks::sync_2ff::sync_2ff;

const STYLES: [ResetStyle; 4] = [
    ResetStyle::AsyncLow,
    ResetStyle::AsyncHigh,
    ResetStyle::SyncLow,
    ResetStyle::SyncHigh,
];

#[test]
fn the_crossing_blocks_are_lint_clean() {
    for (i, style) in STYLES.into_iter().enumerate() {
        let mut d = Design::new("lint");
        d.add_top(sync_2ff(1 + 3 * i as u32, style).unwrap());
        d.add_top(reset_sync(style).unwrap());
        let (width, depth) = [(1, 2), (8, 4), (32, 16), (13, 64)][i];
        d.add_top(async_fifo(width, depth, style).unwrap());
        hdl_gen::lint::assert_clean(&d);
    }
}

#[test]
fn bad_parameters_are_refused() {
    let style = ResetStyle::AsyncLow;
    for (w, dep) in [(8, 12), (8, 1), (0, 4)] {
        let e = async_fifo(w, dep, style).expect_err("refused");
        assert!(e.has(ErrorKind::Invalid), "{e}");
        assert!(e.to_string().contains("power of two"), "{e}");
    }
    assert!(sync_2ff(0, style).is_err());
}
