//! The DMA engine top (walker + mover + AR arbiter + counters) elaborates, is lint-clean and
//! synthesizes.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::dma::{engine::engine, DmaParams};

#[test]
fn engine_is_clean() {
    let p = DmaParams {
        data_width: 64,
        tag_width: 3,
        len_width: 21,
        max_reads: 4,
        id_width: 4,
    };
    let mut d = Design::new("dma");
    d.add_top(engine(&p, ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}")));
    hdl_gen::lint::assert_clean(&d);
}
