//! The widest configuration (`configs/widest.toml`: a 512-bit host bus, the 64-bit RoCE engine
//! and the 256-bit NVMe/TCP engine behind AXI4 upsizers) elaborates, holds its upsizers, and its
//! chip top is lint-clean as one hierarchy; a transport wider than the host bus is refused.

mod common;

use common::root;
use hdl_gen::config::Config;

fn widest() -> Config {
    Config::load(&root().join("configs/widest.toml")).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_widest_chip_holds_an_upsizer_per_narrow_transport_and_is_lint_clean() {
    let cfg = widest();
    let d = hdl_gen::chip::design(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = d
        .modules()
        .unwrap_or_else(|e| panic!("{e}"))
        .iter()
        .map(|m| m.name().to_string())
        .collect();
    for want in [
        "axi_upsizer_i5_n64_w512",
        "axi_upsizer_i5_n256_w512",
        "axi_interconnect_m3_i5_w512",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} missing from the widest design: {names:?}"
        );
    }
    hdl_gen::lint::assert_top_verilator_clean(&d, &cfg.chip.name);
}

#[test]
fn a_transport_wider_than_the_host_bus_is_refused() {
    let mut cfg = widest();
    cfg.dma.data_width = 128;
    let e = hdl_gen::chip::design(&cfg)
        .err()
        .expect("a 256-bit NVMe/TCP engine on a 128-bit bus was accepted");
    let text = e.to_string();
    assert!(
        text.contains("raise dma.data_width to at least 256"),
        "unclear error: {text}"
    );
}
