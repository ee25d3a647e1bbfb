//! Every mutation site of real engine modules, all behind the select at once, still elaborates
//! and is `verilator --lint-only -Wall` clean: `testbench mutate` never builds a broken
//! schemata (a model that fails to build would judge nothing). The DMA engine (walker, mover,
//! FIFOs, arbiter) and the chip's frame mux, from the shipped configuration.

use hdl_builder::{mutant_schemata, mutation_sites, EmitOptions};
use hdl_gen::config::Config;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn lint_with_every_site(prefix: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cfg = Config::load(&root.join("configs/default.toml")).expect("the shipped configuration");
    let design = hdl_gen::chip::design(&cfg).expect("the design elaborates");
    let files = design
        .emit(&EmitOptions {
            header: vec!["mutate".into()],
            core_name: "mutate:mutate:mutate:0".into(),
            description: "mutate".into(),
        })
        .expect("emits");
    let dir = std::env::temp_dir().join(format!("mutate_schemata_{prefix}_{}", std::process::id()));
    hdl_gen::util::write_tree(&dir, &files).expect("a scratch folder");
    let modules = design.modules().expect("modules");
    let top = design
        .tops()
        .iter()
        .find(|t| t.name().starts_with(prefix))
        .unwrap_or_else(|| panic!("no top {prefix}*"))
        .clone();
    let mut sites = 0;
    // The top and every module under it.
    let mut todo = vec![top.clone()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(m) = todo.pop() {
        if !seen.insert(m.name().to_string()) || m.is_primitive() {
            continue;
        }
        todo.extend(m.children());
        let s = mutation_sites(&m);
        sites += s.len();
        let plan: BTreeMap<u32, u32> = s.iter().map(|x| (x.index, x.index + 1)).collect();
        std::fs::write(
            dir.join(format!("{}.sv", m.name())),
            mutant_schemata(&m, &plan),
        )
        .unwrap();
    }
    assert!(modules.len() >= seen.len());
    assert!(sites > 50, "{prefix}: only {sites} sites");
    let o = Command::new("verilator")
        .args(["--lint-only", "-Wall", "--top-module", top.name()])
        .arg("-y")
        .arg(&dir)
        .arg(dir.join(format!("{}.sv", top.name())))
        .output()
        .expect("verilator is installed (ci/setup.sh)");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        o.status.success(),
        "{prefix}: verilator rejects the schemata with all {sites} sites:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn dma_engine_schemata_lints() {
    lint_with_every_site("dma_engine_");
}

#[test]
fn frame_mux_schemata_lints() {
    lint_with_every_site("eth_frame_mux_");
}

/// A site names the generator line that built its expression, not the line that called the
/// generator (the top-level generator functions are not `#[track_caller]`).
#[test]
fn sites_name_the_generators_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cfg = Config::load(&root.join("configs/default.toml")).expect("the shipped configuration");
    let design = hdl_gen::chip::design(&cfg).expect("the design elaborates");
    for (prefix, file) in [
        ("dma_mover_", "src/dma/mover.rs"),
        ("dma_walker_", "src/dma/walker.rs"),
        ("fifo_w", "src/blocks/fifo.rs"),
    ] {
        let m = design
            .modules()
            .expect("modules")
            .into_iter()
            .find(|m| m.name().starts_with(prefix))
            .unwrap_or_else(|| panic!("no module {prefix}*"));
        let sites = mutation_sites(&m);
        let outside: Vec<&str> = sites
            .iter()
            .map(|s| s.loc.as_str())
            .filter(|l| !l.contains(file))
            .collect();
        // Helpers of other files (the stream and register builders) may build a few.
        assert!(
            outside.len() * 10 < sites.len(),
            "{prefix}: {} of {} sites outside {file}: {:?}",
            outside.len(),
            sites.len(),
            &outside[..outside.len().min(5)]
        );
    }
}
