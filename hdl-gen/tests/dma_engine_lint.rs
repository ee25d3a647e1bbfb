//! The DMA engine top (walker + mover + AR arbiter + counters) elaborates and is lint-clean at a
//! width and reset style other than the shipped one (which `hdl-gen lint` also synthesizes).

use hdl_builder::{Design, ResetStyle};
use hdl_gen::dma::{engine::engine, DmaParams};

#[test]
fn engine_is_clean() {
    let p = DmaParams {
        data_width: 128,
        tag_width: 3,
        len_width: 21,
        max_reads: 4,
        id_width: 4,
    };
    let mut d = Design::new("dma");
    d.add_top(engine(&p, ResetStyle::SyncHigh).unwrap_or_else(|e| panic!("{e}")));
    hdl_gen::lint::assert_verilator_clean(&d);
}
