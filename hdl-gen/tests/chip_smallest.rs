//! The smallest legal configuration (`configs/smallest.toml`: every size at its least) elaborates
//! and its chip top is lint-clean as one hierarchy; a `csr.addr_width` too small for the CSR
//! blocks is refused with every block that does not fit and the width that fits them all.

mod common;

use common::root;
use hdl_gen::config::Config;

fn smallest() -> Config {
    Config::load(&root().join("configs/smallest.toml")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_smallest_chip_is_lint_clean() {
    let cfg = smallest();
    let d = hdl_gen::chip::design(&cfg).unwrap_or_else(|e| panic!("{e}"));
    hdl_gen::lint::assert_top_verilator_clean(&d, &cfg.chip.name);
}

#[test]
fn its_csr_windows_are_as_narrow_as_the_blocks_allow() {
    let mut cfg = smallest();
    cfg.csr.addr_width -= 1;
    let e = hdl_gen::chip::design(&cfg)
        .err()
        .expect("a csr.addr_width below the smallest configuration's was accepted");
    let text = e.to_string();
    let want = format!(
        "raise csr.addr_width to at least {}",
        cfg.csr.addr_width + 1
    );
    assert!(
        text.contains(&want) && text.contains("`tcp_csr`"),
        "unclear error (want every block that does not fit and `{want}`): {text}"
    );
}

#[test]
fn every_emitted_tree_states_its_configuration() {
    let cfg = smallest();
    let rs = hdl_gen::chip::config_rust(&cfg);
    for line in [
        "pub const NVME_IO_QUEUE_PAIRS: u32 = 1;",
        "pub const NVME_TCP_DIGESTS: bool = false;",
        "pub const CHIP_TRANSPORTS: &[&str] = &[\"roce\", \"nvme_tcp\"];",
        "pub const ROCE_MTU: u32 = 256;",
    ] {
        assert!(rs.contains(line), "chip_config.rs lacks `{line}`:\n{rs}");
    }
}
