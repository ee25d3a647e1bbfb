//! Mutant schemata from the IR: the sites a module offers, and the text with mutants behind the
//! select (what `testbench mutate` builds).

use hdl_builder::prelude::*;
use hdl_builder::{mutant_schemata, mutation_sites, Design, EmitOptions};
use std::collections::BTreeMap;
use std::process::Command;

/// A small module with one of each kind of site: an FSM (enum items, a case), an adder, a
/// comparison, a multiplexer, an `if`, a one-bit assignment, a constant, a cover point.
fn sample() -> std::rc::Rc<Module> {
    let mut m = ModuleBuilder::new("mut_sample");
    let go = m.input("go_i", 1);
    let a = m.input("a_i", 8);
    let b = m.input("b_i", 8);
    let sum = m.output("sum_o", 8);
    let big = m.output("big_o", 1);
    let busy = m.output("busy_o", 1);
    let st = m.enum_type("state", &["S_IDLE", "S_RUN", "S_DONE"]);
    let state = m.reg_enum("state", &st, st.item("S_IDLE"));
    let cnt = m.reg("cnt", 8, 0);
    m.assign(sum, mux(go, a + b, a - lit(8, 3)));
    m.assign(big, a.gt(b));
    m.assign(busy, state.q.ne(st.item("S_IDLE")));
    m.comb(|c| {
        c.set(state.d, state.q);
        c.set(cnt.d, cnt.q);
        c.case(state.q, |k| {
            k.arm(st.item("S_IDLE"), |c| {
                c.if_(go, |c| c.set(state.d, st.item("S_RUN")));
            });
            k.arm(st.item("S_RUN"), |c| {
                c.set(cnt.d, cnt.q + lit(8, 1));
                c.if_(cnt.q.eq(lit(8, 9)), |c| c.set(state.d, st.item("S_DONE")));
            });
            k.default(|c| c.set(state.d, st.item("S_IDLE")));
        });
    });
    m.cover("done", state.q.eq(st.item("S_DONE")));
    m.finish().expect("the sample is legal")
}

fn body(sv: &str) -> &str {
    &sv[sv.find("module ").expect("a module")..]
}

#[test]
fn sites_cover_each_kind_and_leave_the_text_alone() {
    let m = sample();
    let sites = mutation_sites(&m);
    let whats: Vec<&str> = sites.iter().map(|s| s.what.as_str()).collect();
    for kind in [
        "operator swapped: `a_i + b_i` -> `a_i - b_i`",
        "constant off by one: `8'd3` -> `8'd4`",
        "condition inverted",
        "comparison changed: `a_i > b_i` -> `a_i >= b_i`",
        "stuck at 0",
        "stuck at 1",
        "state confused",
    ] {
        assert!(
            whats.iter().any(|w| w.contains(kind)),
            "no site `{kind}` in {whats:#?}"
        );
    }
    assert!(sites.iter().enumerate().all(|(i, s)| s.index == i as u32));
    assert!(
        sites.iter().all(|s| s.loc.contains("mutate.rs:")),
        "each site names the generator's line: {sites:#?}"
    );
    // Counting sites changes nothing, and an empty plan is the emitted text.
    let mut d = Design::new("mut_sample");
    d.add_top(m.clone());
    let files = d
        .emit(&EmitOptions {
            header: vec!["test".into()],
            core_name: "test:mut:mut:0".into(),
            description: "mut".into(),
        })
        .unwrap();
    let sv = &files
        .iter()
        .find(|f| f.path == "mut_sample.sv")
        .unwrap()
        .contents;
    assert_eq!(body(&mutant_schemata(&m, &BTreeMap::new())), body(sv));
}

#[test]
fn schemata_guards_every_planned_site_and_lints() {
    let m = sample();
    let sites = mutation_sites(&m);
    let plan: BTreeMap<u32, u32> = sites.iter().map(|s| (s.index, s.index + 1)).collect();
    let text = mutant_schemata(&m, &plan);
    for n in 1..=sites.len() {
        assert!(
            text.contains(&format!("(mutant_sel == {n}) ?")),
            "mutant {n} missing:\n{text}"
        );
    }
    assert!(text.contains("initial mutant_sel = tb_mutant_sel();"));
    // No mutant in a case label or a cover point.
    assert!(text.contains("      S_IDLE: begin"), "{text}");
    assert!(
        text.contains("cov_done: cover property (@(posedge clk_i) rst_ni && (state_q == S_DONE));"),
        "{text}"
    );
    // Every mutant at once still elaborates (Verilator, as the testbench's models do).
    let dir = std::env::temp_dir().join(format!("mut_sample_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("mut_sample.sv");
    std::fs::write(&f, &text).unwrap();
    let o = Command::new("verilator")
        .args(["--lint-only", "-Wall", "-Wno-DECLFILENAME"])
        .arg(&f)
        .output()
        .expect("verilator is installed (ci/setup.sh)");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        o.status.success(),
        "verilator rejects the schemata:\n{}\n{text}",
        String::from_utf8_lossy(&o.stderr)
    );
}
