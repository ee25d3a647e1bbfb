//! `testbench mutate`: automatic mutants from the builder's IR.
//!
//! The generator builds the shipped configuration's design again (`hdl_gen::chip::design`), and
//! the builder lists every place a mutant can go in a module's text
//! ([`hdl_builder::mutation_sites`]): an operator swapped (`&` and `|`, `+` and `-`, `^` to
//! `|`), a comparison's bound moved (`<` and `<=`, `==` and `!=`), a constant off by one, a
//! negation dropped, a multiplexer's or an `if`'s condition inverted, a one-bit assignment stuck
//! at 0 or 1, an FSM state confused with the next. Case labels, reset-free lint sinks
//! (`unused_*`) and cover points get none. `--count` sites of each module are drawn at random
//! (seeded), and the builder emits the module again as one mutant schemata with all of them
//! behind the select ([`hdl_builder::mutant_schemata`]). From there the run is `testbench
//! mutants`' (cli/mutants.rs): one release build against the schemata copy of rtl/, a baseline
//! with no mutant selected, then each mutant against the suite's properties whose tops hold the
//! module, and the score per module with the survivors named by the generator's line.
//!
//! The modules are the tops the suite's properties drive unless `--module` names others
//! (submodules too: `--module fifo_fwft_w65` mutates that FIFO inside the DMA engine). rtl/ must
//! be what the generator emits from `--config` (else: run `hdl-gen emit`), so the sites are the
//! text the suites run. Exit codes as `testbench mutants`, but a survivor fails the run only
//! when its module's score is under `--goal` (90 %: some mutants are equivalent, such as an
//! arbiter's two masters' burst types, both INCR).

use super::mutants::{execute, run_from_copy, scratch, tops_driven, Build, RunOpts, Selection};
use super::root;
use crate::mutants::{Mutant, RtlGraph};
use crate::rng::Rng;
use crate::suites;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

/// Arguments of `testbench mutate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The suite whose properties must catch the mutants.
    #[arg(long)]
    pub suite: String,
    /// Modules to mutate: rtl/ module names or prefixes of them, comma-separated [default: the
    /// tops the suite's properties drive].
    #[arg(long)]
    pub module: Option<String>,
    /// Only these properties of the suite (comma-separated) [default: each one whose tops hold
    /// the module].
    #[arg(long)]
    pub property: Option<String>,
    /// Mutants per module, drawn at random from its sites (0: every site).
    #[arg(long, default_value_t = 20)]
    pub count: usize,
    /// These sites instead of a draw (comma-separated site numbers, as a run lists them: `site
    /// 1694 of 2471`); one module only. For running a survivor again after a new check.
    #[arg(long, value_delimiter = ',', conflicts_with = "count")]
    pub sites: Vec<usize>,
    /// Seed of the draw.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Exit 1 when a module's score (percent of its mutants caught) is under this; the
    /// survivors are listed either way (the goal is 90).
    #[arg(long, default_value_t = 90)]
    pub goal: u32,
    /// The configuration rtl/ is generated from [default: configs/default.toml].
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub run: RunOpts,
}

/// Runs `testbench mutate`; returns the exit code.
pub fn run(args: &Args) -> i32 {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("testbench mutate: {e}");
            2
        }
    }
}

/// `k` distinct numbers of `0..n`, drawn with `rng`, sorted (all of them when `k` is 0 or at
/// least `n`).
fn draw(n: usize, k: usize, rng: &mut Rng) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    if k == 0 || k >= n {
        return all;
    }
    for i in 0..k {
        let j = i + rng.below((n - i) as u64) as usize;
        all.swap(i, j);
    }
    let mut picked = all[..k].to_vec();
    picked.sort_unstable();
    picked
}

fn run_inner(args: &Args) -> Result<i32, String> {
    let root = root();
    let rtl = root.join("rtl");
    let config = args
        .config
        .clone()
        .unwrap_or_else(|| root.join("configs").join("default.toml"));
    let suite = suites::all()
        .into_iter()
        .find(|s| s.name == args.suite)
        .ok_or_else(|| {
            format!(
                "no suite `{}` (suites: {})",
                args.suite,
                suites::all()
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    let props: Vec<String> = match &args.property {
        Some(p) => {
            let ps: Vec<String> = p.split(',').map(|x| x.trim().to_string()).collect();
            for q in &ps {
                if !suite.properties.iter().any(|e| e.name == q) {
                    return Err(format!("suite `{}` has no property `{q}`", suite.name));
                }
            }
            ps
        }
        None => suite
            .properties
            .iter()
            .map(|e| e.name.to_string())
            .collect(),
    };
    let dir = scratch(&args.run, &root)?.join("mutate");
    if let Some(code) = run_from_copy(&args.run, &dir)? {
        return Ok(code);
    }
    let started = Instant::now();

    // The design, as the generator builds it for the configuration rtl/ holds.
    let cfg = hdl_gen::config::Config::load(&config).map_err(|e| e.to_string())?;
    let design = hdl_gen::chip::design(&cfg).map_err(|e| e.to_string())?;
    let modules = design.modules().map_err(|e| e.to_string())?;
    let by_name: BTreeMap<String, Rc<hdl_builder::Module>> = modules
        .iter()
        .filter(|m| !m.is_primitive())
        .map(|m| (m.name().to_string(), m.clone()))
        .collect();

    // Which tops each property drives, and which of them hold which module.
    let pairs: Vec<(String, String)> = props
        .iter()
        .map(|p| (suite.name.to_string(), p.clone()))
        .collect();
    let driven = tops_driven(&pairs);
    let graph = RtlGraph::read(&rtl).map_err(|e| format!("{}: {e}", rtl.display()))?;
    let chosen: BTreeSet<String> = match &args.module {
        Some(list) => {
            let mut set = BTreeSet::new();
            for want in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let hits: Vec<&String> = by_name
                    .keys()
                    .filter(|n| *n == want || n.starts_with(want))
                    .collect();
                if hits.is_empty() {
                    return Err(format!(
                        "--module {want}: no module of {} is named so or starts so (rtl/*.sv names them)",
                        config.display()
                    ));
                }
                set.extend(hits.into_iter().cloned());
            }
            set
        }
        None => driven
            .values()
            .flatten()
            .filter(|t| by_name.contains_key(*t))
            .cloned()
            .collect(),
    };
    if chosen.is_empty() {
        return Err(format!(
            "the suite `{}` drives no top of rtl/; name modules with --module",
            suite.name
        ));
    }

    if !args.sites.is_empty() && chosen.len() != 1 {
        return Err(format!(
            "--sites numbers the sites of one module, and {} are chosen ({}): name one with --module",
            chosen.len(),
            chosen.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let mut rng = Rng::new(args.seed);
    let mut sel: Vec<Mutant> = Vec::new();
    let mut schemata_files = BTreeMap::new();
    let mut how = BTreeMap::new();
    let cases = args.run.cases.unwrap_or(100);
    for name in &chosen {
        let m = &by_name[name];
        let file = format!("{name}.sv");
        let shipped = fs::read_to_string(rtl.join(&file))
            .map_err(|e| format!("rtl/{file}: {e} (run `cargo run -p hdl-gen -- emit`)"))?;
        let body = hdl_builder::mutant_schemata(m, &BTreeMap::new());
        let Some(header) = shipped.strip_suffix(body.as_str()) else {
            return Err(format!(
                "rtl/{file} is not what the generator emits from {}: run `cargo run -p hdl-gen -- emit` (or name the configuration with --config)",
                config.display()
            ));
        };
        let tops: BTreeSet<String> = graph.tops_containing(name).into_iter().collect();
        let catching: Vec<&String> = props
            .iter()
            .filter(|p| {
                driven
                    .get(&(suite.name.to_string(), (*p).clone()))
                    .is_some_and(|d| !d.is_disjoint(&tops))
            })
            .collect();
        if catching.is_empty() {
            return Err(format!(
                "no property of `{}` drives a top that holds {name} (tops holding it: {})",
                suite.name,
                tops.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        let properties = catching
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join(",");
        let sites = hdl_builder::mutation_sites(m);
        let mut plan = BTreeMap::new();
        let picked = if args.sites.is_empty() {
            draw(sites.len(), args.count, &mut rng)
        } else {
            let mut v = Vec::new();
            for &n in &args.sites {
                let Some(k) = sites.iter().position(|s| s.index as usize == n) else {
                    return Err(format!(
                        "{name} has no site {n} (its sites are numbered 0 to {}); list them with --count 0 --list",
                        sites.len().saturating_sub(1)
                    ));
                };
                v.push(k);
            }
            v.sort_unstable();
            v.dedup();
            v
        };
        for k in picked {
            let site = &sites[k];
            let id = sel.len() as u32 + 1;
            plan.insert(site.index, id);
            how.insert(id, Build::Schemata);
            sel.push(Mutant {
                id,
                name: format!(
                    "site {} of {}: {} (rtl/{file}{}; {})",
                    site.index,
                    sites.len(),
                    site.what,
                    line_of(&shipped, &site.original),
                    site.loc
                ),
                file: file.clone(),
                sed: String::new(),
                suite: suite.name.to_string(),
                properties: properties.clone(),
                cases,
                line: 0,
            });
        }
        super::out(&format!(
            "{name}: {} sites, {} drawn (seed {:#x}), caught by {}/{properties}",
            sites.len(),
            plan.len(),
            args.seed,
            suite.name
        ));
        if !plan.is_empty() {
            let text = format!("{header}{}", hdl_builder::mutant_schemata(m, &plan));
            schemata_files.insert(file, text);
        }
    }
    if sel.is_empty() {
        return Err("the chosen modules offer no mutation site".into());
    }
    let selection = Selection {
        sel,
        schemata_files,
        how,
        origin: "testbench mutate".into(),
    };
    execute(&root, &dir, selection, &args.run, started, Some(args.goal))
}

/// `:N` for the first line of `text` holding `expr` (`:N+` when later lines hold it too), or
/// nothing when no line does (an expression split by the writer's bracketing).
fn line_of(text: &str, expr: &str) -> String {
    let mut hits = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(expr))
        .map(|(i, _)| i + 1);
    match (hits.next(), hits.next()) {
        (Some(n), None) => format!(":{n}"),
        (Some(n), Some(_)) => format!(":{n}+"),
        (None, _) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_distinct_sorted_sites() {
        let mut rng = Rng::new(7);
        let d = draw(100, 10, &mut rng);
        assert_eq!(d.len(), 10);
        assert!(d.windows(2).all(|w| w[0] < w[1]));
        assert!(d.iter().all(|&x| x < 100));
        assert_eq!(draw(5, 0, &mut rng), vec![0, 1, 2, 3, 4]);
        assert_eq!(draw(5, 9, &mut rng), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn finds_an_expressions_line() {
        let t = "a\n  assign x = b + c;\n  assign y = b + c;\n  assign z = d;\n";
        assert_eq!(line_of(t, "d"), ":4");
        assert_eq!(line_of(t, "b + c"), ":2+");
        assert_eq!(line_of(t, "e"), "");
    }
}
