//! A golden file pins the emitted text of the smallest DCQCN block (one QP, 8-bit stream), so
//! a change to its arithmetic shows up as a reviewed diff next to the golden model's. Refresh
//! with `UPDATE_GOLDEN=1 cargo test -p hdl-gen --test roce_dcqcn_golden`.

mod common;

use hdl_builder::{Design, EmitOptions, ResetStyle};
use hdl_gen::roce::dcqcn::{dcqcn, DcqcnParams};

#[test]
fn roce_dcqcn_q1_w8_sv() {
    let m = dcqcn(
        &DcqcnParams {
            qps: 1,
            data_width: 8,
        },
        ResetStyle::AsyncLow,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut d = Design::new("golden");
    d.add_top(m);
    let sv = d
        .emit(&EmitOptions {
            header: vec!["golden test header".into()],
            core_name: "test:golden:golden:0".into(),
            description: "golden".into(),
        })
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|f| f.path == "roce_dcqcn_q1_w8.sv")
        .expect("roce_dcqcn_q1_w8.sv emitted")
        .contents;
    common::golden("roce_dcqcn_q1_w8.sv", &sv);
}
