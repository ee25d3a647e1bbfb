//! The DCQCN block elaborates and is lint-clean at sizes and a reset style other than the
//! shipped one (which `hdl-gen lint` also synthesizes): one QP on an 8-bit stream (also through
//! Yosys), three QPs (indices past the last QP), and eight QPs on a 512-bit stream.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::roce::dcqcn::{dcqcn, DcqcnParams};

fn design(qps: u32, data_width: u32) -> Design {
    let p = DcqcnParams { qps, data_width };
    let mut d = Design::new("dcqcn");
    d.add_top(dcqcn(&p, ResetStyle::SyncHigh).unwrap_or_else(|e| panic!("{e}")));
    d
}

#[test]
fn dcqcn_is_clean_at_the_extremes() {
    hdl_gen::lint::assert_clean(&design(1, 8));
    for (qps, data_width) in [(3, 64), (8, 512)] {
        hdl_gen::lint::assert_verilator_clean(&design(qps, data_width));
    }
}
