//! Suite `chip`: the whole chip top (`rtl/<chip.name>.sv`, generator `hdl-gen/src/chip/`)
//! end to end: a host that behaves like the Linux NVMe driver (BAR0, rings in host memory,
//! admin commands), the firmware model (admin commands through `nvme_csr`, QoS grants, the
//! routing table, the RoCE QPs, the NVMe/TCP digests through the one firmware bus), the remote
//! NVMe/RDMA target (`models::roce_target`) on the RoCEv2 port, and one remote NVMe/TCP target
//! (`models::nvme_tcp_target`) per connection on the NVMe/TCP byte-stream port. `top/` holds the property and its golden
//! reference; `tcp.rs` the NVMe/TCP port (a target model per connection on the `tcp_*` streams)
//! and what the scoreboard reads back from those targets. `frame_mux.rs` is the property of
//! the frame mux (`eth_frame_mux_*`) the chip will hold in front of its Ethernet port.
//! `session.rs` drives the same chip, host, firmware and targets one command at a time (what
//! `fio`, `nbd` and `bench --suite chip` run on).

pub mod frame_mux;
pub mod session;
pub mod tcp;
pub mod top;
