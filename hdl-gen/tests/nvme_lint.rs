//! The NVMe front end elaborates and is lint-clean (Verilator -Wall) away from the shipped
//! configuration: thousands of queue pairs (state in RAM), the largest queue depth, a doorbell
//! stride, wider buses and another reset style. `hdl-gen lint` covers the shipped one (with Yosys).

use hdl_builder::{Design, ResetStyle};
use hdl_gen::nvme::ctrl::ctrl;
use hdl_gen::nvme::NvmeParams;

fn lint(style: ResetStyle, p: NvmeParams) {
    let mut d = Design::new("lint");
    d.add_top(ctrl(&p, style).unwrap_or_else(|e| panic!("{e}")));
    hdl_gen::lint::assert_verilator_clean(&d);
}

#[test]
fn thousands_of_queues_deep_queues_stride() {
    lint(
        ResetStyle::AsyncLow,
        NvmeParams {
            io_queues: 4095,
            max_depth: 65536,
            stride: 3,
            data_width: 128,
            vectors: 64,
            fetch_burst: 16,
            fetch_slots: 64,
            mdts: 13,
        },
    );
}

#[test]
fn one_queue_wide_bus_sync_reset() {
    lint(
        ResetStyle::SyncHigh,
        NvmeParams {
            io_queues: 1,
            max_depth: 2,
            stride: 0,
            data_width: 512,
            vectors: 1,
            fetch_burst: 1,
            fetch_slots: 2,
            mdts: 1,
        },
    );
}
