//! The flow's reports: per-block resources and Fmax, and per-board utilization and timing, as
//! JSON (for tools) and Markdown (for people). Both are deterministic: no times, no paths; the
//! same sources and tools give the same bytes, so they are committed and `hdl-gen fpga check`
//! can tell when they are stale (each entry records a hash of what it was built from).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A board the per-block flow places and routes for: its device and clock target.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Target {
    /// Board name.
    pub board: String,
    /// FPGA part.
    pub part: String,
    /// nextpnr-ecp5 device options.
    pub device: Vec<String>,
    /// Target clock in MHz.
    pub target_mhz: f64,
}

/// Cells of one synthesized netlist.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Cells {
    /// LUT4 equivalents: logic LUT4s plus two per carry cell (CCU2C).
    pub lut4: u64,
    /// Carry cells (CCU2C, two LUT4s and a carry chain each).
    pub ccu2c: u64,
    /// Flip-flops (TRELLIS_FF).
    pub ff: u64,
    /// Distributed RAM (TRELLIS_DPR16X4, 16 x 4 bits each).
    pub lutram: u64,
    /// Block RAM (DP16KD, 18 kbit each).
    pub dp16kd: u64,
    /// DSP multipliers (MULT18X18D).
    pub mult18x18d: u64,
}

impl Cells {
    /// From a Yosys `stat -json` cell-type table.
    pub fn from_types(types: &BTreeMap<String, u64>) -> Cells {
        let n = |k: &str| types.get(k).copied().unwrap_or(0);
        Cells {
            lut4: n("LUT4") + 2 * n("CCU2C"),
            ccu2c: n("CCU2C"),
            ff: n("TRELLIS_FF"),
            lutram: n("TRELLIS_DPR16X4"),
            dp16kd: n("DP16KD"),
            mult18x18d: n("MULT18X18D"),
        }
    }

    /// The resources these cells need beyond what a part holds (`None`: they fit), e.g.
    /// `LUT4 91203 > 83640`. Distributed RAM is not counted, so a module listed as fitting may
    /// still fail to place; one listed as not fitting cannot place.
    pub fn over(&self, cap: &crate::boards::Capacity) -> Option<String> {
        let over: Vec<String> = [
            ("LUT4", self.lut4, cap.lut4),
            ("FF", self.ff, cap.ff),
            ("DP16KD", self.dp16kd, cap.dp16kd),
            ("MULT18X18D", self.mult18x18d, cap.mult18x18d),
        ]
        .iter()
        .filter(|(_, n, c)| n > c)
        .map(|(k, n, c)| format!("{k} {n} > {c}"))
        .collect();
        (!over.is_empty()).then(|| over.join(", "))
    }
}

/// One block of the per-block report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BlockEntry {
    /// Module name.
    pub module: String,
    /// Hash of the module's SystemVerilog (without file headers) and of the tool versions.
    pub source_hash: String,
    /// Its cells after `synth_ecp5`.
    pub cells: Cells,
    /// Fmax in MHz per board (rounded to 0.1), `None` for a module without a clock or one
    /// that does not fit the board's part.
    pub fmax_mhz: BTreeMap<String, Option<f64>>,
    /// Per board whose part the module does not fit, what it needs beyond the part (not
    /// placed and routed there).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub does_not_fit: BTreeMap<String, String>,
    /// Why the module is not placed and routed out of context on any board, if it is not:
    /// it holds I/O cells (DDR registers, delays, bidirectional buffers) that need the
    /// board's pads, so only the bring-up top (boards.md) times it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_top_only: Option<String>,
}

/// The per-block report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BlocksReport {
    /// Generator and version.
    pub generator: String,
    /// Configuration name.
    pub config: String,
    /// Tool versions.
    pub tools: BTreeMap<String, String>,
    /// What the numbers measure.
    pub method: Vec<String>,
    /// Boards placed and routed for.
    pub targets: Vec<Target>,
    /// One entry per module, in the order the design lists them (children first).
    pub blocks: Vec<BlockEntry>,
}

/// Resource use on a board: used and available.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Use {
    /// Used.
    pub used: u64,
    /// Available in the device.
    pub available: u64,
}

/// A clock's timing on a board.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClockTiming {
    /// Achieved Fmax in MHz (rounded to 0.1).
    pub achieved_mhz: f64,
    /// Constraint in MHz.
    pub constraint_mhz: f64,
}

/// One board of the board report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BoardEntry {
    /// Board name.
    pub board: String,
    /// Full name.
    pub title: String,
    /// FPGA part.
    pub part: String,
    /// Hash of the board's sources and the tool versions.
    pub source_hash: String,
    /// Core clock target in MHz.
    pub target_mhz: f64,
    /// Cells after synthesis (whole top).
    pub cells: Cells,
    /// Placed resources (nextpnr): logic cells, flip-flops, block RAM, ...
    pub utilization: BTreeMap<String, Use>,
    /// Per clock net.
    pub clocks: BTreeMap<String, ClockTiming>,
    /// Every clock meets its constraint.
    pub timing_met: bool,
}

/// The board report.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BoardsReport {
    /// Generator and version.
    pub generator: String,
    /// Configuration name.
    pub config: String,
    /// Tool versions.
    pub tools: BTreeMap<String, String>,
    /// One entry per board.
    pub boards: Vec<BoardEntry>,
}

/// Rounds to one decimal, so the reports do not show noise digits.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn cell(fmax: Option<f64>, target: f64) -> String {
    match fmax {
        None => "no clock".into(),
        Some(f) if f >= target => format!("{f:.1}"),
        Some(f) => format!("**{f:.1} (below {target:.0})**"),
    }
}

/// The per-block report as Markdown.
pub fn blocks_markdown(r: &BlocksReport) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# Per-block FPGA report");
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "Written by `hdl-gen fpga blocks` ({}) for configuration `{}`; do not edit.",
        r.generator, r.config
    );
    let tools: Vec<String> = r.tools.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(t, "Tools: {}.", tools.join(", "));
    let _ = writeln!(t);
    for l in &r.method {
        let _ = writeln!(t, "{l}");
    }
    let _ = writeln!(t);
    let mut head = String::from("| module | LUT4 | CCU2C | FF | LUTRAM | DP16KD | MULT18X18D |");
    let mut rule = String::from("|---|---:|---:|---:|---:|---:|---:|");
    for tg in &r.targets {
        let _ = write!(
            head,
            " Fmax MHz, {} ({}, target {:.0}) |",
            tg.board, tg.part, tg.target_mhz
        );
        rule.push_str("---:|");
    }
    let _ = writeln!(t, "{head}");
    let _ = writeln!(t, "{rule}");
    for b in &r.blocks {
        let c = &b.cells;
        let _ = write!(
            t,
            "| `{}` | {} | {} | {} | {} | {} | {} |",
            b.module, c.lut4, c.ccu2c, c.ff, c.lutram, c.dp16kd, c.mult18x18d
        );
        for tg in &r.targets {
            if let Some(why) = &b.board_top_only {
                let _ = write!(t, " in the board top only: {why} |");
                continue;
            }
            match b.does_not_fit.get(&tg.board) {
                Some(why) => {
                    let _ = write!(t, " **does not fit: {why}** |");
                }
                None => {
                    let f = b.fmax_mhz.get(&tg.board).copied().flatten();
                    let _ = write!(t, " {} |", cell(f, tg.target_mhz));
                }
            }
        }
        let _ = writeln!(t);
    }
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "LUT4 counts logic LUT4s plus two per CCU2C carry cell; LUTRAM counts TRELLIS_DPR16X4 \
         cells (16 x 4 bits of distributed RAM each). A bold Fmax is below the board's target. A \
         module whose cells exceed the part's LUT4s, flip-flops, block RAMs or multipliers (ECP5 \
         family data sheet) is not placed and routed for that board: its entry says what it \
         needs beyond the part. A module holding I/O cells (the RGMII MAC's DDR registers and \
         delays) cannot be placed out of context, where its ports reach no pad: its cells are \
         counted here and its timing is the bring-up top's (boards.md)."
    );
    t
}

/// The board report as Markdown.
pub fn boards_markdown(r: &BoardsReport) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# Bring-up tops: utilization and timing");
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "Written by `hdl-gen fpga board` ({}) for configuration `{}`; do not edit.",
        r.generator, r.config
    );
    let tools: Vec<String> = r.tools.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(t, "Tools: {}.", tools.join(", "));
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "Each top is placed and routed with its LPF (constraints/<board>.lpf) at the core clock; \
         Fmax is nextpnr-ecp5's figure for each clock net after routing."
    );
    for b in &r.boards {
        let _ = writeln!(t);
        let _ = writeln!(t, "## {} ({})", b.title, b.part);
        let _ = writeln!(t);
        let verdict = if b.timing_met {
            "timing met"
        } else {
            "**timing NOT met**"
        };
        let _ = writeln!(t, "Core clock target {:.0} MHz: {verdict}.", b.target_mhz);
        let _ = writeln!(t);
        let _ = writeln!(t, "| clock | Fmax MHz | constraint MHz |");
        let _ = writeln!(t, "|---|---:|---:|");
        for (name, c) in &b.clocks {
            let _ = writeln!(
                t,
                "| `{name}` | {:.1} | {:.1} |",
                c.achieved_mhz, c.constraint_mhz
            );
        }
        let _ = writeln!(t);
        let _ = writeln!(t, "| resource | used | available | % |");
        let _ = writeln!(t, "|---|---:|---:|---:|");
        for (name, u) in &b.utilization {
            let pct = if u.available > 0 {
                100.0 * u.used as f64 / u.available as f64
            } else {
                0.0
            };
            let _ = writeln!(t, "| {name} | {} | {} | {pct:.1} |", u.used, u.available);
        }
        let c = &b.cells;
        let _ = writeln!(t);
        let _ = writeln!(
            t,
            "After synthesis: {} LUT4 (incl. {} CCU2C), {} FF, {} LUTRAM, {} DP16KD, {} MULT18X18D.",
            c.lut4, c.ccu2c, c.ff, c.lutram, c.dp16kd, c.mult18x18d
        );
    }
    t
}

/// FNV-1a over several byte strings, as 16 hex digits.
pub fn hash_hex<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.iter().chain(std::iter::once(&0xffu8)) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// A generated file's text without its header lines (generator version, configuration hash,
/// "do not edit"), so a hash of it changes only when the design does.
pub fn body(text: &str) -> &str {
    let mut rest = text;
    for _ in 0..2 {
        let first = rest.lines().next().unwrap_or("");
        if first.contains(crate::chip::MARKER) || first.contains("Do not edit") {
            rest = rest.split_once('\n').map_or("", |x| x.1);
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boards::{ECP5_25K, ECP5_85K};

    #[test]
    fn a_module_over_a_part_says_what_it_needs() {
        let c = Cells {
            lut4: 30_000,
            ff: 20_000,
            dp16kd: 60,
            ..Cells::default()
        };
        assert_eq!(
            c.over(&ECP5_25K).as_deref(),
            Some("LUT4 30000 > 24288, DP16KD 60 > 56")
        );
        assert_eq!(c.over(&ECP5_85K), None);
    }
}
