//! The DMA mover's output is lint-clean (Verilator -Wall) at 64, 128, 256 and 512-bit data
//! widths, each reset style at least once. Yosys synthesizes the shipped configuration's mover in
//! `hdl-gen lint`; the 512-bit mover takes Yosys about ten minutes (its realigners shift
//! 1024-bit words by a byte count), too long for every test run.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::dma::mover::mover;
use hdl_gen::dma::DmaParams;

fn lint(style: ResetStyle, widths: &[u32]) {
    let mut d = Design::new("lint");
    for &data_width in widths {
        let p = DmaParams {
            data_width,
            tag_width: 3,
            len_width: 21,
            max_reads: 4,
            id_width: 4,
        };
        d.add_top(mover(&p, style).unwrap_or_else(|e| panic!("{e}")));
    }
    hdl_gen::lint::assert_verilator_clean(&d);
}

#[test]
fn async_low() {
    lint(ResetStyle::AsyncLow, &[64, 256, 512]);
}

#[test]
fn async_high() {
    lint(ResetStyle::AsyncHigh, &[128]);
}

#[test]
fn sync_low() {
    lint(ResetStyle::SyncLow, &[64]);
}

#[test]
fn sync_high() {
    lint(ResetStyle::SyncHigh, &[128]);
}
