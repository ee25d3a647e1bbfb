//! Suite `chip`: the whole chip top (`rtl/<chip.name>.sv`, generator `hdl-gen/src/chip/`)
//! end to end: a host that behaves like the Linux NVMe driver (BAR0, rings in host memory,
//! admin commands), the firmware model (admin commands through `nvme_csr`, QoS grants, the
//! routing table, the RoCE QPs through the one firmware bus), and the remote NVMe/RDMA target
//! (`models::roce_target`) on the RoCEv2 port. `top.rs` holds the property and its golden
//! reference.

pub mod top;
