//! The QoS arbiter elaborates and is lint-clean at sizes and a reset style other than the
//! shipped ones (which `hdl-gen lint` also synthesizes): queues and namespaces not powers of
//! two, one grant entry, the smallest buffers, 16-bit counters.

use hdl_builder::{Design, ResetStyle};
use hdl_gen::qos::{arbiter::arbiter, QosParams};

#[test]
fn arbiter_is_clean() {
    let p = QosParams {
        queues: 3,
        namespaces: 1,
        grants: 1,
        queue_depth: 2,
        counter_width: 16,
    };
    let mut d = Design::new("qos");
    d.add_top(arbiter(&p, ResetStyle::SyncHigh).unwrap_or_else(|e| panic!("{e}")));
    hdl_gen::lint::assert_verilator_clean(&d);
}
