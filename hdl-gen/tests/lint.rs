//! Every block generator's output is lint-clean and synthesizes, in every reset style.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::blocks::{interval_timer::interval_timer, skid_buffer::skid_buffer};

#[test]
fn small_blocks_in_every_reset_style() {
    for style in [
        ResetStyle::AsyncLow,
        ResetStyle::AsyncHigh,
        ResetStyle::SyncLow,
        ResetStyle::SyncHigh,
    ] {
        let mut d = Design::new("lint");
        d.add_top(skid_buffer(1, style).unwrap());
        d.add_top(skid_buffer(100, style).unwrap());
        d.add_top(interval_timer(2, style).unwrap());
        hdl_gen::lint::assert_clean(&d);
    }
}
