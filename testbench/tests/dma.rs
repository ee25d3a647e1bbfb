//! The DMA engine's properties under `cargo test` (a few cases each; `TB_CASES=N` for more,
//! `testbench regress --suite dma` for long runs).

use testbench::prop::check;
use testbench::suites::dma::*;

#[test]
fn dma_walker() {
    check::<walker::DmaWalkerProp>(24);
}

#[test]
fn dma_mover() {
    check::<mover::DmaMoverProp>(16);
}

#[test]
fn dma_engine() {
    check::<engine::DmaEngineProp>(12);
}
