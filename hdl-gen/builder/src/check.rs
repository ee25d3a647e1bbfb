//! Elaboration checks. Each error names the module, the signal and the Rust line that built it.
//!
//! One file on purpose (about 1,400 lines): every check reads the same context (`Ctx`) and
//! statement walks (`walk_stmts`, `definite`), and each rule sits next to its message.
//!
//! The checks are deliberately stricter than SystemVerilog: everything Verilator's `-Wall` would
//! warn about in emitted code (width mismatches, unused bits, latches, multiple drivers, loops)
//! is refused here, where the message can point at the generator's own source line.

// `Loc` is itself a reference; spelling out `*loc` keeps the copies visible.
#![allow(clippy::explicit_auto_deref)]

use crate::error::{Error, ErrorKind, Loc};
use crate::expr::{BinOp, CmpOp, Expr, Kind, Sig};
use crate::module::{sig_name, Bind, Item, ModuleData, Role, SigKind, Stmt, Timing};
use std::collections::{BTreeMap, BTreeSet, HashMap};

struct Ctx<'a> {
    d: &'a ModuleData,
    errors: &'a mut Vec<Error>,
    /// Bits read, per signal.
    used: Vec<Vec<bool>>,
}

impl Ctx<'_> {
    fn err(&mut self, kind: ErrorKind, signal: Option<String>, loc: Loc, message: String) {
        self.errors.push(Error {
            kind,
            module: self.d.name.clone(),
            signal,
            loc,
            message,
        });
    }

    fn own(&mut self, s: Sig, loc: Loc) -> bool {
        if s.module != self.d.id || s.id as usize >= self.d.signals.len() {
            self.err(
                ErrorKind::ForeignSignal,
                None,
                loc,
                "a signal of another module is used here; pass values between modules through ports"
                    .into(),
            );
            return false;
        }
        true
    }

    fn mark(&mut self, s: Sig, hi: u32, lo: u32) {
        let u = &mut self.used[s.id as usize];
        for b in lo..=hi.min(u.len().saturating_sub(1) as u32) {
            u[b as usize] = true;
        }
    }

    /// Checks widths inside `e`, marks the bits it reads, and collects the signals it reads.
    fn expr(&mut self, e: &Expr, reads: &mut BTreeSet<u32>) {
        let loc = e.loc();
        match e.kind() {
            Kind::Sig(s) => {
                if self.own(*s, loc) {
                    self.mark(*s, s.width.saturating_sub(1), 0);
                    reads.insert(s.id);
                }
            }
            Kind::Const(v) => {
                if e.width() < 128 && (v >> e.width()) != 0 {
                    self.err(
                        ErrorKind::Width,
                        None,
                        loc,
                        format!("constant {v} does not fit in {} bits", e.width()),
                    );
                }
            }
            Kind::Ones | Kind::EnumItem(_) => {}
            Kind::Not(a) | Kind::Reduce(_, a) | Kind::ShiftConst(_, a, _) => self.expr(a, reads),
            Kind::Bin(op, a, b) => {
                self.expr(a, reads);
                self.expr(b, reads);
                if a.width() != b.width() {
                    let sym = match op {
                        BinOp::And => "&",
                        BinOp::Or => "|",
                        BinOp::Xor => "^",
                        BinOp::Add => "+",
                        BinOp::Sub => "-",
                        BinOp::Mul => "*",
                    };
                    self.err(
                        ErrorKind::Width,
                        None,
                        loc,
                        format!(
                            "width mismatch: operands of `{sym}` are {} and {} bits wide; resize one with .zext() or .slice()",
                            a.width(),
                            b.width()
                        ),
                    );
                }
            }
            Kind::Cmp(op, a, b) => {
                self.expr(a, reads);
                self.expr(b, reads);
                if a.width() != b.width() {
                    let sym = match op {
                        CmpOp::Eq => "==",
                        CmpOp::Ne => "!=",
                        CmpOp::Lt => "<",
                        CmpOp::Le => "<=",
                        CmpOp::Gt => ">",
                        CmpOp::Ge => ">=",
                    };
                    self.err(
                        ErrorKind::Width,
                        None,
                        loc,
                        format!(
                            "width mismatch: operands of `{sym}` are {} and {} bits wide",
                            a.width(),
                            b.width()
                        ),
                    );
                }
            }
            Kind::Shift(_, a, b) => {
                self.expr(a, reads);
                self.expr(b, reads);
            }
            Kind::Slice(a, hi, lo) => {
                if hi < lo || *hi >= a.width() {
                    self.err(
                        ErrorKind::Width,
                        None,
                        loc,
                        format!("slice [{hi}:{lo}] is outside a {}-bit value", a.width()),
                    );
                }
                if let Kind::Sig(s) = a.kind() {
                    if self.own(*s, loc) {
                        self.mark(*s, *hi, *lo);
                        reads.insert(s.id);
                    }
                } else {
                    self.expr(a, reads);
                }
            }
            Kind::Concat(parts) => {
                if parts.is_empty() {
                    self.err(ErrorKind::Width, None, loc, "empty concatenation".into());
                }
                for p in parts {
                    self.expr(p, reads);
                }
            }
            Kind::Repeat(a, n) => {
                self.expr(a, reads);
                if *n == 0 {
                    self.err(ErrorKind::Width, None, loc, "replication by zero".into());
                }
            }
            Kind::Mux(c, a, b) => {
                self.expr(c, reads);
                self.expr(a, reads);
                self.expr(b, reads);
                if c.width() != 1 {
                    self.err(
                        ErrorKind::Width,
                        None,
                        loc,
                        format!("mux condition is {} bits wide; it must be 1", c.width()),
                    );
                }
                if a.width() != b.width() {
                    self.err(
                        ErrorKind::Width,
                        None,
                        loc,
                        format!(
                            "width mismatch: mux arms are {} and {} bits wide",
                            a.width(),
                            b.width()
                        ),
                    );
                }
            }
            Kind::Zext(a) => {
                self.expr(a, reads);
                if a.width() > e.width() {
                    self.err(
                        ErrorKind::Width,
                        None,
                        loc,
                        format!(
                            "cannot zero-extend a {}-bit value to {} bits; use .resize() to truncate",
                            a.width(),
                            e.width()
                        ),
                    );
                }
            }
        }
        if e.width() == 0 {
            self.err(ErrorKind::Width, None, loc, "zero-width value".into());
        }
    }

    fn cond(&mut self, e: &Expr, reads: &mut BTreeSet<u32>, what: &str) {
        self.expr(e, reads);
        if e.width() != 1 {
            self.err(
                ErrorKind::Width,
                None,
                e.loc(),
                format!(
                    "{what} is {} bits wide; it must be 1 (compare it, or use .any())",
                    e.width()
                ),
            );
        }
    }

    /// Checks an assignment's widths and enum types.
    fn assign(&mut self, target: Sig, value: &Expr, loc: Loc) {
        if !self.own(target, loc) {
            return;
        }
        let name = sig_name(self.d, target);
        if target.width != value.width() {
            self.err(
                ErrorKind::Width,
                Some(name.clone()),
                loc,
                format!(
                    "width mismatch: a {}-bit value is assigned to the {}-bit `{name}`",
                    value.width(),
                    target.width
                ),
            );
        }
        if let Some(t) = target.enum_ty {
            if value.0.enum_ty != Some((self.d.id, t)) {
                let ty = &self.d.enums[t as usize].name;
                self.err(
                    ErrorKind::Width,
                    Some(name.clone()),
                    loc,
                    format!("`{name}` is of enum type `{ty}`; assign it an item of `{ty}`"),
                );
            }
        }
    }
}

/// A driver of a signal, for the single-driver rule and loop messages.
#[derive(Clone, Copy)]
struct Driver {
    loc: Loc,
    /// Index of the item or instance; distinguishes "one comb block" from two.
    source: (u8, usize),
}

const KEYWORDS: &[&str] = &[
    "always",
    "always_comb",
    "always_ff",
    "always_latch",
    "and",
    "assign",
    "automatic",
    "begin",
    "bit",
    "buf",
    "byte",
    "case",
    "casex",
    "casez",
    "cell",
    "chandle",
    "class",
    "clocking",
    "config",
    "const",
    "constraint",
    "context",
    "cover",
    "default",
    "defparam",
    "design",
    "disable",
    "do",
    "edge",
    "else",
    "end",
    "endcase",
    "endclass",
    "endfunction",
    "endgenerate",
    "endmodule",
    "endpackage",
    "endtask",
    "enum",
    "event",
    "export",
    "extends",
    "extern",
    "final",
    "for",
    "force",
    "foreach",
    "forever",
    "fork",
    "function",
    "generate",
    "genvar",
    "if",
    "iff",
    "import",
    "initial",
    "inout",
    "input",
    "int",
    "integer",
    "interface",
    "join",
    "local",
    "localparam",
    "logic",
    "longint",
    "macromodule",
    "module",
    "nand",
    "negedge",
    "new",
    "nor",
    "not",
    "null",
    "or",
    "output",
    "package",
    "packed",
    "parameter",
    "posedge",
    "priority",
    "program",
    "property",
    "protected",
    "pure",
    "rand",
    "real",
    "reg",
    "release",
    "repeat",
    "return",
    "shortint",
    "signed",
    "static",
    "string",
    "struct",
    "super",
    "supply0",
    "supply1",
    "table",
    "task",
    "this",
    "time",
    "tri",
    "type",
    "typedef",
    "union",
    "unique",
    "unsigned",
    "var",
    "virtual",
    "void",
    "wait",
    "wand",
    "while",
    "wire",
    "wor",
    "xnor",
    "xor",
];

fn legal_identifier(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok_first = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !ok_first || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "`{name}` is not a legal SystemVerilog identifier (letters, digits, `_`; not starting with a digit)"
        ));
    }
    if KEYWORDS.contains(&name) {
        return Err(format!(
            "`{name}` is a SystemVerilog keyword; choose another name"
        ));
    }
    Ok(())
}

fn check_names(ctx: &mut Ctx) {
    let d = ctx.d;
    let mut seen: HashMap<&str, Loc> = HashMap::new();
    let mut names: Vec<(&str, Loc)> = Vec::new();
    for s in &d.signals {
        names.push((&s.name, s.loc));
    }
    for e in &d.enums {
        names.push((&e.name, e.loc));
        for i in &e.items {
            names.push((i, e.loc));
        }
    }
    for m in &d.mems {
        names.push((&m.name, m.loc));
    }
    for i in &d.insts {
        names.push((&i.name, i.loc));
    }
    let labels: Vec<(String, Loc)> = d
        .covers
        .iter()
        .map(|c| (format!("cov_{}", c.name), c.loc))
        .collect();
    for (l, loc) in &labels {
        names.push((l, loc));
    }
    if let Err(msg) = legal_identifier(&d.name) {
        ctx.err(ErrorKind::NameCollision, None, d.loc, msg);
    }
    for (name, loc) in names {
        if let Err(msg) = legal_identifier(name) {
            ctx.err(ErrorKind::NameCollision, Some(name.to_string()), loc, msg);
        }
        if let Some(first) = seen.get(name) {
            ctx.err(
                ErrorKind::NameCollision,
                Some(name.to_string()),
                loc,
                format!(
                    "name `{name}` is already used (declared at {}:{})",
                    first.file(),
                    first.line()
                ),
            );
        } else {
            seen.insert(name, loc);
        }
    }
}

fn stmts_targets(stmts: &[Stmt], out: &mut Vec<(Sig, Loc)>) {
    for s in stmts {
        match s {
            Stmt::Assign { target, loc, .. } => out.push((*target, *loc)),
            Stmt::If {
                branches,
                otherwise,
                ..
            } => {
                for (_, b) in branches {
                    stmts_targets(b, out);
                }
                if let Some(o) = otherwise {
                    stmts_targets(o, out);
                }
            }
            Stmt::Case { arms, default, .. } => {
                for (_, b) in arms {
                    stmts_targets(b, out);
                }
                if let Some(o) = default {
                    stmts_targets(o, out);
                }
            }
        }
    }
}

/// Signals assigned on every path through `stmts`.
fn definite(stmts: &[Stmt]) -> BTreeSet<u32> {
    let mut set = BTreeSet::new();
    for s in stmts {
        match s {
            Stmt::Assign { target, .. } => {
                set.insert(target.id);
            }
            Stmt::If {
                branches,
                otherwise,
                ..
            } => {
                if let Some(o) = otherwise {
                    let mut all = definite(o);
                    for (_, b) in branches {
                        let bd = definite(b);
                        all = all.intersection(&bd).copied().collect();
                    }
                    set.extend(all);
                }
            }
            Stmt::Case {
                sel, arms, default, ..
            } => {
                let labels: usize = arms.iter().map(|(l, _)| l.len()).sum();
                let full = sel.width() < 16 && labels as u64 >= 1u64 << sel.width();
                if default.is_some() || full {
                    let mut all: Option<BTreeSet<u32>> = default.as_ref().map(|d| definite(d));
                    for (_, b) in arms {
                        let bd = definite(b);
                        all = Some(match all {
                            None => bd,
                            Some(a) => a.intersection(&bd).copied().collect(),
                        });
                    }
                    set.extend(all.unwrap_or_default());
                }
            }
        }
    }
    set
}

/// Walks statements: checks widths, collects reads, and records each target's dependencies.
fn walk_stmts(
    ctx: &mut Ctx,
    stmts: &[Stmt],
    ctrl: &BTreeSet<u32>,
    deps: &mut BTreeMap<u32, BTreeSet<u32>>,
) {
    for s in stmts {
        match s {
            Stmt::Assign { target, value, loc } => {
                ctx.assign(*target, value, *loc);
                let mut r = ctrl.clone();
                ctx.expr(value, &mut r);
                deps.entry(target.id).or_default().extend(r);
            }
            Stmt::If {
                branches,
                otherwise,
                ..
            } => {
                let mut c = ctrl.clone();
                for (cond, body) in branches {
                    ctx.cond(cond, &mut c, "`if` condition");
                    walk_stmts(ctx, body, &c, deps);
                }
                if let Some(o) = otherwise {
                    walk_stmts(ctx, o, &c, deps);
                }
            }
            Stmt::Case {
                sel,
                arms,
                default,
                loc,
            } => {
                let mut c = ctrl.clone();
                ctx.expr(sel, &mut c);
                let mut seen_labels: Vec<(u128, bool)> = Vec::new();
                for l in arms.iter().flat_map(|a| a.0.iter()) {
                    let key = match l.kind() {
                        Kind::Const(v) => (*v, false),
                        Kind::EnumItem(i) => (*i as u128, true),
                        _ => continue,
                    };
                    if seen_labels.contains(&key) {
                        ctx.err(
                            ErrorKind::Invalid,
                            None,
                            l.loc(),
                            "this case label repeats an earlier one; each value gets one arm"
                                .into(),
                        );
                    }
                    seen_labels.push(key);
                }
                for (labels, body) in arms {
                    for l in labels {
                        ctx.expr(l, &mut c);
                        if l.width() != sel.width() {
                            ctx.err(
                                ErrorKind::Width,
                                None,
                                l.loc(),
                                format!(
                                    "width mismatch: case label is {} bits wide, the selector {}",
                                    l.width(),
                                    sel.width()
                                ),
                            );
                        }
                        if sel.0.enum_ty.is_some() && l.0.enum_ty != sel.0.enum_ty {
                            ctx.err(
                                ErrorKind::Width,
                                None,
                                *loc,
                                "the selector is an enum; label each arm with one of its items"
                                    .into(),
                            );
                        }
                    }
                    walk_stmts(ctx, body, &c, deps);
                }
                if let Some(o) = default {
                    walk_stmts(ctx, o, &c, deps);
                }
            }
        }
    }
}

/// Runs every check on `d`, appending to `errors`. Returns, for each port in port order, the
/// input port indices it depends on combinationally and the domains its value is launched
/// from (used when the module is instantiated).
pub(crate) fn check(
    d: &ModuleData,
    errors: &mut Vec<Error>,
) -> (Vec<Vec<usize>>, Vec<BTreeSet<Timing>>) {
    let mut ctx = Ctx {
        d,
        errors,
        used: d
            .signals
            .iter()
            .map(|s| vec![false; s.width as usize])
            .collect(),
    };
    check_names(&mut ctx);
    for s in &d.signals {
        if s.width == 0 {
            ctx.err(
                ErrorKind::Width,
                Some(s.name.clone()),
                s.loc,
                "zero-width signal; every signal needs at least one bit".into(),
            );
        }
    }

    // Drivers and combinational dependencies.
    let mut drivers: Vec<Vec<Driver>> = vec![Vec::new(); d.signals.len()];
    let mut deps: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    let mut latch_errors = Vec::new();
    for (idx, item) in d.items.iter().enumerate() {
        match item {
            Item::Assign { target, value, loc } => {
                ctx.assign(*target, value, *loc);
                let mut r = BTreeSet::new();
                ctx.expr(value, &mut r);
                if ctx.own(*target, *loc) {
                    deps.entry(target.id).or_default().extend(r);
                    drivers[target.id as usize].push(Driver {
                        loc: *loc,
                        source: (0, idx),
                    });
                }
            }
            Item::Tristate {
                target,
                oe,
                value,
                loc,
            } => {
                let mut r = BTreeSet::new();
                ctx.cond(oe, &mut r, "output enable");
                ctx.expr(value, &mut r);
                if ctx.own(*target, *loc) {
                    if d.sig(target.id).kind != SigKind::InOut {
                        let name = d.sig(target.id).name.clone();
                        ctx.err(
                            ErrorKind::DrivingInput,
                            Some(name.clone()),
                            *loc,
                            format!("`{name}` is not an inout port; only inout ports take a tristate driver"),
                        );
                    }
                    if target.width != value.width() {
                        let name = d.sig(target.id).name.clone();
                        ctx.err(
                            ErrorKind::Width,
                            Some(name.clone()),
                            *loc,
                            format!(
                                "width mismatch: a {}-bit value drives the {}-bit `{name}`",
                                value.width(),
                                target.width
                            ),
                        );
                    }
                    // No dependency: what the pin reads back is the wire, not this driver's
                    // logic, so reading it is no combinational path.
                    drivers[target.id as usize].push(Driver {
                        loc: *loc,
                        source: (0, idx),
                    });
                }
            }
            Item::Comb { stmts, loc } => {
                walk_stmts(&mut ctx, stmts, &BTreeSet::new(), &mut deps);
                let mut targets = Vec::new();
                stmts_targets(stmts, &mut targets);
                let sure = definite(stmts);
                let mut done = BTreeSet::new();
                for (t, tloc) in targets {
                    if t.module != d.id || !done.insert(t.id) {
                        continue;
                    }
                    drivers[t.id as usize].push(Driver {
                        loc: tloc,
                        source: (0, idx),
                    });
                    if !sure.contains(&t.id) {
                        latch_errors.push((t.id, *loc));
                    }
                }
            }
        }
    }
    for (t, loc) in latch_errors {
        let name = d.sig(t).name.clone();
        ctx.err(
            ErrorKind::Latch,
            Some(name.clone()),
            loc,
            format!(
                "`{name}` is not assigned on every path through this combinational block (a latch); give it a default at the top of the block"
            ),
        );
    }
    for r in &d.regs {
        if let Some(e) = &r.reset {
            let mut reads = BTreeSet::new();
            ctx.expr(e, &mut reads);
            let q = d.handle(r.q);
            ctx.assign(q, e, e.loc());
        }
        // The flip-flop reads all of d.
        let w = d.sig(r.d).width;
        ctx.mark(d.handle(r.d), w.saturating_sub(1), 0);
    }
    // Flip-flops read their domain's clock, and its reset when they have one; coverage points
    // (in the default domain) read both.
    for (k, dom) in d.domains.iter().enumerate() {
        let k = k as u32;
        let covered = k == 0 && !d.covers.is_empty();
        let clocked = covered
            || d.regs.iter().any(|r| r.dom == k)
            || d.mems
                .iter()
                .any(|m| m.dom == k || m.reads.iter().any(|r| r.dom == k));
        if let (Some(c), true) = (dom.clock, clocked) {
            ctx.mark(d.handle(c), 0, 0);
        }
        if let Some(r) = dom.reset {
            if covered || d.regs.iter().any(|r| r.dom == k && r.reset.is_some()) {
                ctx.mark(d.handle(r), 0, 0);
            }
        }
    }
    // Coverage points read their conditions (in simulation only; see `ModuleBuilder::cover`).
    for c in &d.covers {
        let mut reads = BTreeSet::new();
        ctx.cond(&c.cond, &mut reads, "cover condition");
    }
    for m in &d.mems {
        for w in &m.writes {
            let mut reads = BTreeSet::new();
            ctx.cond(&w.en, &mut reads, "memory write enable");
            ctx.expr(&w.addr, &mut reads);
            ctx.expr(&w.data, &mut reads);
            if w.addr.width() != m.addr_width {
                ctx.err(
                    ErrorKind::Width,
                    Some(m.name.clone()),
                    w.loc,
                    format!(
                        "width mismatch: write address is {} bits wide, memory `{}` needs {}",
                        w.addr.width(),
                        m.name,
                        m.addr_width
                    ),
                );
            }
            if w.data.width() != m.width {
                ctx.err(
                    ErrorKind::Width,
                    Some(m.name.clone()),
                    w.loc,
                    format!(
                        "width mismatch: write data is {} bits wide, memory `{}` holds {}-bit words",
                        w.data.width(),
                        m.name,
                        m.width
                    ),
                );
            }
        }
        for r in &m.reads {
            let mut reads = BTreeSet::new();
            ctx.cond(&r.en, &mut reads, "memory read enable");
            ctx.expr(&r.addr, &mut reads);
            if r.addr.width() != m.addr_width {
                ctx.err(
                    ErrorKind::Width,
                    Some(m.name.clone()),
                    r.addr.loc(),
                    format!(
                        "width mismatch: read address is {} bits wide, memory `{}` needs {}",
                        r.addr.width(),
                        m.name,
                        m.addr_width
                    ),
                );
            }
        }
        if m.writes.is_empty() {
            ctx.err(
                ErrorKind::Undriven,
                Some(m.name.clone()),
                m.loc,
                format!("memory `{}` has no write port", m.name),
            );
        }
    }
    for (ii, inst) in d.insts.iter().enumerate() {
        let child = &inst.module;
        let cports = child.data.port_ids();
        let mut in_reads: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); cports.len()];
        for (pi, &pid) in cports.iter().enumerate() {
            let p = child.data.sig(pid);
            match &inst.binds[pi] {
                None if p.kind == SigKind::Input => ctx.err(
                    ErrorKind::UnconnectedInput,
                    Some(inst.name.clone()),
                    inst.loc,
                    format!(
                        "input `{}` of instance `{}` (module `{}`) is not connected; bind it",
                        p.name,
                        inst.name,
                        child.name()
                    ),
                ),
                None => {}
                Some((Bind::In(e), loc)) => {
                    ctx.expr(e, &mut in_reads[pi]);
                    if e.width() != p.width {
                        ctx.err(
                            ErrorKind::PortMismatch,
                            Some(inst.name.clone()),
                            *loc,
                            format!(
                                "width mismatch: port `{}` of `{}` is {} bits wide, the value bound to it {}",
                                p.name,
                                child.name(),
                                p.width,
                                e.width()
                            ),
                        );
                    }
                }
                Some((Bind::Out(t), loc)) => {
                    let owned = ctx.own(*t, *loc);
                    if owned {
                        if t.width != p.width {
                            ctx.err(
                                ErrorKind::PortMismatch,
                                Some(inst.name.clone()),
                                *loc,
                                format!(
                                    "width mismatch: port `{}` of `{}` is {} bits wide, `{}` {}",
                                    p.name,
                                    child.name(),
                                    p.width,
                                    d.sig(t.id).name,
                                    t.width
                                ),
                            );
                        }
                        drivers[t.id as usize].push(Driver {
                            loc: *loc,
                            source: (1, ii),
                        });
                        if p.kind == SigKind::InOut {
                            // The child reads the pin as well as driving it.
                            ctx.mark(*t, t.width.saturating_sub(1), 0);
                        }
                    }
                }
            }
        }
        for (pi, _) in cports.iter().enumerate() {
            if let Some((Bind::Out(t), _)) = &inst.binds[pi] {
                if t.module != d.id {
                    continue;
                }
                let e = deps.entry(t.id).or_default();
                for &ip in &child.comb_inputs[pi] {
                    e.extend(in_reads[ip].iter().copied());
                }
            }
        }
    }

    // Single driver rule; nothing drives what is driven from elsewhere.
    for (i, s) in d.signals.iter().enumerate() {
        let dr = &drivers[i];
        match s.kind {
            SigKind::Input | SigKind::RegQ(_) | SigKind::MemRead(_) => {
                if let Some(first) = dr.first() {
                    let why = match s.kind {
                        SigKind::Input => format!(
                            "`{}` is an input port; it is driven from outside the module",
                            s.name
                        ),
                        SigKind::RegQ(r) => format!(
                            "`{}` is a register's current value; drive its next value `{}` instead",
                            s.name,
                            d.sig(d.regs[r as usize].d).name
                        ),
                        _ => format!(
                            "`{}` is a memory's read data; only the memory drives it",
                            s.name
                        ),
                    };
                    ctx.err(
                        ErrorKind::DrivingInput,
                        Some(s.name.clone()),
                        first.loc,
                        why,
                    );
                }
            }
            SigKind::InOut => {
                if let Some(second) = dr.get(1) {
                    ctx.err(
                        ErrorKind::MultiplyDriven,
                        Some(s.name.clone()),
                        second.loc,
                        format!(
                            "inout `{}` has more than one driver (the first at {}:{}); drive it from one tristate or one instance",
                            s.name,
                            dr[0].loc.file(),
                            dr[0].loc.line()
                        ),
                    );
                }
            }
            SigKind::Output | SigKind::Wire | SigKind::RegD(_) => {
                if dr.is_empty() {
                    ctx.err(
                        ErrorKind::Undriven,
                        Some(s.name.clone()),
                        s.loc,
                        format!(
                            "`{}` is never driven; assign it or set it in a combinational block",
                            s.name
                        ),
                    );
                } else if let Some(second) = dr.iter().find(|x| x.source != dr[0].source) {
                    ctx.err(
                        ErrorKind::MultiplyDriven,
                        Some(s.name.clone()),
                        second.loc,
                        format!(
                            "`{}` has more than one driver (the first at {}:{}); drive a signal from one assign or one combinational block",
                            s.name,
                            dr[0].loc.file(),
                            dr[0].loc.line()
                        ),
                    );
                }
            }
        }
    }

    // Unused bits (Verilator -Wall would warn); outputs and `unused_*` sinks are exempt.
    for (i, s) in d.signals.iter().enumerate() {
        if s.kind == SigKind::Output || s.name.contains("unused") {
            continue;
        }
        let u = &ctx.used[i];
        if u.iter().all(|b| *b) {
            continue;
        }
        let ranges = unused_ranges(u);
        let what = if u.iter().all(|b| !*b) {
            format!("`{}` is never read; use it", s.name)
        } else {
            format!("bits {} of `{}` are never read; use them", ranges, s.name)
        };
        ctx.err(
            ErrorKind::Unused,
            Some(s.name.clone()),
            s.loc,
            format!("{what} or mark them with `ModuleBuilder::unused`"),
        );
    }

    // Combinational loops.
    let first_loc = |id: u32| drivers[id as usize].first().map(|x| x.loc);
    if let Some(mut cycle) = find_cycle(&deps, d.signals.len()) {
        // Start the report at the loop's first-declared signal, so it reads in source order.
        let first = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
        cycle.rotate_left(first);
        let names: Vec<&str> = cycle.iter().map(|&i| d.sig(i).name.as_str()).collect();
        let loc = first_loc(cycle[0]).unwrap_or(d.sig(cycle[0]).loc);
        ctx.err(
            ErrorKind::CombLoop,
            Some(names[0].to_string()),
            loc,
            format!(
                "combinational loop: {} -> {}; break it with a register",
                names.join(" -> "),
                names[0]
            ),
        );
    }

    // Clock domains: where every value is launched, and the crossings nothing declared.
    let launch = check_domains(&mut ctx, &deps, &drivers);

    // Port-to-port combinational paths, for parents that instantiate this module.
    let ports = d.port_ids();
    let input_pos: HashMap<u32, usize> = ports
        .iter()
        .enumerate()
        .filter(|(_, &p)| d.sig(p).kind == SigKind::Input)
        .map(|(i, &p)| (p, i))
        .collect();
    let comb = ports
        .iter()
        .map(|&p| {
            if d.sig(p).kind != SigKind::Output {
                return Vec::new();
            }
            let mut seen = BTreeSet::new();
            let mut stack = vec![p];
            let mut found = BTreeSet::new();
            while let Some(n) = stack.pop() {
                if !seen.insert(n) {
                    continue;
                }
                if let Some(&ip) = input_pos.get(&n) {
                    found.insert(ip);
                }
                if let Some(ds) = deps.get(&n) {
                    stack.extend(ds.iter().copied());
                }
            }
            found.into_iter().collect()
        })
        .collect();
    (comb, launch)
}

/// The signals an expression reads, without checking anything.
fn expr_reads(e: &Expr, out: &mut BTreeSet<u32>) {
    match e.kind() {
        Kind::Sig(s) => {
            out.insert(s.id);
        }
        Kind::Const(_) | Kind::Ones | Kind::EnumItem(_) => {}
        Kind::Not(a)
        | Kind::Reduce(_, a)
        | Kind::ShiftConst(_, a, _)
        | Kind::Slice(a, ..)
        | Kind::Repeat(a, _)
        | Kind::Zext(a) => expr_reads(a, out),
        Kind::Bin(_, a, b) | Kind::Cmp(_, a, b) | Kind::Shift(_, a, b) => {
            expr_reads(a, out);
            expr_reads(b, out);
        }
        Kind::Concat(parts) => parts.iter().for_each(|p| expr_reads(p, out)),
        Kind::Mux(c, a, b) => {
            expr_reads(c, out);
            expr_reads(a, out);
            expr_reads(b, out);
        }
    }
}

/// Where values come from: for each signal, the timings of the launch points it reads
/// combinationally, each with one signal that brings it (for the message).
struct Sources<'a> {
    d: &'a ModuleData,
    deps: &'a BTreeMap<u32, BTreeSet<u32>>,
    /// Wires driven by instance outputs: the parent timings of the child's launch points.
    inst_out: HashMap<u32, BTreeSet<Timing>>,
    /// Read port data signal -> its domain.
    mem_read: HashMap<u32, u32>,
    /// Count input ports as launch points (false: only what is launched inside the module).
    with_inputs: bool,
    memo: HashMap<u32, BTreeMap<Timing, u32>>,
    visiting: BTreeSet<u32>,
}

impl Sources<'_> {
    fn of(&mut self, id: u32) -> BTreeMap<Timing, u32> {
        if let Some(m) = self.memo.get(&id) {
            return m.clone();
        }
        if !self.visiting.insert(id) {
            return BTreeMap::new(); // a loop, reported elsewhere
        }
        let s = self.d.sig(id);
        let mut out: BTreeMap<Timing, u32> = BTreeMap::new();
        match s.kind {
            SigKind::Input => {
                if self.with_inputs && s.role != Role::Clock {
                    out.insert(s.timing, id);
                }
            }
            SigKind::RegQ(r) => {
                out.insert(Timing::Domain(self.d.regs[r as usize].dom), id);
            }
            SigKind::MemRead(_) => {
                if let Some(&k) = self.mem_read.get(&id) {
                    out.insert(Timing::Domain(k), id);
                }
            }
            SigKind::InOut => {
                out.insert(Timing::Async, id);
            }
            SigKind::Output | SigKind::Wire | SigKind::RegD(_) => {}
        }
        if let Some(ts) = self.inst_out.get(&id) {
            for t in ts {
                out.entry(*t).or_insert(id);
            }
        }
        // A domain's clock and reset, when they are this module's own signals, are not data.
        let clocks: BTreeSet<u32> = self.d.domains.iter().filter_map(|d| d.clock).collect();
        let deps: Vec<u32> = self
            .deps
            .get(&id)
            .map(|x| x.iter().copied().collect())
            .unwrap_or_default();
        for dep in deps {
            if clocks.contains(&dep) {
                continue;
            }
            for (t, origin) in self.of(dep) {
                out.entry(t).or_insert(origin);
            }
        }
        self.visiting.remove(&id);
        self.memo.insert(id, out.clone());
        out
    }
}

fn domain_desc(d: &ModuleData, k: u32) -> String {
    let dom = &d.domains[k as usize];
    let Some(c) = dom.clock else {
        return format!(
            "{} (which has no clock here: declare the input with `input_in` for the domain that launches it, or `input_async`)",
            if dom.name.is_empty() { "the default domain".to_string() } else { format!("domain `{}`", dom.name) }
        );
    };
    let clock = d.sig(c).name.clone();
    if dom.name.is_empty() {
        format!("the default domain (clock `{clock}`)")
    } else {
        format!("domain `{}` (clock `{clock}`)", dom.name)
    }
}

fn timing_desc(d: &ModuleData, t: Timing) -> String {
    match t {
        Timing::Domain(k) => domain_desc(d, k),
        Timing::Async => "no clock domain (asynchronous)".into(),
        Timing::Crossing => "a declared crossing (a synchronizer's input)".into(),
    }
}

const CROSSING_HINT: &str = "a value crossing clock domains must go through a synchronizer block (`sync_2ff` for a level or a gray-coded value, `reset_sync` for a reset, `async_fifo` for a stream), whose input is a declared crossing";

/// Checks that every register, memory port and instance input takes values of its own domain
/// only, and returns each port's launch timings (for parents).
fn check_domains(
    ctx: &mut Ctx,
    deps: &BTreeMap<u32, BTreeSet<u32>>,
    drivers: &[Vec<Driver>],
) -> Vec<BTreeSet<Timing>> {
    let d = ctx.d;
    let mut inst_out: HashMap<u32, BTreeSet<Timing>> = HashMap::new();
    for inst in &d.insts {
        let child = &inst.module;
        for (pi, _) in child.data.port_ids().iter().enumerate() {
            if let Some((Bind::Out(t), _)) = &inst.binds[pi] {
                if t.module != d.id {
                    continue;
                }
                let e = inst_out.entry(t.id).or_default();
                for lt in &child.launch[pi] {
                    e.insert(match lt {
                        Timing::Domain(k) => match inst.dom_binds.get(*k as usize) {
                            Some(Some((p, _))) => Timing::Domain(*p),
                            _ => Timing::Async,
                        },
                        other => *other,
                    });
                }
            }
        }
    }
    let mem_read: HashMap<u32, u32> = d
        .mems
        .iter()
        .flat_map(|m| m.reads.iter().map(|r| (r.data, r.dom)))
        .collect();
    let mut src = Sources {
        d,
        deps,
        inst_out: inst_out.clone(),
        mem_read: mem_read.clone(),
        with_inputs: true,
        memo: HashMap::new(),
        visiting: BTreeSet::new(),
    };
    let mut errs: Vec<(String, Loc, String)> = Vec::new();
    let wrong = |src: &mut Sources, reads: &BTreeSet<u32>, k: u32| -> Option<(Timing, u32)> {
        for &r in reads {
            for (t, origin) in src.of(r) {
                match t {
                    Timing::Domain(j) if j == k => {}
                    Timing::Crossing => {}
                    _ => return Some((t, origin)),
                }
            }
        }
        None
    };
    for r in &d.regs {
        let reads: BTreeSet<u32> = [r.d].into_iter().collect();
        if let Some((t, origin)) = wrong(&mut src, &reads, r.dom) {
            let q = d.sig(r.q).name.clone();
            let loc = drivers[r.d as usize]
                .first()
                .map_or(d.sig(r.q).loc, |x| x.loc);
            errs.push((
                q.clone(),
                loc,
                format!(
                    "register `{q}` of {} is fed combinationally from `{}`, of {}; {CROSSING_HINT}",
                    domain_desc(d, r.dom),
                    d.sig(origin).name,
                    timing_desc(d, t)
                ),
            ));
        }
    }
    for m in &d.mems {
        for w in &m.writes {
            let mut reads = BTreeSet::new();
            expr_reads(&w.en, &mut reads);
            expr_reads(&w.addr, &mut reads);
            expr_reads(&w.data, &mut reads);
            if let Some((t, origin)) = wrong(&mut src, &reads, m.dom) {
                errs.push((
                    m.name.clone(),
                    w.loc,
                    format!(
                        "a write port of memory `{}` ({}) takes `{}`, of {}; {CROSSING_HINT}",
                        m.name,
                        domain_desc(d, m.dom),
                        d.sig(origin).name,
                        timing_desc(d, t)
                    ),
                ));
            }
        }
        for r in &m.reads {
            let mut reads = BTreeSet::new();
            expr_reads(&r.en, &mut reads);
            expr_reads(&r.addr, &mut reads);
            if let Some((t, origin)) = wrong(&mut src, &reads, r.dom) {
                errs.push((
                    m.name.clone(),
                    r.addr.loc(),
                    format!(
                        "a read port of memory `{}` ({}) takes `{}`, of {}; {CROSSING_HINT}",
                        m.name,
                        domain_desc(d, r.dom),
                        d.sig(origin).name,
                        timing_desc(d, t)
                    ),
                ));
            }
        }
    }
    for inst in &d.insts {
        let child = &inst.module;
        for (pi, &pid) in child.data.port_ids().iter().enumerate() {
            let p = child.data.sig(pid);
            let Timing::Domain(k) = p.timing else {
                continue; // asynchronous or a declared crossing: anything may feed it
            };
            let cd = &child.data.domains[k as usize];
            if p.role != Role::Normal || cd.internal || cd.clock.is_none() {
                continue;
            }
            let (Some(Some((pk, _))), Some((Bind::In(e), loc))) =
                (inst.dom_binds.get(k as usize), &inst.binds[pi])
            else {
                continue;
            };
            let mut reads = BTreeSet::new();
            expr_reads(e, &mut reads);
            if let Some((t, origin)) = wrong(&mut src, &reads, *pk) {
                errs.push((
                    inst.name.clone(),
                    *loc,
                    format!(
                        "input `{}` of instance `{}` belongs to {} of this module, but is fed from `{}`, of {}; {CROSSING_HINT}",
                        p.name,
                        inst.name,
                        domain_desc(d, *pk),
                        d.sig(origin).name,
                        timing_desc(d, t)
                    ),
                ));
            }
        }
    }
    if !d.is_model {
        for (signal, loc, message) in errs {
            ctx.err(ErrorKind::ClockCrossing, Some(signal), loc, message);
        }
    }
    let mut launch_src = Sources {
        d,
        deps,
        inst_out,
        mem_read,
        with_inputs: false,
        memo: HashMap::new(),
        visiting: BTreeSet::new(),
    };
    d.port_ids()
        .iter()
        .map(|&p| {
            if d.sig(p).kind != SigKind::Output {
                return BTreeSet::new();
            }
            launch_src
                .of(p)
                .into_keys()
                .map(|t| match t {
                    Timing::Domain(k) if d.domains[k as usize].internal => Timing::Async,
                    other => other,
                })
                .collect()
        })
        .collect()
}

fn unused_ranges(used: &[bool]) -> String {
    let mut out = Vec::new();
    let mut i = used.len();
    while i > 0 {
        i -= 1;
        if used[i] {
            continue;
        }
        let hi = i;
        while i > 0 && !used[i - 1] {
            i -= 1;
        }
        out.push(if hi == i {
            format!("[{hi}]")
        } else {
            format!("[{hi}:{i}]")
        });
    }
    out.join(", ")
}

/// Finds one cycle in the dependency graph (edges: dependency -> target).
fn find_cycle(deps: &BTreeMap<u32, BTreeSet<u32>>, n: usize) -> Option<Vec<u32>> {
    // Walk target -> dependency; a back edge closes a loop.
    let mut color = vec![0u8; n];
    for start in deps.keys().copied() {
        if color[start as usize] != 0 {
            continue;
        }
        let mut stack: Vec<(u32, Vec<u32>, usize)> = Vec::new();
        let succ = |v: u32| -> Vec<u32> {
            deps.get(&v)
                .map(|s| s.iter().copied().collect())
                .unwrap_or_default()
        };
        color[start as usize] = 1;
        stack.push((start, succ(start), 0));
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let next = top.1[top.2];
                top.2 += 1;
                match color[next as usize] {
                    0 => {
                        color[next as usize] = 1;
                        let s = succ(next);
                        stack.push((next, s, 0));
                    }
                    1 => {
                        // The loop is the stack from `next` to the top, reversed into signal flow.
                        let pos = stack.iter().position(|f| f.0 == next).unwrap_or(0);
                        let mut cyc: Vec<u32> = stack[pos..].iter().map(|f| f.0).collect();
                        cyc.reverse();
                        let k = cyc.iter().position(|&x| x == next).unwrap_or(0);
                        cyc.rotate_left(k);
                        return Some(cyc);
                    }
                    _ => {}
                }
            } else {
                color[top.0 as usize] = 2;
                stack.pop();
            }
        }
    }
    None
}
