//! Verilator coverage data (`coverage.dat`, "SystemC::Coverage-3"): reading, merging, and the
//! per-module table `testbench coverage` prints.
//!
//! A data file is one line per coverage point, `C '<keys>' <count>`, where `<keys>` is a list
//! of `\x01<key>\x02<value>` pairs: `f` the source file, `l` its line, `n` the column (or which
//! point of a line), `page` the kind and module (`v_line/<module>` and `v_branch/<module>` from
//! `--coverage-line`: a procedural block, an `if`'s branches, a branch of an `if` nested in
//! another; `v_toggle/<module>`, `v_user/<module>`), `o` the comment (`block`, `if`, `else`,
//! `elsif`, `case`... for line points, the signal and bit for toggle points), `S` the lines a
//! line point stands for (`35-39,41`: the statements of its block or branch), `h` the
//! hierarchy. Verilator already sums the instances of
//! a module inside one model (the points are a module's, `h` names every instance); merging
//! here sums points equal in every key but `h`, so a module counts once however many tops,
//! models, runs and suites reached it.
//!
//! A *line* in the table is a source line that a line point stands for (its own line and its
//! `S` lines), hit when one of its points was: the rule `verilator_coverage --write-info` uses
//! for lcov's `DA` records, so the table and genhtml's page of the same data agree. (A branch
//! never taken can hide behind another point of its line, an `else` with no statements behind
//! its `if`; `uncovered.txt` lists every point never hit.) A *toggle* is one toggle point (one
//! bit of one signal, counted when it changes either way).

use std::collections::BTreeMap;
use std::fmt::Write;

/// Coverage points merged over any number of data files: the keys without `h` -> (hierarchy,
/// count).
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    points: BTreeMap<String, (String, u64)>,
}

/// The kind of a coverage point, from its `page` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A block or branch (`--coverage-line`: pages `v_line` and `v_branch`).
    Line,
    /// A bit of a signal (`--coverage-toggle`).
    Toggle,
    /// A SystemVerilog `cover property` (`--coverage-user`).
    User,
}

/// One point, its keys split out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point<'a> {
    /// Source file (`f`).
    pub file: &'a str,
    /// Line (`l`).
    pub line: u32,
    /// Kind, from `page`.
    pub kind: Option<Kind>,
    /// Comment (`o`).
    pub comment: &'a str,
    /// The lines a line point stands for (`S`: `35-39,41`), besides its own.
    pub linescov: &'a str,
    /// Hierarchy (`h`), merged over instances.
    pub hier: &'a str,
    /// Times hit.
    pub count: u64,
}

/// The value of `key` in a key string.
fn key<'a>(keys: &'a str, key: &str) -> Option<&'a str> {
    keys.split('\x01')
        .filter_map(|kv| kv.split_once('\x02'))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// The common form of two hierarchies of one point: the same, or their common prefix and `*`.
fn combine_hier(a: &str, b: &str) -> String {
    if a == b || b.is_empty() {
        return a.to_string();
    }
    if a.is_empty() {
        return b.to_string();
    }
    let n = a
        .char_indices()
        .zip(b.chars())
        .take_while(|((_, x), y)| x == y)
        .last()
        .map_or(0, |((i, c), _)| i + c.len_utf8());
    let prefix = &a[..n];
    if prefix.ends_with('*') {
        prefix.to_string()
    } else {
        format!("{prefix}*")
    }
}

impl Coverage {
    /// An empty set of points.
    pub fn new() -> Coverage {
        Coverage::default()
    }

    /// Adds the points of one data file's text; `what` names it in errors.
    pub fn add_dat(&mut self, text: &str, what: &str) -> Result<(), String> {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("{what}:{}: not a coverage point: {line:.80}", i + 1);
            let rest = line.strip_prefix("C '").ok_or_else(bad)?;
            let (keys, count) = rest.rsplit_once("' ").ok_or_else(bad)?;
            let count: u64 = count.trim().parse().map_err(|_| bad())?;
            let mut name = String::with_capacity(keys.len());
            let mut hier = "";
            for kv in keys.split('\x01').filter(|kv| !kv.is_empty()) {
                match kv.split_once('\x02') {
                    Some(("h", v)) => hier = v,
                    Some(_) => {
                        name.push('\x01');
                        name.push_str(kv);
                    }
                    None => return Err(bad()),
                }
            }
            self.add(name, hier, count);
        }
        Ok(())
    }

    fn add(&mut self, name: String, hier: &str, count: u64) {
        match self.points.get_mut(&name) {
            Some((h, c)) => {
                *c = c.saturating_add(count);
                if h != hier {
                    *h = combine_hier(h, hier);
                }
            }
            None => {
                self.points.insert(name, (hier.to_string(), count));
            }
        }
    }

    /// Adds every point of `other`.
    pub fn merge(&mut self, other: &Coverage) {
        for (name, (hier, count)) in &other.points {
            self.add(name.clone(), hier, *count);
        }
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether there is no point.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Every point, in key order.
    pub fn points(&self) -> impl Iterator<Item = Point<'_>> {
        self.points.iter().map(|(keys, (hier, count))| Point {
            file: key(keys, "f").unwrap_or(""),
            line: key(keys, "l").and_then(|l| l.parse().ok()).unwrap_or(0),
            kind: key(keys, "page").and_then(|p| {
                if p.starts_with("v_line") || p.starts_with("v_branch") {
                    Some(Kind::Line)
                } else if p.starts_with("v_toggle") {
                    Some(Kind::Toggle)
                } else if p.starts_with("v_user") {
                    Some(Kind::User)
                } else {
                    None
                }
            }),
            comment: key(keys, "o").unwrap_or(""),
            linescov: key(keys, "S").unwrap_or(""),
            hier,
            count: *count,
        })
    }

    /// The points `keep` accepts, with every source file renamed by `file` (the data names
    /// files as Verilator was given them; the report needs them where they are now).
    pub fn filtered(
        &self,
        keep: impl Fn(&Point) -> bool,
        file: impl Fn(&str) -> String,
    ) -> Coverage {
        let mut out = Coverage::new();
        for ((keys, (hier, count)), p) in self.points.iter().zip(self.points()) {
            if !keep(&p) {
                continue;
            }
            let f = file(p.file);
            let name = if f == p.file {
                keys.clone()
            } else {
                keys.split('\x01')
                    .filter(|kv| !kv.is_empty())
                    .map(|kv| match kv.split_once('\x02') {
                        Some(("f", _)) => format!("\x01f\x02{f}"),
                        _ => format!("\x01{kv}"),
                    })
                    .collect()
            };
            out.add(name, hier, *count);
        }
        out
    }

    /// The data file text (Verilator's format, readable by `verilator_coverage`).
    pub fn to_dat(&self) -> String {
        let mut s = String::from("# SystemC::Coverage-3\n");
        for (name, (hier, count)) in &self.points {
            let _ = write!(s, "C '{name}");
            if !hier.is_empty() {
                let _ = write!(s, "\x01h\x02{hier}");
            }
            let _ = writeln!(s, "' {count}");
        }
        s
    }

    /// The per-module figures, one row per module that has points.
    pub fn table(&self) -> Vec<ModuleRow> {
        let mut lines: BTreeMap<String, BTreeMap<u32, bool>> = BTreeMap::new();
        let mut rows: BTreeMap<String, ModuleRow> = BTreeMap::new();
        for p in self.points() {
            let module = module_of(p.file);
            let row = rows.entry(module.clone()).or_insert_with(|| ModuleRow {
                module: module.clone(),
                ..ModuleRow::default()
            });
            match p.kind {
                Some(Kind::Line) => {
                    let l = lines.entry(module).or_default();
                    for n in std::iter::once(p.line).chain(line_ranges(p.linescov)) {
                        *l.entry(n).or_default() |= p.count > 0;
                    }
                }
                Some(Kind::Toggle) => {
                    row.toggles.1 += 1;
                    row.toggles.0 += u64::from(p.count > 0);
                }
                Some(Kind::User) => {
                    row.user.1 += 1;
                    row.user.0 += u64::from(p.count > 0);
                }
                None => {}
            }
        }
        for (module, l) in lines {
            let row = rows.get_mut(&module).expect("a row per module with points");
            row.lines = (l.values().filter(|h| **h).count() as u64, l.len() as u64);
        }
        let mut rows: Vec<ModuleRow> = rows.into_values().collect();
        rows.sort_by(|a, b| {
            a.line_pct()
                .partial_cmp(&b.line_pct())
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| a.module.cmp(&b.module))
        });
        rows
    }

    /// The points never hit, per module: line points as `line N (comment)`, toggle points as
    /// signals with the bits not toggled, user points by name.
    pub fn never_hit(&self) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        // module -> signal -> bits never toggled
        let mut toggles: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        let mut lines: BTreeMap<String, BTreeMap<u32, Vec<String>>> = BTreeMap::new();
        let mut hit_lines: BTreeMap<String, std::collections::BTreeSet<u32>> = BTreeMap::new();
        for p in self.points() {
            let module = module_of(p.file);
            match p.kind {
                Some(Kind::Line) if p.count == 0 => lines
                    .entry(module)
                    .or_default()
                    .entry(p.line)
                    .or_default()
                    .push(
                        if p.linescov.is_empty() || p.linescov == p.line.to_string() {
                            p.comment.to_string()
                        } else {
                            format!("{}, lines {}", p.comment, p.linescov)
                        },
                    ),
                Some(Kind::Line) => {
                    hit_lines
                        .entry(module)
                        .or_default()
                        .extend(std::iter::once(p.line).chain(line_ranges(p.linescov)));
                }
                Some(Kind::Toggle) if p.count == 0 => {
                    let (sig, bit) = match p.comment.rfind('[') {
                        Some(i) if p.comment.ends_with(']') => {
                            (&p.comment[..i], &p.comment[i + 1..p.comment.len() - 1])
                        }
                        _ => (p.comment, ""),
                    };
                    toggles
                        .entry(module)
                        .or_default()
                        .entry(sig.to_string())
                        .or_default()
                        .push(bit.to_string());
                }
                Some(Kind::User) if p.count == 0 => out
                    .entry(module)
                    .or_default()
                    .push(format!("cover {} (line {})", p.comment, p.line)),
                _ => {}
            }
        }
        for (module, l) in lines {
            let hit = hit_lines.get(&module);
            for (line, comments) in l {
                // A line counts as hit when any point standing for it was (see the module doc).
                let partly = hit.is_some_and(|h| h.contains(&line));
                out.entry(module.clone()).or_default().push(format!(
                    "line {line} ({}){}",
                    comments.join(", "),
                    if partly {
                        ": another point of the line was hit"
                    } else {
                        ""
                    }
                ));
            }
        }
        for (module, sigs) in toggles {
            for (sig, mut bits) in sigs {
                bits.sort_by_key(|b| b.parse::<i64>().unwrap_or(i64::MAX));
                let bits = if bits.iter().all(|b| b.is_empty()) {
                    String::new()
                } else {
                    format!("[{}]", bit_ranges(&bits))
                };
                out.entry(module.clone())
                    .or_default()
                    .push(format!("toggle {sig}{bits}"));
            }
        }
        out
    }
}

/// The lines of an `S` key: `35-39,41` -> 35, 36, 37, 38, 39, 41.
fn line_ranges(s: &str) -> impl Iterator<Item = u32> + '_ {
    s.split(',').filter(|r| !r.is_empty()).flat_map(|r| {
        let (a, b) = r.split_once('-').unwrap_or((r, r));
        let (a, b) = (a.parse().unwrap_or(0), b.parse().unwrap_or(0));
        // A malformed range counts nothing rather than billions of lines.
        if a == 0 || b < a || b - a > 100_000 {
            0..0
        } else {
            a..b + 1
        }
    })
}

/// `0,1,2,5` -> `0:2,5` (bits written as numbers; anything else listed as it is).
fn bit_ranges(bits: &[String]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(i64, i64)> = None;
    let flush = |run: &mut Option<(i64, i64)>, parts: &mut Vec<String>| {
        if let Some((a, b)) = run.take() {
            parts.push(if a == b {
                a.to_string()
            } else {
                format!("{a}:{b}")
            });
        }
    };
    for b in bits {
        match b.parse::<i64>() {
            Ok(n) => match run {
                Some((a, e)) if n == e + 1 => run = Some((a, n)),
                _ => {
                    flush(&mut run, &mut parts);
                    run = Some((n, n));
                }
            },
            Err(_) => {
                flush(&mut run, &mut parts);
                parts.push(b.clone());
            }
        }
    }
    flush(&mut run, &mut parts);
    parts.join(",")
}

/// The module a source file holds (one module per file, named after it).
pub fn module_of(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.strip_suffix(".sv")
        .or_else(|| name.strip_suffix(".v"))
        .unwrap_or(name)
        .to_string()
}

/// One row of the table: hit and total.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
pub struct ModuleRow {
    /// Module (source file) name.
    pub module: String,
    /// Lines with a line point: (hit, total).
    pub lines: (u64, u64),
    /// Toggle points: (hit, total).
    pub toggles: (u64, u64),
    /// User cover points: (hit, total).
    pub user: (u64, u64),
}

fn pct((hit, total): (u64, u64)) -> Option<f64> {
    (total > 0).then(|| 100.0 * hit as f64 / total as f64)
}

impl ModuleRow {
    /// Line coverage in percent (100 when the module has no line point).
    pub fn line_pct(&self) -> f64 {
        pct(self.lines).unwrap_or(100.0)
    }
}

/// Line coverage under this many percent is flagged.
pub const GOAL_PCT: f64 = 90.0;

/// The table as text: a header, one row per module (sorted as given), the total. A column of
/// functional coverage points (`cover property`) when any module has one.
pub fn format_table(rows: &[ModuleRow]) -> String {
    let covers = rows.iter().any(|r| r.user.1 > 0);
    let width = rows
        .iter()
        .map(|r| r.module.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let cell = |(h, t): (u64, u64)| match pct((h, t)) {
        Some(p) => format!("{:>13} {:>6.1} %", format!("{h}/{t}"), p),
        None => format!("{:>13} {:>8}", "-", ""),
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<width$}  {:>13} {:>8}  {:>13} {:>8}{}",
        "module",
        "lines",
        "",
        "toggles",
        "",
        if covers {
            format!("  {:>13} {:>8}", "cover points", "")
        } else {
            String::new()
        }
    );
    let mut total = ModuleRow::default();
    let mut flagged = 0;
    for r in rows {
        let flag = r.lines.1 > 0 && r.line_pct() < GOAL_PCT;
        flagged += usize::from(flag);
        let _ = writeln!(
            s,
            "{:<width$}  {}  {}{}{}",
            r.module,
            cell(r.lines),
            cell(r.toggles),
            if covers {
                format!("  {}", cell(r.user))
            } else {
                String::new()
            },
            if flag { "  < 90 % lines" } else { "" }
        );
        total.lines.0 += r.lines.0;
        total.lines.1 += r.lines.1;
        total.toggles.0 += r.toggles.0;
        total.toggles.1 += r.toggles.1;
        total.user.0 += r.user.0;
        total.user.1 += r.user.1;
    }
    let _ = writeln!(
        s,
        "{:<width$}  {}  {}{}",
        "total",
        cell(total.lines),
        cell(total.toggles),
        if covers {
            format!("  {}", cell(total.user))
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "{} module(s) of {} under {GOAL_PCT} % line coverage",
        flagged,
        rows.len()
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(file: &str, line: u32, page: &str, comment: &str, hier: &str, count: u64) -> String {
        format!(
            "C '\x01f\x02{file}\x01l\x02{line}\x01n\x020\x01page\x02{page}\x01o\x02{comment}\x01h\x02{hier}' {count}\n"
        )
    }

    #[test]
    fn merges_over_files_and_hierarchies() {
        let a = format!(
            "# SystemC::Coverage-3\n{}{}{}",
            pt("/x/rtl/fifo.sv", 10, "v_line/fifo", "if", "TOP.a.u_fifo", 3),
            pt(
                "/x/rtl/fifo.sv",
                11,
                "v_line/fifo",
                "else",
                "TOP.a.u_fifo",
                0
            ),
            pt(
                "/x/rtl/fifo.sv",
                4,
                "v_toggle/fifo",
                "cnt[0]",
                "TOP.a.u_fifo",
                0
            ),
        );
        let b = format!(
            "{}{}",
            pt(
                "/x/rtl/fifo.sv",
                11,
                "v_line/fifo",
                "else",
                "TOP.b.u_fifo",
                2
            ),
            pt(
                "/x/rtl/fifo.sv",
                4,
                "v_toggle/fifo",
                "cnt[0]",
                "TOP.b.u_fifo",
                0
            ),
        );
        let mut c = Coverage::new();
        c.add_dat(&a, "a.dat").unwrap();
        c.add_dat(&b, "b.dat").unwrap();
        assert_eq!(c.len(), 3, "equal points of two tops are one point");
        let p: Vec<Point> = c.points().collect();
        let els = p.iter().find(|p| p.comment == "else").unwrap();
        assert_eq!((els.count, els.hier), (2, "TOP.*"));
        assert_eq!(els.kind, Some(Kind::Line));
        // Written and read back: the same points.
        let mut again = Coverage::new();
        again.add_dat(&c.to_dat(), "merged").unwrap();
        assert_eq!(again, c);
        // Merging a copy doubles every count.
        let mut twice = c.clone();
        twice.merge(&c);
        assert_eq!(twice.points().map(|p| p.count).sum::<u64>(), 10);
    }

    #[test]
    fn table_counts_lines_and_toggles_per_module() {
        let text = [
            // fifo: line 10 hit, line 11 hit by one of its two points, line 12 never: 2/3.
            pt("/r/fifo.sv", 10, "v_line/fifo", "block", "TOP.f", 5),
            pt("/r/fifo.sv", 11, "v_line/fifo", "if", "TOP.f", 1),
            pt("/r/fifo.sv", 11, "v_line/fifo", "else", "TOP.f", 0).replace("n\x020", "n\x021"),
            pt("/r/fifo.sv", 12, "v_line/fifo", "case", "TOP.f", 0),
            pt("/r/fifo.sv", 3, "v_toggle/fifo", "cnt[0]", "TOP.f", 4),
            pt("/r/fifo.sv", 3, "v_toggle/fifo", "cnt[1]", "TOP.f", 0),
            pt("/r/fifo.sv", 3, "v_toggle/fifo", "cnt[2]", "TOP.f", 0),
            pt("/r/fifo.sv", 3, "v_toggle/fifo", "cnt[4]", "TOP.f", 0),
            // skid: everything hit.
            pt("/r/skid.sv", 7, "v_line/skid", "block", "TOP", 9),
            pt("/r/skid.sv", 2, "v_toggle/skid", "valid", "TOP", 9),
        ]
        .concat();
        let mut c = Coverage::new();
        c.add_dat(&text, "t.dat").unwrap();
        let rows = c.table();
        assert_eq!(rows[0].module, "fifo", "worst line coverage first");
        assert_eq!(rows[0].lines, (2, 3));
        assert_eq!(rows[0].toggles, (1, 4));
        assert_eq!(rows[1].module, "skid");
        assert_eq!(rows[1].lines, (1, 1));
        let t = format_table(&rows);
        assert!(t.lines().nth(1).unwrap().contains("2/3"), "{t}");
        assert!(t.lines().nth(1).unwrap().ends_with("< 90 % lines"), "{t}");
        assert!(!t.lines().nth(2).unwrap().contains("< 90"), "{t}");
        assert!(
            t.contains("1 module(s) of 2 under 90 % line coverage"),
            "{t}"
        );
        let missed = c.never_hit();
        assert_eq!(
            missed["fifo"],
            vec![
                "line 11 (else): another point of the line was hit",
                "line 12 (case)",
                "toggle cnt[1:2,4]",
            ]
        );
        assert!(!missed.contains_key("skid"));
    }

    #[test]
    fn line_points_stand_for_their_lines() {
        // Verilator 5.006's points of `e.sv`: a block, an `if` whose then-branch holds a nested
        // if/else (`v_branch`), and an `else if` with no final else.
        let p = |line: u32, page: &str, o: &str, s: &str, count: u64| {
            pt("/r/e.sv", line, page, o, "TOP", count).replace(
                &format!("\x01o\x02{o}\x01"),
                &format!("\x01o\x02{o}\x01S\x02{s}\x01"),
            )
        };
        let text = [
            p(2, "v_line/e", "block", "2-3", 9),
            p(4, "v_line/e", "elsif", "4", 5),
            p(5, "v_branch/e", "if", "5-6", 5),
            p(5, "v_branch/e", "else", "7-8", 0),
            p(10, "v_branch/e", "if", "10-11", 4),
            p(10, "v_branch/e", "else", "", 0),
        ]
        .concat();
        let mut c = Coverage::new();
        c.add_dat(&text, "e.dat").unwrap();
        // Lines 2 3 4 5 6 7 8 10 11; 7 and 8 never hit (line 5 is, by its `if`).
        assert_eq!(c.table()[0].lines, (7, 9));
        assert_eq!(
            c.never_hit()["e"],
            vec![
                "line 5 (else, lines 7-8): another point of the line was hit",
                "line 10 (else): another point of the line was hit",
            ]
        );
        assert_eq!(
            line_ranges("35-39,41").collect::<Vec<_>>(),
            [35, 36, 37, 38, 39, 41]
        );
        assert_eq!(line_ranges("").count(), 0);
    }

    #[test]
    fn cover_points_get_a_column_and_a_list() {
        let text = [
            pt("/r/walker.sv", 10, "v_line/walker", "block", "TOP.w", 5),
            pt(
                "/r/walker.sv",
                90,
                "v_user/walker",
                "cov_fail_prp1_offset",
                "TOP.w",
                2,
            ),
            pt(
                "/r/walker.sv",
                91,
                "v_user/walker",
                "cov_fail_sgl_bad_type",
                "TOP.w",
                0,
            ),
        ]
        .concat();
        let mut c = Coverage::new();
        c.add_dat(&text, "t.dat").unwrap();
        let rows = c.table();
        assert_eq!(rows[0].user, (1, 2));
        let t = format_table(&rows);
        assert!(t.lines().next().unwrap().contains("cover points"), "{t}");
        assert!(t.lines().nth(1).unwrap().contains("1/2"), "{t}");
        assert_eq!(
            c.never_hit()["walker"],
            vec!["cover cov_fail_sgl_bad_type (line 91)"]
        );
    }

    #[test]
    fn files_renamed_and_kinds_filtered() {
        let text = [
            pt("/old/rtl/fifo.sv", 10, "v_line/fifo", "block", "TOP.f", 5),
            pt("/old/rtl/fifo.sv", 3, "v_toggle/fifo", "cnt[0]", "TOP.f", 4),
        ]
        .concat();
        let mut c = Coverage::new();
        c.add_dat(&text, "t.dat").unwrap();
        let lines = c.filtered(
            |p| p.kind == Some(Kind::Line),
            |f| f.replace("/old/", "/new/"),
        );
        assert_eq!(lines.len(), 1);
        let p = lines.points().next().unwrap();
        assert_eq!((p.file, p.line, p.count), ("/new/rtl/fifo.sv", 10, 5));
        assert!(lines
            .to_dat()
            .contains("\x01f\x02/new/rtl/fifo.sv\x01l\x0210"));
    }

    #[test]
    fn bad_lines_are_errors() {
        let mut c = Coverage::new();
        let e = c.add_dat("C 'x' many\n", "bad.dat").unwrap_err();
        assert!(e.starts_with("bad.dat:1: not a coverage point"), "{e}");
        assert!(combine_hier("TOP.a.x", "TOP.b.x").starts_with("TOP."));
        assert_eq!(bit_ranges(&["0".into(), "1".into(), "3".into()]), "0:1,3");
    }
}
