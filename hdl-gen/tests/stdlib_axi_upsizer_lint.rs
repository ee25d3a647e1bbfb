//! The AXI4 upsizer over a spread of parameters (ratios 2 to 16, narrow and wide IDs, every
//! reset style): each module is lint-clean under `verilator --lint-only -Wall` and synthesizes
//! with Yosys; bad parameters are refused.

use hdl_builder::{Design, ErrorKind, ResetStyle};
use hdl_gen::blocks::axi_upsizer::{axi_upsizer, max_wide_beats};

const STYLES: [ResetStyle; 4] = [
    ResetStyle::AsyncLow,
    ResetStyle::AsyncHigh,
    ResetStyle::SyncLow,
    ResetStyle::SyncHigh,
];

#[test]
fn upsizers_are_lint_clean() {
    // (id width, narrow, wide)
    let shapes = [
        (4, 64, 512),
        (1, 32, 64),
        (6, 64, 128),
        (3, 128, 512),
        (2, 8, 128),
    ];
    for (i, &(id, n, w)) in shapes.iter().enumerate() {
        let style = STYLES[i % STYLES.len()];
        let m = axi_upsizer(id, n, w, style).unwrap_or_else(|e| panic!("{e}"));
        let mut d = Design::new("lint");
        d.add_top(m);
        hdl_gen::lint::assert_clean(&d);
    }
}

#[test]
fn the_w_fifo_holds_the_largest_burst() {
    // 256 beats of 8 bytes from the last lane of a 64-byte beat: 2048 + 56 bytes, 33 beats.
    assert_eq!(max_wide_beats(64, 512), 33);
    // 4 KiB (a 256-beat burst of 32 bytes is cut at 4 KiB) from the last lane: 65 beats.
    assert_eq!(max_wide_beats(256, 512), 65);
    assert_eq!(max_wide_beats(8, 16), 129);
}

#[test]
fn bad_parameters_are_refused() {
    for (id, n, w) in [
        (0, 64, 512),
        (17, 64, 512),
        (4, 64, 64),
        (4, 512, 64),
        (4, 48, 512),
        (4, 64, 2048),
        (4, 4, 64),
    ] {
        let e = axi_upsizer(id, n, w, ResetStyle::AsyncLow)
            .err()
            .unwrap_or_else(|| panic!("({id}, {n}, {w}) was accepted"));
        assert_eq!(e.0[0].kind, ErrorKind::Invalid);
    }
}
