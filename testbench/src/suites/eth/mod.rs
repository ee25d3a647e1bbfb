//! The `eth` suite: the RGMII MAC against a pin-level RGMII PHY (`mac.rs`, property
//! `eth_mac_rgmii`) and the MDIO master against a clause 22 PHY register model (`mdio.rs`,
//! property `mdio_master`). Golden models in `models/eth.rs`.

pub mod mac;
pub mod mdio;
