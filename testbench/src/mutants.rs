//! Mutant schemata: every mutant of a module compiled into one model and chosen at run time.
//!
//! The mutant table (`ci/mutants.txt`, [`parse_table`]) gives each mutant as a GNU sed
//! expression on one file of rtl/. Rebuilding a Verilated model per mutant costs minutes, so
//! [`schemata`] merges all mutants of a file into one copy of it: each line a mutant changes
//! keeps its original expression and gains the mutant's as an alternative, selected by the
//! module's `mutant_sel`,
//!
//! ```text
//! assign p_full = p_tail_new == c_head;
//! assign p_full = (mutant_sel == 25) ? (1'b0) : (p_tail_new == c_head);
//! ```
//!
//! and `mutant_sel` is set once, by an `initial` block, from the DPI-C function
//! [`tb_mutant_sel`], which returns `TB_MUTANT` (0 or unset: no mutant, the original design).
//! Every instance of the module reads it when its model starts, so one model build serves every
//! mutant of the file and each run picks one. A line that is not a single statement the guard
//! can wrap (an `assign`, a procedural assignment, an `if (...) begin`, an instance port
//! connection), or a change that adds or removes lines, is reported as a fallback: that mutant
//! is built on its own, as a plain sed copy.
//!
//! `testbench mutants` (cli/mutants.rs) builds and runs them.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::c_int;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// One entry of the mutant table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// Its number: its position among the table's entries, from 1 (what `TB_MUTANT` selects).
    pub id: u32,
    /// What the bug is.
    pub name: String,
    /// The file of rtl/ it changes.
    pub file: String,
    /// The GNU sed expression that makes the bug.
    pub sed: String,
    /// The suite whose property must catch it.
    pub suite: String,
    /// The properties to run (comma-separated, as `regress --property` takes them).
    pub properties: String,
    /// At most this many random cases (the run stops at the first failure).
    pub cases: u64,
    /// Its line in the table file, for messages.
    pub line: usize,
}

/// Parses the mutant table: `name|file|sed|suite|properties|cases` per line; empty lines and
/// lines starting with `#` are skipped. `origin` names the table in errors.
pub fn parse_table(text: &str, origin: &str) -> Result<Vec<Mutant>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('|').map(str::trim).collect();
        if f.len() != 6 {
            return Err(format!(
                "{origin}:{}: {} fields, expected 6 (name|file|sed|suite|properties|cases); write a '|' inside a sed expression as '.'",
                i + 1,
                f.len()
            ));
        }
        if f.iter().any(|x| x.is_empty()) {
            return Err(format!("{origin}:{}: an empty field", i + 1));
        }
        let cases = f[5].parse().map_err(|_| {
            format!(
                "{origin}:{}: cases `{}` is not a number of cases",
                i + 1,
                f[5]
            )
        })?;
        out.push(Mutant {
            id: out.len() as u32 + 1,
            name: f[0].to_string(),
            file: f[1].to_string(),
            sed: f[2].to_string(),
            suite: f[3].to_string(),
            properties: f[4].to_string(),
            cases,
            line: i + 1,
        });
    }
    Ok(out)
}

/// The text of `file` after the sed expression `expr` (GNU sed, as the table is written for).
pub fn apply_sed(expr: &str, file: &Path) -> Result<String, String> {
    let out = std::process::Command::new("sed")
        .arg("-e")
        .arg(expr)
        .arg(file)
        .output()
        .map_err(|e| format!("cannot run sed: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "sed -e '{expr}' {} failed: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout)
        .map_err(|_| format!("sed output of {} is not UTF-8", file.display()))
}

// ---------------------------------------------------------------------------------------------
// The run-time select.

static READS: AtomicU64 = AtomicU64::new(0);

/// Parses `TB_MUTANT`: `Ok(None)` when unset.
pub fn selected_from_env() -> Result<Option<u32>, String> {
    match std::env::var("TB_MUTANT") {
        Err(_) => Ok(None),
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("TB_MUTANT={v}: expected a mutant number (0: none)")),
    }
}

/// The mutant this process simulates (`TB_MUTANT`; 0 when unset or not a number).
pub fn selected() -> u32 {
    static SEL: OnceLock<u32> = OnceLock::new();
    *SEL.get_or_init(|| selected_from_env().ok().flatten().unwrap_or(0))
}

/// `import "DPI-C" function int tb_mutant_sel();`: called once by every instance of a
/// schemata module when its model starts. Returns [`selected`].
#[no_mangle]
pub extern "C" fn tb_mutant_sel() -> c_int {
    READS.fetch_add(1, Ordering::Relaxed);
    selected() as c_int
}

/// How many times models asked for the mutant number: 0 means no schemata module ran, and a
/// selected mutant would have changed nothing.
pub fn select_reads() -> u64 {
    READS.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------------
// The schemata transform.

/// A schemata copy of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schemata {
    /// The file's new text: the original plus every guarded mutant.
    pub text: String,
    /// The mutants it holds.
    pub guarded: Vec<u32>,
    /// Mutants it could not hold, with the reason: each needs a build of its own.
    pub fallback: Vec<(u32, String)>,
}

/// Splits a line into (head, expression, tail) when it is one statement whose expression a
/// guard can wrap: `assign x = E;`, `x = E;` or `x <= E;`, `if (E) begin` (also after
/// `end else`), `.port (E),`. `head + E + tail` is the line.
fn split(line: &str) -> Option<(&str, &str, &str)> {
    let body = line.trim_end();
    let t = body.trim_start();
    let indent = body.len() - t.len();
    let at = |head_len: usize, tail_len: usize| {
        let (head, rest) = body.split_at(indent + head_len);
        let expr = &rest[..rest.len() - tail_len];
        let tail = &line[head.len() + expr.len()..];
        (head, expr, tail)
    };
    let parts = if let Some(rest) = t.strip_prefix("assign ") {
        let eq = rest.find(" = ")?;
        rest.ends_with(';')
            .then(|| at("assign ".len() + eq + " = ".len(), 1))?
    } else if t.ends_with(") begin") && (t.starts_with("if (") || t.starts_with("end else if (")) {
        let open = t.find("if (")? + "if (".len();
        at(open, ") begin".len())
    } else if let Some(port) = t.strip_prefix('.') {
        let open = port.find('(')?;
        let name = port[..open].trim_end();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let tail = if t.ends_with("),") {
            2
        } else if t.ends_with(')') {
            1
        } else {
            return None;
        };
        at(1 + open + 1, tail)
    } else {
        // A procedural assignment: a plain lvalue (a name, maybe with selects), then = or <=.
        let eq = match (t.find(" = "), t.find(" <= ")) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
        let lhs = &t[..eq];
        let first = lhs.chars().next()?;
        const KEYWORDS: &[&str] = &[
            "if", "else", "for", "case", "unique", "priority", "begin", "end",
        ];
        if !(first.is_ascii_alphabetic() || first == '_')
            || KEYWORDS.contains(&lhs)
            || !lhs
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_[]:'+-".contains(c))
            || !t.ends_with(';')
        {
            return None;
        }
        let op = if t[eq..].starts_with(" <= ") { 4 } else { 3 };
        at(eq + op, 1)
    };
    let (_, expr, _) = parts;
    balanced(expr).then_some(parts)
}

/// Parentheses, brackets and braces balanced, and no `;` or comment: the text can be wrapped
/// in parentheses as one expression.
fn balanced(expr: &str) -> bool {
    let mut depth: Vec<char> = Vec::new();
    if expr.trim().is_empty() || expr.contains(';') || expr.contains("//") || expr.contains("/*") {
        return false;
    }
    for c in expr.chars() {
        match c {
            '(' => depth.push(')'),
            '[' => depth.push(']'),
            '{' => depth.push('}'),
            ')' | ']' | '}' if depth.pop() != Some(c) => return false,
            _ => {}
        }
    }
    depth.is_empty()
}

/// The name of the signal that holds the selected mutant in a schemata module.
pub const SELECT: &str = "mutant_sel";

/// Merges the mutants of one file: `original` is its text, `mutants` each mutant's number and
/// the file's text with that mutant applied. Errors when the file gives no place for the
/// select (no module header) or already uses its name.
pub fn schemata(original: &str, mutants: &[(u32, String)]) -> Result<Schemata, String> {
    if original.contains(SELECT) {
        return Err(format!("the file already uses the name `{SELECT}`"));
    }
    let orig: Vec<&str> = original.split('\n').collect();
    // Line index -> the alternatives (mutant, expression) guarding it.
    let mut alternatives: BTreeMap<usize, Vec<(u32, String)>> = BTreeMap::new();
    let mut guarded = Vec::new();
    let mut fallback = Vec::new();
    'mutant: for (id, text) in mutants {
        let mutated: Vec<&str> = text.split('\n').collect();
        if mutated.len() != orig.len() {
            fallback.push((
                *id,
                format!(
                    "it changes the number of lines ({} to {})",
                    orig.len(),
                    mutated.len()
                ),
            ));
            continue;
        }
        let changed: Vec<usize> = (0..orig.len()).filter(|&i| orig[i] != mutated[i]).collect();
        if changed.is_empty() {
            return Err(format!("mutant {id} changes nothing"));
        }
        let mut mine = Vec::new();
        for &i in &changed {
            match (split(orig[i]), split(mutated[i])) {
                (Some((h, e, t)), Some((mh, me, mt))) if h == mh && t == mt && e != me => {
                    mine.push((i, me.to_string()));
                }
                _ => {
                    fallback.push((
                        *id,
                        format!(
                            "line {}, `{}`, is not a single statement a guard can wrap",
                            i + 1,
                            orig[i].trim()
                        ),
                    ));
                    continue 'mutant;
                }
            }
        }
        for (i, e) in mine {
            alternatives.entry(i).or_default().push((*id, e));
        }
        guarded.push(*id);
    }

    let header_end = orig
        .iter()
        .position(|l| l.starts_with("module "))
        .and_then(|m| (m..orig.len()).find(|&i| orig[i].trim() == ");"))
        .ok_or("no `module name (` ... `);` header to declare the select after")?;
    let module_line = orig
        .iter()
        .position(|l| l.starts_with("module "))
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(orig.len() + 8);
    for (i, line) in orig.iter().enumerate() {
        if i == module_line && !guarded.is_empty() {
            out.push(format!(
                "// Mutant schemata (testbench mutants): mutants {} of the table, one chosen at run time.",
                guarded
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            // A mutant's expression may be narrower than the original's (a constant for a
            // comparison); the condition operator then warns where the assignment did not.
            out.push("/* verilator lint_off WIDTH */".to_string());
        }
        match alternatives.get(&i) {
            Some(alts) => {
                let (head, expr, tail) = split(line).expect("split before");
                let mut guard = String::new();
                for (id, e) in alts {
                    guard.push_str(&format!("({SELECT} == {id}) ? ({e}) : "));
                }
                out.push(format!("{head}{guard}({expr}){tail}"));
            }
            None => out.push(line.to_string()),
        }
        if i == header_end && !guarded.is_empty() {
            out.push(String::new());
            out.push(
                "  // Which mutant this simulation runs (0: none): TB_MUTANT, read once at start."
                    .to_string(),
            );
            out.push("  import \"DPI-C\" function int tb_mutant_sel();".to_string());
            out.push(format!("  int {SELECT};"));
            out.push(format!("  initial {SELECT} = tb_mutant_sel();"));
        }
    }
    Ok(Schemata {
        text: out.join("\n"),
        guarded,
        fallback,
    })
}

// ---------------------------------------------------------------------------------------------
// Which tops hold which modules.

/// The module hierarchy of an RTL folder, as `testbench/build.rs` sees it: a top is a module
/// with a generated `<top>_shim.cpp`; a module instantiates another on a line
/// `<module> <instance> (`.
#[derive(Debug, Clone, Default)]
pub struct RtlGraph {
    /// Every top, sorted.
    pub tops: Vec<String>,
    deps: BTreeMap<String, Vec<String>>,
}

impl RtlGraph {
    /// Reads `dir`.
    pub fn read(dir: &Path) -> std::io::Result<RtlGraph> {
        let mut sources = BTreeMap::new();
        let mut tops = Vec::new();
        for e in std::fs::read_dir(dir)? {
            let p = e?.path();
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            if let Some(m) = name.strip_suffix(".sv") {
                sources.insert(m.to_string(), std::fs::read_to_string(&p)?);
            } else if let Some(t) = name.strip_suffix("_shim.cpp") {
                tops.push(t.to_string());
            }
        }
        tops.sort();
        let known: BTreeSet<&String> = sources.keys().collect();
        let deps = sources
            .iter()
            .map(|(m, text)| {
                let children = text
                    .lines()
                    .filter_map(|l| {
                        let mut it = l.split_whitespace();
                        let (module, _inst, paren) = (it.next()?, it.next()?, it.next()?);
                        (paren == "(" && known.contains(&module.to_string()))
                            .then(|| module.to_string())
                    })
                    .collect();
                (m.clone(), children)
            })
            .collect();
        Ok(RtlGraph { tops, deps })
    }

    fn contains(&self, top: &str, module: &str, seen: &mut BTreeSet<String>) -> bool {
        if top == module {
            return true;
        }
        if !seen.insert(top.to_string()) {
            return false;
        }
        self.deps
            .get(top)
            .into_iter()
            .flatten()
            .any(|c| self.contains(c, module, seen))
    }

    /// The tops whose models contain `module`.
    pub fn tops_containing(&self, module: &str) -> Vec<String> {
        self.tops
            .iter()
            .filter(|t| self.contains(t, module, &mut BTreeSet::new()))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "// header\n\nmodule m (\n  input  logic clk_i,\n  output logic a_o\n);\n\n  assign a_o = b & c;\n  always_comb begin\n    x_d = x_q + 4'd1;\n    if (p & (q == 4'hc)) begin\n      y = 1'b1;\n    end\n  end\n  sub u_sub (\n    .clk_i   (clk_i),\n    .r_i     (r)\n  );\n\nendmodule\n";

    #[test]
    fn splits_the_statements_a_guard_wraps() {
        assert_eq!(
            split("  assign a_o = b & c;"),
            Some(("  assign a_o = ", "b & c", ";"))
        );
        assert_eq!(
            split("    x_d = x_q + 4'd1;"),
            Some(("    x_d = ", "x_q + 4'd1", ";"))
        );
        assert_eq!(split("    q[3] <= d;"), Some(("    q[3] <= ", "d", ";")));
        assert_eq!(
            split("    end else if (a == 1) begin"),
            Some(("    end else if (", "a == 1", ") begin"))
        );
        assert_eq!(
            split("    .clk_i   (clk_i),"),
            Some(("    .clk_i   (", "clk_i", "),"))
        );
        assert_eq!(
            split("    .r_i     (r)"),
            Some(("    .r_i     (", "r", ")"))
        );
        assert_eq!(split("  end"), None);
        assert_eq!(split("    if (a) x = 1;"), None);
        assert_eq!(split("  assign a = (b;"), None);
        assert_eq!(split("  case (s)"), None);
    }

    #[test]
    fn guards_each_mutant_and_keeps_the_original_as_the_default() {
        let m1 = FILE.replace("b & c;", "b | c;");
        let m2 = FILE.replace("x_q + 4'd1", "x_q + 4'd2");
        let m3 = FILE.replace("b & c;", "1'b0;");
        let m4 = FILE.replace("(q == 4'hc)", "(q == 4'h0)");
        let m5 = FILE.replace("(clk_i),", "(1'b1),");
        let s = schemata(FILE, &[(1, m1), (2, m2), (3, m3), (4, m4), (5, m5)]).unwrap();
        assert_eq!(s.guarded, vec![1, 2, 3, 4, 5]);
        assert!(s.fallback.is_empty());
        assert!(s.text.contains(
            "  assign a_o = (mutant_sel == 1) ? (b | c) : (mutant_sel == 3) ? (1'b0) : (b & c);"
        ));
        assert!(s
            .text
            .contains("    x_d = (mutant_sel == 2) ? (x_q + 4'd2) : (x_q + 4'd1);"));
        assert!(s
            .text
            .contains("    if ((mutant_sel == 4) ? (p & (q == 4'h0)) : (p & (q == 4'hc))) begin"));
        assert!(s
            .text
            .contains("    .clk_i   ((mutant_sel == 5) ? (1'b1) : (clk_i)),"));
        // The select is declared after the port list.
        let decl = s
            .text
            .find("initial mutant_sel = tb_mutant_sel();")
            .unwrap();
        assert!(decl > s.text.find(");").unwrap());
        assert!(decl < s.text.find("assign a_o").unwrap());
    }

    #[test]
    fn reports_what_it_cannot_guard() {
        let grows = FILE.replace("  end\n  sub", "  end\n\n  sub");
        let end = FILE.replace("    end\n  end", "    end else begin\n  end");
        let s = schemata(FILE, &[(7, grows), (8, end)]).unwrap();
        assert!(s.guarded.is_empty());
        assert_eq!(s.fallback.len(), 2);
        assert!(s.fallback[0].1.contains("number of lines"));
        assert!(s.fallback[1].1.contains("line 13"));
        assert_eq!(s.text, FILE, "nothing guarded: the file stays as it was");
        assert!(schemata(FILE, &[(9, FILE.to_string())]).is_err());
    }

    #[test]
    fn parses_the_table() {
        let t = "# comment\n\na bug|f.sv|s/a/b/|stdlib|fifo,fifo_ops|60\nother|g.sv|/x/s/ . y//|qos|qos_mix|200\n";
        let m = parse_table(t, "t").unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].id, m[0].line, m[0].cases), (1, 3, 60));
        assert_eq!(m[1].sed, "/x/s/ . y//");
        assert_eq!(m[1].properties, "qos_mix");
        assert!(parse_table("a|b|c|d|e\n", "t")
            .unwrap_err()
            .contains("5 fields"));
        assert!(parse_table("a|b|c|d|e|x\n", "t").is_err());
    }

    #[test]
    fn the_shipped_table_parses_and_names_files_of_rtl() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join("ci/mutants.txt")).unwrap();
        let table = parse_table(&text, "ci/mutants.txt").unwrap();
        assert!(table.len() >= 60);
        let suites = crate::suites::all();
        for m in &table {
            assert!(
                root.join("rtl").join(&m.file).exists(),
                "{}: no rtl/{}",
                m.name,
                m.file
            );
            let suite = suites.iter().find(|s| s.name == m.suite).unwrap();
            for p in m.properties.split(',') {
                assert!(
                    suite.properties.iter().any(|e| e.name == p),
                    "{}: suite {} has no property {p}",
                    m.name,
                    m.suite
                );
            }
        }
    }
}
