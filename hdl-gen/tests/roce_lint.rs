//! The RoCEv2 engine elaborates and is lint-clean at sizes and a reset style other than the
//! shipped ones (which `hdl-gen lint` also synthesizes): one QP with one command slot, and
//! eight QPs with sixteen.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::dma::DmaParams;
use hdl_gen::roce::{engine::engine, RoceParams};

#[test]
fn engine_is_clean_at_the_extremes() {
    for (qps, outstanding, mtu, in_capsule_bytes) in [(1, 1, 256, 0), (8, 16, 4096, 65536)] {
        let p = RoceParams {
            data_width: 64,
            qps,
            outstanding,
            mtu,
            in_capsule_bytes,
        };
        let mut d = Design::new("roce");
        let dma = DmaParams {
            data_width: 64,
            tag_width: 3,
            len_width: 21,
            max_reads: 4,
            id_width: 4,
        };
        d.add_top(engine(&p, &dma, ResetStyle::SyncHigh).unwrap_or_else(|e| panic!("{e}")));
        hdl_gen::lint::assert_verilator_clean(&d);
    }
}
