//! The FIFO and arbiter generators over a spread of parameters (degenerate sizes, odd widths
//! and depths, both FIFO flavours, every reset style): each module is lint-clean under
//! `verilator --lint-only -Wall` and synthesizes with Yosys; bad parameters are refused.

use hdl_builder::{Design, ErrorKind, Module, ResetStyle};
use hdl_gen::blocks::arbiter::{rr_arbiter, wrr_arbiter};
use hdl_gen::blocks::fifo::fifo;
use std::rc::Rc;

const STYLES: [ResetStyle; 4] = [
    ResetStyle::AsyncLow,
    ResetStyle::AsyncHigh,
    ResetStyle::SyncLow,
    ResetStyle::SyncHigh,
];

/// Lints `modules` (each with its reset style): a design holds one reset style, so one design
/// per style.
fn assert_all_clean(modules: Vec<(ResetStyle, Rc<Module>)>) {
    for style in STYLES {
        let mut d = Design::new("lint");
        let mut any = false;
        for (s, m) in &modules {
            if *s == style {
                d.add_top(m.clone());
                any = true;
            }
        }
        if any {
            hdl_gen::lint::assert_clean(&d);
        }
    }
}

#[test]
fn fifos_are_lint_clean() {
    // (width, depth), each in both flavours; the reset style rotates so every style is covered
    // by both flavours and by the degenerate depths.
    let shapes = [
        (1, 1),
        (8, 1),
        (1, 2),
        (8, 2),
        (8, 3),
        (37, 5),
        (8, 16),
        (37, 16),
        (1, 5),
    ];
    let mut modules = Vec::new();
    for (i, &(width, depth)) in shapes.iter().enumerate() {
        for fwft in [false, true] {
            let style = STYLES[(i * 2 + usize::from(fwft) + i / 2) % STYLES.len()];
            let m = fifo(width, depth, fwft, style).unwrap_or_else(|e| panic!("{e}"));
            modules.push((style, m));
        }
    }
    assert_all_clean(modules);
}

#[test]
fn arbiters_are_lint_clean() {
    let mut modules = Vec::new();
    for (i, n) in [1, 2, 3, 4, 5].into_iter().enumerate() {
        let style = STYLES[i % STYLES.len()];
        modules.push((
            style,
            rr_arbiter(n, style).unwrap_or_else(|e| panic!("{e}")),
        ));
        let style = STYLES[(i + 1) % STYLES.len()];
        let m = wrr_arbiter(n, 8, style).unwrap_or_else(|e| panic!("{e}"));
        modules.push((style, m));
    }
    for (n, ww, style) in [(3, 1, ResetStyle::SyncHigh), (8, 3, ResetStyle::AsyncLow)] {
        let m = wrr_arbiter(n, ww, style).unwrap_or_else(|e| panic!("{e}"));
        modules.push((style, m));
    }
    assert_all_clean(modules);
}

#[test]
fn names_encode_parameters() {
    let style = ResetStyle::AsyncLow;
    assert_eq!(fifo(8, 16, false, style).unwrap().name(), "fifo_w8_d16");
    assert_eq!(fifo(8, 16, true, style).unwrap().name(), "fifo_fwft_w8_d16");
    assert_eq!(rr_arbiter(4, style).unwrap().name(), "rr_arbiter_n4");
    assert_eq!(
        wrr_arbiter(4, 8, style).unwrap().name(),
        "wrr_arbiter_n4_w8"
    );
}

#[test]
fn bad_parameters_are_refused() {
    let style = ResetStyle::AsyncLow;
    for (w, d) in [(0, 4), (8, 0)] {
        let e = fifo(w, d, true, style).unwrap_err();
        assert!(e.has(ErrorKind::Invalid), "{e}");
        assert!(e.to_string().contains("at least 1"), "{e}");
    }
    assert!(rr_arbiter(0, style).unwrap_err().has(ErrorKind::Invalid));
    assert!(wrr_arbiter(0, 8, style)
        .unwrap_err()
        .has(ErrorKind::Invalid));
    assert!(wrr_arbiter(4, 0, style)
        .unwrap_err()
        .has(ErrorKind::Invalid));
    assert!(wrr_arbiter(4, 33, style)
        .unwrap_err()
        .has(ErrorKind::Invalid));
}

/// The ports the testbench binds by name, with their widths.
#[test]
fn port_lists() {
    let ports = |m: Rc<Module>| -> Vec<(String, u32, bool)> {
        m.ports()
            .into_iter()
            .map(|p| (p.name, p.width, p.input))
            .collect()
    };
    let p = |n: &str, w: u32, i: bool| (n.to_string(), w, i);
    assert_eq!(
        ports(fifo(37, 5, true, ResetStyle::SyncHigh).unwrap()),
        vec![
            p("clk_i", 1, true),
            p("rst_i", 1, true),
            p("s_valid_i", 1, true),
            p("s_ready_o", 1, false),
            p("s_data_i", 37, true),
            p("m_valid_o", 1, false),
            p("m_ready_i", 1, true),
            p("m_data_o", 37, false),
            p("count_o", 3, false),
        ]
    );
    assert_eq!(
        ports(fifo(8, 16, false, ResetStyle::AsyncLow).unwrap()),
        vec![
            p("clk_i", 1, true),
            p("rst_ni", 1, true),
            p("s_valid_i", 1, true),
            p("s_ready_o", 1, false),
            p("s_data_i", 8, true),
            p("rd_en_i", 1, true),
            p("rd_valid_o", 1, false),
            p("rd_data_o", 8, false),
            p("empty_o", 1, false),
            p("count_o", 5, false),
        ]
    );
    assert_eq!(
        ports(wrr_arbiter(5, 4, ResetStyle::AsyncLow).unwrap()),
        vec![
            p("clk_i", 1, true),
            p("rst_ni", 1, true),
            p("req_i", 5, true),
            p("weight_i", 20, true),
            p("valid_o", 1, false),
            p("ready_i", 1, true),
            p("gnt_o", 5, false),
            p("gnt_idx_o", 3, false),
        ]
    );
    assert_eq!(
        ports(rr_arbiter(1, ResetStyle::AsyncLow).unwrap()),
        vec![
            p("clk_i", 1, true),
            p("rst_ni", 1, true),
            p("req_i", 1, true),
            p("valid_o", 1, false),
            p("ready_i", 1, true),
            p("gnt_o", 1, false),
            p("gnt_idx_o", 1, false),
        ]
    );
}
