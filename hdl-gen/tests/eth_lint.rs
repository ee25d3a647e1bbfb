//! The RGMII MAC with its `DELAYG` parameters set (a board whose PHY adds no skew) elaborates,
//! passes the clock-crossing check and is lint-clean: the default emit leaves the delays out.

use hdl_builder::prelude::*;
use hdl_builder::Design;
use hdl_gen::eth::{mac, MacParams};

#[test]
fn the_mac_with_delays_is_lint_clean() {
    let p = MacParams {
        tx_buf: 8,
        rx_buf: 16,
        tx_delay: 80,
        rx_delay: 16,
    };
    let m = mac::eth_mac_rgmii(&p, ResetStyle::AsyncLow).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.name(), "eth_mac_rgmii_t8_r16_dt80_dr16");
    assert!(m.children().iter().any(|c| c.name() == "DELAYG"));
    let sv = {
        let mut d = Design::new("eth_delays");
        d.add_top(m.clone());
        d
    };
    hdl_gen::lint::assert_clean(&sv);
}
