//! Property `mdio_master`: random clause 22 reads and writes (to the PHY's address and to
//! absent ones), with a random MDC divider, against `models::eth::MdioPhy` answering on the
//! pin. The line is the master's value while `mdio_oe_o`, the PHY's while it drives, else the
//! pull-up's 1; both driving at once is a failure (the master must release MDIO from TA on in a
//! read). Checks: the PHY decodes exactly the frames commanded (its writes land, its format
//! checks pass), each read's `rdata_o` is the register (FFFFh from an absent PHY), one `done_o`
//! per command, and MDC's high and low phases last `max(div_i, 2)` cycles each.

use crate::models::eth::MdioPhy;
use crate::prop::Property;
use crate::rng::Rng;
use crate::rtl::MdioMasterTop as Dut;
use crate::sim::Sim;
use proptest::prelude::*;
use std::path::Path;

/// A command: (write, phy, reg, data).
pub type Cmd = (bool, u8, u8, u16);

/// One case.
#[derive(Clone, Debug)]
pub struct Case {
    div: u8,
    phy: u8,
    regs: Vec<u16>,
    cmds: Vec<Cmd>,
    idle_pct: u8,
    seed: u64,
}

/// See the module documentation.
pub struct MdioMasterProp;

impl Property for MdioMasterProp {
    type Input = Case;
    const NAME: &'static str = "mdio_master";

    fn strategy() -> BoxedStrategy<Case> {
        (0u8..=6, 0u8..32, prop::collection::vec(any::<u16>(), 32))
            .prop_flat_map(|(div, phy, regs)| {
                let cmd = (
                    any::<bool>(),
                    prop_oneof![4 => Just(phy), 1 => 0u8..32],
                    0u8..32,
                    any::<u16>(),
                );
                (
                    Just(div),
                    Just(phy),
                    Just(regs),
                    prop::collection::vec(cmd, 1..12),
                    prop_oneof![Just(0u8), 0u8..=90],
                    any::<u64>(),
                )
            })
            .prop_map(|(div, phy, regs, cmds, idle_pct, seed)| Case {
                div,
                phy,
                regs,
                cmds,
                idle_pct,
                seed,
            })
            .boxed()
    }

    fn run(case: &Case, waves: Option<&Path>) -> Result<(), String> {
        let mut sim = Sim::<Dut>::maybe_waves(waves);
        let mut rng = Rng::new(case.seed);
        let sig = |n: &str| sim.signal(n);
        let (div, valid, ready, write, phy, reg, data) = (
            sig("div_i"),
            sig("cmd_valid_i"),
            sig("cmd_ready_o"),
            sig("cmd_write_i"),
            sig("cmd_phy_i"),
            sig("cmd_reg_i"),
            sig("cmd_data_i"),
        );
        let (done, rdata, mdc, mdio_o, mdio_oe, mdio_i) = (
            sig("done_o"),
            sig("rdata_o"),
            sig("mdc_o"),
            sig("mdio_o"),
            sig("mdio_oe_o"),
            sig("mdio_i"),
        );
        div.set(u64::from(case.div));
        mdio_i.set(1);
        sim.reset(2);
        let half = u64::from(case.div.max(2));
        let mut regs = [0u16; 32];
        regs.copy_from_slice(&case.regs);
        let mut model = MdioPhy::new(case.phy, regs);
        let mut golden = regs;
        let (mut sent, mut dones) = (0usize, 0usize);
        let mut offered = false;
        let mut last_mdc = false;
        let mut phase = 0u64; // cycles MDC has kept its level
        let mut first_phase = true;
        let limit = (case.cmds.len() as u64 + 2) * (130 * half + 200);
        for cycle in 0..limit {
            // Before the edge: the line as resolved now, the PHY sees MDC's rising edge.
            let m_on = mdio_oe.is_high();
            let p_on = model.driving();
            if m_on && p_on.is_some() {
                return Err(format!(
                    "cycle {cycle}: master and PHY drive MDIO at once (command {})",
                    dones
                ));
            }
            let line = if m_on {
                mdio_o.is_high()
            } else {
                p_on.unwrap_or(true)
            };
            mdio_i.set(line as u64);
            let level = mdc.is_high();
            if level != last_mdc {
                if !first_phase && phase != half {
                    return Err(format!(
                        "cycle {cycle}: MDC kept level {} for {phase} cycles, div_i {} asks {half}",
                        last_mdc as u8, case.div
                    ));
                }
                first_phase = false;
                phase = 0;
                if level {
                    model.rise(line);
                }
                last_mdc = level;
            }
            phase += 1;
            if offered && ready.is_high() {
                sent += 1;
                offered = false;
                first_phase = true;
            }
            if done.is_high() {
                let (w, p, r, d) = case.cmds[dones];
                if !w {
                    let want = if p == case.phy {
                        golden[r as usize]
                    } else {
                        0xffff
                    };
                    let got = rdata.get() as u16;
                    if got != want {
                        return Err(format!(
                            "command {dones} (read PHY {p} reg {r}): rdata_o {got:#06x}, the PHY holds {want:#06x}"
                        ));
                    }
                } else if p == case.phy {
                    golden[r as usize] = d;
                }
                dones += 1;
                if dones == case.cmds.len() {
                    break;
                }
            }
            sim.step();
            if !offered && sent < case.cmds.len() && !rng.chance(case.idle_pct) {
                let (w, p, r, d) = case.cmds[sent];
                offered = true;
                write.set(w as u64);
                phy.set(u64::from(p));
                reg.set(u64::from(r));
                data.set(u64::from(d));
            }
            valid.set(offered as u64);
        }
        if dones != case.cmds.len() {
            return Err(format!(
                "{dones} of {} commands done after {limit} cycles",
                case.cmds.len()
            ));
        }
        if !model.errors.is_empty() {
            return Err(format!("the PHY saw malformed frames: {:?}", model.errors));
        }
        let want: Vec<Cmd> = case
            .cmds
            .iter()
            .scan(regs, |g, &(w, p, r, d)| {
                Some(if w {
                    if p == case.phy {
                        g[r as usize] = d;
                    }
                    (true, p, r, d)
                } else if p == case.phy {
                    (false, p, r, g[r as usize])
                } else {
                    (false, p, r, 0xffff)
                })
            })
            .collect();
        if model.frames != want {
            return Err(format!(
                "the PHY decoded {:?}, commanded {want:?}",
                model.frames
            ));
        }
        if model.regs != golden {
            return Err("the PHY's registers differ from the writes commanded".into());
        }
        Ok(())
    }
}
