//! The AXI4-Lite decoder over a spread of parameters (one slave, a slot count that is not a
//! power of two, windows as wide as their slot, every reset style): each module is lint-clean
//! under `verilator --lint-only -Wall` and synthesizes with Yosys.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::blocks::axil_decoder::axil_decoder;

#[test]
fn decoders_are_lint_clean() {
    let shapes: [(u32, &[u32], ResetStyle); 4] = [
        (12, &[7, 11, 10, 6], ResetStyle::AsyncLow),
        (8, &[8], ResetStyle::AsyncHigh),
        (6, &[2, 6, 4], ResetStyle::SyncLow),
        (4, &[4, 4, 3, 2, 1], ResetStyle::SyncHigh),
    ];
    for (bits, windows, style) in shapes {
        let mut d = Design::new("lint");
        d.add_top(axil_decoder(bits, windows, style).unwrap_or_else(|e| panic!("{e}")));
        hdl_gen::lint::assert_clean(&d);
    }
}
