//! The SystemVerilog emitter: one module per file, lowRISC style, deterministic output.

use crate::expr::{BinOp, CmpOp, Expr, Kind, RedOp, ShiftOp};
use crate::module::{Bind, Item, Module, ModuleData, ParamValue, ResetStyle, SigKind, Stmt};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write;

const IND: &str = "  ";

fn vec_type(width: u32) -> String {
    if width == 1 {
        "logic".to_string()
    } else {
        format!("logic [{}:0]", width - 1)
    }
}

/// A sized literal in the most readable base.
pub(crate) fn literal(width: u32, v: u128) -> String {
    if width == 1 {
        format!("1'b{v}")
    } else if v < 10 || width < 4 {
        format!("{width}'d{v}")
    } else {
        format!("{width}'h{v:x}")
    }
}

fn ones_literal(width: u32) -> String {
    if width == 1 {
        "1'b1".into()
    } else if width <= 128 {
        let v = if width == 128 {
            u128::MAX
        } else {
            (1u128 << width) - 1
        };
        format!("{width}'h{v:x}")
    } else {
        format!("{{{width}{{1'b1}}}}")
    }
}

/// Precedence class of an expression's top node; higher binds tighter.
fn prec(e: &Expr) -> u8 {
    match e.kind() {
        Kind::Sig(_)
        | Kind::Const(_)
        | Kind::Ones
        | Kind::EnumItem(_)
        | Kind::Slice(..)
        | Kind::Concat(_)
        | Kind::Repeat(..)
        | Kind::Zext(_) => 100,
        Kind::Not(_) | Kind::Reduce(..) => 90,
        Kind::Bin(..) | Kind::Cmp(..) | Kind::Shift(..) | Kind::ShiftConst(..) => 50,
        Kind::Mux(..) => 10,
    }
}

/// The select every mutant of a schemata module reads (see [`mutant_schemata`]).
pub const MUTANT_SELECT: &str = "mutant_sel";

/// One place a mutant can go in a module's emitted text: an expression with one change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MutationSite {
    /// Its number among the module's sites, from 0, in emission order (stable while the
    /// generator and the configuration are).
    pub index: u32,
    /// The change: `` `a + b` -> `a - b` `` (the operands elided when long).
    pub what: String,
    /// The generator's line that built the expression (`hdl-gen/src/dma/mover.rs:120`; a
    /// generator marked `#[track_caller]` passes its caller's line instead).
    pub loc: String,
    /// The original expression's whole text, as the module's file has it (to find its line).
    pub original: String,
}

/// Mutation state of one emission: sites are numbered as the writer meets them.
struct Mutation {
    next: u32,
    sites: Vec<MutationSite>,
    /// Site index -> mutant number (what `mutant_sel` must hold to run it).
    plan: BTreeMap<u32, u32>,
    /// Counting suspended: inside a mutant's own text, a case label, a cover point.
    off: bool,
}

struct ExprWriter<'a> {
    d: &'a ModuleData,
    mutation: Option<&'a RefCell<Mutation>>,
}

/// Shortens an expression's text for a site's description.
fn brief(s: &str) -> String {
    if s.chars().count() <= 60 {
        s.to_string()
    } else {
        let head: String = s.chars().take(57).collect();
        format!("{head}...")
    }
}

impl ExprWriter<'_> {
    /// The mutants of `e` itself (not of its operands), each with what it changes: an
    /// operator swapped, a comparison's bound moved by one, a constant off by one, a negation
    /// dropped, a multiplexer's arms swapped (its condition inverted), an FSM state confused
    /// with the next.
    fn mutants_of(&self, e: &Expr) -> Vec<(Expr, &'static str)> {
        let (w, loc) = (e.width(), e.loc());
        let make = |k: Kind| Expr::with_enum(k, w, loc, e.0.enum_ty);
        match e.kind() {
            Kind::Bin(op, a, b) => {
                let to = match op {
                    BinOp::And => BinOp::Or,
                    BinOp::Or => BinOp::And,
                    BinOp::Xor => BinOp::Or,
                    BinOp::Add => BinOp::Sub,
                    BinOp::Sub => BinOp::Add,
                    BinOp::Mul => return vec![],
                };
                vec![(
                    make(Kind::Bin(to, a.clone(), b.clone())),
                    "operator swapped",
                )]
            }
            Kind::Cmp(op, a, b) => {
                let to = match op {
                    CmpOp::Eq => CmpOp::Ne,
                    CmpOp::Ne => CmpOp::Eq,
                    CmpOp::Lt => CmpOp::Le,
                    CmpOp::Le => CmpOp::Lt,
                    CmpOp::Gt => CmpOp::Ge,
                    CmpOp::Ge => CmpOp::Gt,
                };
                vec![(
                    make(Kind::Cmp(to, a.clone(), b.clone())),
                    "comparison changed",
                )]
            }
            Kind::Const(v) if w == 1 => vec![(make(Kind::Const(v ^ 1)), "bit inverted")],
            Kind::Const(v) if w < 128 => {
                let max = (1u128 << w) - 1;
                let to = if *v == max { v - 1 } else { v + 1 };
                vec![(make(Kind::Const(to)), "constant off by one")]
            }
            Kind::Not(a) => vec![(a.clone(), "negation dropped")],
            Kind::Mux(c, a, b) => vec![(
                make(Kind::Mux(c.clone(), b.clone(), a.clone())),
                "condition inverted",
            )],
            Kind::EnumItem(i) => {
                let n =
                    e.0.enum_ty
                        .map_or(0, |(_, t)| self.d.enums[t as usize].items.len() as u32);
                if n > 1 {
                    vec![(make(Kind::EnumItem((i + 1) % n)), "state confused")]
                } else {
                    vec![]
                }
            }
            _ => vec![],
        }
    }

    /// Writes `e`; in a mutant schemata, with every planned mutant of it (and of `extra`,
    /// mutants the caller knows of: an `if` condition inverted, a bit stuck) behind the select.
    fn expr(&self, e: &Expr) -> String {
        self.expr_with(e, Vec::new())
    }

    fn expr_with(&self, e: &Expr, extra: Vec<(Expr, &'static str)>) -> String {
        let Some(m) = self.mutation.filter(|m| !m.borrow().off) else {
            return self.expr_plain(e);
        };
        let mut alts = self.mutants_of(e);
        alts.extend(extra);
        let first = m.borrow().next;
        m.borrow_mut().next += alts.len() as u32;
        let orig = self.expr_plain(e);
        let mut chosen = String::new();
        m.borrow_mut().off = true;
        for (k, (alt, why)) in alts.iter().enumerate() {
            let index = first + k as u32;
            let text = self.expr_plain(alt);
            let loc = e.loc();
            let mut mm = m.borrow_mut();
            mm.sites.push(MutationSite {
                index,
                what: format!("{why}: `{}` -> `{}`", brief(&orig), brief(&text)),
                loc: format!("{}:{}", loc.file(), loc.line()),
                original: orig.clone(),
            });
            if let Some(n) = mm.plan.get(&index) {
                chosen.push_str(&format!("({MUTANT_SELECT} == {n}) ? ({text}) : "));
            }
        }
        m.borrow_mut().off = false;
        if chosen.is_empty() {
            orig
        } else {
            format!("({chosen}({orig}))")
        }
    }

    /// Writes `e` with counting suspended (a case label, a cover point: no mutants there).
    fn expr_fixed(&self, e: &Expr) -> String {
        match self.mutation {
            Some(m) if !m.borrow().off => {
                m.borrow_mut().off = true;
                let s = self.expr_plain(e);
                m.borrow_mut().off = false;
                s
            }
            _ => self.expr_plain(e),
        }
    }

    /// A one-bit condition with its inversion as an extra mutant (unless a comparison's or a
    /// negation's own mutant is already that).
    fn cond(&self, c: &Expr) -> String {
        let inverted = matches!(
            c.kind(),
            Kind::Not(_) | Kind::Cmp(CmpOp::Eq | CmpOp::Ne, ..)
        );
        if inverted || c.width() != 1 {
            return self.expr(c);
        }
        let not = Expr::new(Kind::Not(c.clone()), 1, c.loc());
        self.expr_with(c, vec![(not, "condition inverted")])
    }

    /// A one-bit continuous assignment's value with stuck-at-0 and stuck-at-1 as extra mutants.
    fn stuck(&self, v: &Expr) -> String {
        if v.width() != 1 || matches!(v.kind(), Kind::Const(_) | Kind::Ones) {
            return self.expr(v);
        }
        let (z, o) = (
            Expr::new(Kind::Const(0), 1, v.loc()),
            Expr::new(Kind::Const(1), 1, v.loc()),
        );
        self.expr_with(v, vec![(z, "stuck at 0"), (o, "stuck at 1")])
    }
    fn enum_item(&self, e: &Expr, i: u32) -> String {
        match e.0.enum_ty {
            Some((_, t)) => self.d.enums[t as usize].items[i as usize].clone(),
            None => literal(e.width(), i as u128),
        }
    }

    /// Writes `e` as an operand: atoms and `~x` bare; a reduction bare only under a unary
    /// operator (`a | (|b)` reads better than `a | |b`); a chain of one associative operator
    /// without brackets on its left; anything else in brackets.
    fn operand(&self, e: &Expr, same_op: Option<BinOp>, under_unary: bool) -> String {
        if let (Kind::Bin(op, ..), Some(p)) = (e.kind(), same_op) {
            if *op == p && matches!(p, BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Add) {
                return self.expr(e);
            }
        }
        let bare = match e.kind() {
            Kind::Not(_) => true,
            Kind::Reduce(..) => under_unary,
            // A size cast after a unary operator: Yosys reads `~1'(x)` as a cast to ~1 bits.
            Kind::Slice(a, ..) if under_unary && !matches!(a.kind(), Kind::Sig(_)) => false,
            _ => prec(e) >= 100,
        };
        if bare {
            self.expr(e)
        } else {
            format!("({})", self.expr(e))
        }
    }

    fn expr_plain(&self, e: &Expr) -> String {
        match e.kind() {
            Kind::Sig(s) => self.d.sig(s.id).name.clone(),
            Kind::Const(v) => literal(e.width(), *v),
            Kind::Ones => ones_literal(e.width()),
            Kind::EnumItem(i) => self.enum_item(e, *i),
            Kind::Not(a) => format!("~{}", self.operand(a, None, true)),
            Kind::Reduce(op, a) => {
                let sym = match op {
                    RedOp::And => "&",
                    RedOp::Or => "|",
                    RedOp::Xor => "^",
                };
                format!("{sym}{}", self.operand(a, None, true))
            }
            Kind::Bin(op, a, b) => {
                let sym = match op {
                    BinOp::And => "&",
                    BinOp::Or => "|",
                    BinOp::Xor => "^",
                    BinOp::Add => "+",
                    BinOp::Sub => "-",
                    BinOp::Mul => "*",
                };
                format!(
                    "{} {sym} {}",
                    self.operand(a, Some(*op), false),
                    self.operand(b, None, false)
                )
            }
            Kind::Cmp(op, a, b) => {
                let sym = match op {
                    CmpOp::Eq => "==",
                    CmpOp::Ne => "!=",
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                };
                format!(
                    "{} {sym} {}",
                    self.operand(a, None, false),
                    self.operand(b, None, false)
                )
            }
            Kind::Shift(op, a, b) => {
                let sym = if *op == ShiftOp::Left { "<<" } else { ">>" };
                format!(
                    "{} {sym} {}",
                    self.operand(a, None, false),
                    self.operand(b, None, false)
                )
            }
            Kind::ShiftConst(op, a, n) => {
                let sym = if *op == ShiftOp::Left { "<<" } else { ">>" };
                format!("{} {sym} {n}", self.operand(a, None, false))
            }
            Kind::Slice(a, hi, lo) => match a.kind() {
                Kind::Sig(_) if a.width() == 1 => self.expr(a),
                Kind::Sig(_) if hi == lo => format!("{}[{hi}]", self.expr(a)),
                Kind::Sig(_) => format!("{}[{hi}:{lo}]", self.expr(a)),
                // SystemVerilog cannot index an expression: shift and size-cast instead.
                _ if *lo == 0 => format!("{}'({})", e.width(), self.expr(a)),
                _ => format!("{}'({} >> {lo})", e.width(), self.operand(a, None, false)),
            },
            Kind::Concat(parts) => {
                let ps: Vec<String> = parts.iter().map(|p| self.expr(p)).collect();
                format!("{{{}}}", ps.join(", "))
            }
            Kind::Repeat(a, n) => format!("{{{n}{{{}}}}}", self.expr(a)),
            Kind::Mux(c, a, b) => format!(
                "{} ? {} : {}",
                self.operand(c, None, false),
                self.operand(a, None, false),
                self.operand(b, None, false)
            ),
            Kind::Zext(a) => {
                let pad = e.width() - a.width();
                format!("{{{}, {}}}", literal(pad, 0), self.expr(a))
            }
        }
    }
}

fn stmts(w: &ExprWriter, out: &mut String, body: &[Stmt], depth: usize) {
    let ind = IND.repeat(depth);
    for s in body {
        match s {
            Stmt::Assign { target, value, .. } => {
                let _ = writeln!(out, "{ind}{} = {};", w.d.sig(target.id).name, w.expr(value));
            }
            Stmt::If {
                branches,
                otherwise,
                ..
            } => {
                for (i, (c, b)) in branches.iter().enumerate() {
                    let kw = if i == 0 { "if" } else { "end else if" };
                    let _ = writeln!(out, "{ind}{kw} ({}) begin", w.cond(c));
                    stmts(w, out, b, depth + 1);
                }
                if let Some(o) = otherwise {
                    let _ = writeln!(out, "{ind}end else begin");
                    stmts(w, out, o, depth + 1);
                }
                let _ = writeln!(out, "{ind}end");
            }
            Stmt::Case {
                sel, arms, default, ..
            } => {
                let _ = writeln!(out, "{ind}case ({})", w.expr(sel));
                for (labels, b) in arms {
                    let ls: Vec<String> = labels.iter().map(|l| w.expr_fixed(l)).collect();
                    let _ = writeln!(out, "{ind}{IND}{}: begin", ls.join(", "));
                    stmts(w, out, b, depth + 2);
                    let _ = writeln!(out, "{ind}{IND}end");
                }
                match default {
                    Some(b) if !b.is_empty() => {
                        let _ = writeln!(out, "{ind}{IND}default: begin");
                        stmts(w, out, b, depth + 2);
                        let _ = writeln!(out, "{ind}{IND}end");
                    }
                    _ => {
                        let _ = writeln!(out, "{ind}{IND}default: ;");
                    }
                }
                let _ = writeln!(out, "{ind}endcase");
            }
        }
    }
}

/// The module's text without the file header: used for the file and for de-duplication.
pub(crate) fn module_body(m: &Module) -> String {
    module_text(m, None)
}

/// Every place a mutant can go in `m`'s text, in emission order (`testbench mutate` samples
/// them; [`mutant_schemata`] builds the chosen ones in).
pub fn mutation_sites(m: &Module) -> Vec<MutationSite> {
    let mu = RefCell::new(Mutation {
        next: 0,
        sites: Vec::new(),
        plan: BTreeMap::new(),
        off: false,
    });
    module_text(m, Some(&mu));
    let mut sites = mu.into_inner().sites;
    // Numbered as met, an expression before its operands; recorded after them.
    sites.sort_by_key(|s| s.index);
    sites
}

/// `m`'s text (without the file header) as a mutant schemata: each planned site (site index
/// -> mutant number) keeps the original expression beside the mutant's behind the select,
/// `((mutant_sel == 7) ? (a - b) : (a + b))`, and `mutant_sel` is read once at the start of
/// simulation from the testbench's DPI-C function `tb_mutant_sel` (`TB_MUTANT`; 0 runs the
/// design as emitted). For simulation only. An empty plan gives the plain text.
pub fn mutant_schemata(m: &Module, plan: &BTreeMap<u32, u32>) -> String {
    if plan.is_empty() {
        return module_body(m);
    }
    let mu = RefCell::new(Mutation {
        next: 0,
        sites: Vec::new(),
        plan: plan.clone(),
        off: false,
    });
    module_text(m, Some(&mu))
}

fn module_text(m: &Module, mutation: Option<&RefCell<Mutation>>) -> String {
    let d = &m.data;
    let w = ExprWriter { d, mutation };
    let mut out = String::new();
    for line in &d.doc {
        if line.is_empty() {
            out.push_str("//\n");
        } else {
            let _ = writeln!(out, "// {line}");
        }
    }
    if !d.doc.is_empty() {
        out.push('\n');
    }

    // Port list.
    let ports = d.port_ids();
    let params = if d.params.is_empty() {
        String::new()
    } else {
        // Only behavioural models of vendor primitives carry parameters.
        let mut t = String::from(" #(\n");
        let nw = d.params.iter().map(|p| p.0.len()).max().unwrap_or(0);
        for (i, (n, v)) in d.params.iter().enumerate() {
            // `parameter string` is beyond Yosys 0.23; a string parameter takes its type from
            // its value.
            let ty = match v {
                ParamValue::Int(_) => "integer ",
                ParamValue::Str(_) => "",
            };
            let comma = if i + 1 < d.params.len() { "," } else { "" };
            let _ = writeln!(t, "{IND}parameter {ty}{n:nw$} = {}{comma}", v.sv());
        }
        t.push(')');
        t
    };
    if ports.is_empty() {
        let _ = writeln!(out, "module {}{params} ();", d.name);
    } else {
        let _ = writeln!(out, "module {}{params} (", d.name);
        let types: Vec<String> = ports
            .iter()
            .map(|&p| {
                let s = d.sig(p);
                if s.kind == SigKind::InOut {
                    vec_type(s.width).replacen("logic", "wire", 1)
                } else {
                    vec_type(s.width)
                }
            })
            .collect();
        let tw = types.iter().map(String::len).max().unwrap_or(0);
        // Trailing comments line up one column past the longest port line.
        let cw = ports
            .iter()
            .map(|&p| d.sig(p).name.len())
            .max()
            .unwrap_or(0)
            + 1;
        let mut group: Option<&str> = None;
        for (i, &p) in ports.iter().enumerate() {
            let s = d.sig(p);
            if s.group.as_deref() != group && s.group.is_some() {
                if i > 0 {
                    out.push('\n');
                }
                let _ = writeln!(out, "{IND}// {}", s.group.as_deref().unwrap_or(""));
            }
            group = s.group.as_deref().or(group);
            let dir = match s.kind {
                SigKind::Input => "input ",
                SigKind::InOut => "inout ",
                _ => "output",
            };
            let comma = if i + 1 < ports.len() { "," } else { "" };
            let mut line = format!("{IND}{dir} {:tw$} {}{comma}", types[i], s.name);
            if let Some(c) = &s.comment {
                let pad = cw + 1 - s.name.len() - comma.len();
                let _ = write!(line, "{:pad$}// {c}", "");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        let _ = writeln!(out, ");");
    }

    // Enum types.
    for e in &d.enums {
        out.push('\n');
        let _ = writeln!(out, "{IND}typedef enum {} {{", vec_type(e.width));
        let iw = e.items.iter().map(String::len).max().unwrap_or(0);
        for (i, item) in e.items.iter().enumerate() {
            let comma = if i + 1 < e.items.len() { "," } else { "" };
            let _ = writeln!(
                out,
                "{IND}{IND}{item:iw$} = {}{comma}",
                literal(e.width, i as u128)
            );
        }
        let _ = writeln!(out, "{IND}}} {};", e.name);
    }

    // Declarations.
    let locals: Vec<usize> = (0..d.signals.len())
        .filter(|&i| {
            !matches!(
                d.signals[i].kind,
                SigKind::Input | SigKind::Output | SigKind::InOut
            )
        })
        .collect();
    if !locals.is_empty() || !d.mems.is_empty() {
        out.push('\n');
        let types: Vec<String> = locals
            .iter()
            .map(|&i| {
                let s = &d.signals[i];
                match s.enum_ty {
                    Some(t) => d.enums[t as usize].name.clone(),
                    None => vec_type(s.width),
                }
            })
            .collect();
        let tw = types.iter().map(String::len).max().unwrap_or(0);
        let cw = locals
            .iter()
            .map(|&i| d.signals[i].name.len())
            .max()
            .unwrap_or(0);
        for (k, &i) in locals.iter().enumerate() {
            let s = &d.signals[i];
            let mut line = format!("{IND}{:tw$} {};", types[k], s.name);
            if let Some(c) = &s.comment {
                let pad = cw + 1 - s.name.len();
                let _ = write!(line, "{:pad$}// {c}", "");
            }
            let _ = writeln!(out, "{line}");
        }
        for m in &d.mems {
            let _ = writeln!(out, "{IND}{} {} [{}];", vec_type(m.width), m.name, m.depth);
        }
    }
    if mutation.is_some_and(|m| !m.borrow().plan.is_empty()) {
        out.push('\n');
        let _ = writeln!(
            out,
            "{IND}// Which mutant this simulation runs (0: none): TB_MUTANT, read once at start."
        );
        let _ = writeln!(out, "{IND}import \"DPI-C\" function int tb_mutant_sel();");
        let _ = writeln!(out, "{IND}int {MUTANT_SELECT};");
        let _ = writeln!(out, "{IND}initial {MUTANT_SELECT} = tb_mutant_sel();");
    }
    if !d.params.is_empty() {
        // A model reads every parameter, so lint sees none unused (the vendor's cell uses them).
        let terms: Vec<String> = d
            .params
            .iter()
            .map(|(n, v)| match v {
                ParamValue::Int(_) => format!("({n} != 0)"),
                ParamValue::Str(_) => format!("({n} != \"\")"),
            })
            .collect();
        out.push('\n');
        let _ = writeln!(
            out,
            "{IND}// Parameters the vendor's cell uses and this model does not."
        );
        let _ = writeln!(out, "{IND}logic unused_params;");
        let _ = writeln!(out, "{IND}assign unused_params = {};", terms.join(" ^ "));
    }

    // Instances.
    for inst in &d.insts {
        out.push('\n');
        let cports = inst.module.data.port_ids();
        for (n, v) in &inst.attrs {
            let _ = writeln!(out, "{IND}(* {n} = {v} *)");
        }
        if inst.params.is_empty() {
            let _ = writeln!(out, "{IND}{} {} (", inst.module.name(), inst.name);
        } else {
            let _ = writeln!(out, "{IND}{} #(", inst.module.name());
            let pw = inst.params.iter().map(|p| p.0.len()).max().unwrap_or(0);
            for (i, (n, v)) in inst.params.iter().enumerate() {
                let comma = if i + 1 < inst.params.len() { "," } else { "" };
                let _ = writeln!(out, "{IND}{IND}.{n:pw$} ({}){comma}", v.sv());
            }
            let _ = writeln!(out, "{IND}) {} (", inst.name);
        }
        let nw = cports
            .iter()
            .map(|&p| inst.module.data.sig(p).name.len())
            .max()
            .unwrap_or(0);
        for (i, &p) in cports.iter().enumerate() {
            let pname = &inst.module.data.sig(p).name;
            let val = match &inst.binds[i] {
                Some((Bind::In(e), _)) => w.expr(e),
                Some((Bind::Out(s), _)) => d.sig(s.id).name.clone(),
                None => String::new(),
            };
            let comma = if i + 1 < cports.len() { "," } else { "" };
            let _ = writeln!(out, "{IND}{IND}.{pname:nw$} ({val}){comma}");
        }
        let _ = writeln!(out, "{IND});");
    }

    // Combinational logic, in declaration order.
    let mut last_was_assign = false;
    for (i, item) in d.items.iter().enumerate() {
        match item {
            Item::Assign { target, value, .. } => {
                if i == 0 || !last_was_assign {
                    out.push('\n');
                }
                let _ = writeln!(
                    out,
                    "{IND}assign {} = {};",
                    d.sig(target.id).name,
                    if d.sig(target.id).name.starts_with("unused_") {
                        // Bits read only to keep lint quiet: a mutant there changes nothing.
                        w.expr_fixed(value)
                    } else {
                        w.stuck(value)
                    }
                );
                last_was_assign = true;
            }
            Item::Tristate {
                target, oe, value, ..
            } => {
                if i == 0 || !last_was_assign {
                    out.push('\n');
                }
                let _ = writeln!(
                    out,
                    "{IND}assign {} = {} ? {} : 'z;",
                    d.sig(target.id).name,
                    w.operand(oe, None, false),
                    w.operand(value, None, false)
                );
                last_was_assign = true;
            }
            Item::Comb { stmts: body, .. } => {
                out.push('\n');
                let _ = writeln!(out, "{IND}always_comb begin");
                stmts(&w, &mut out, body, 2);
                let _ = writeln!(out, "{IND}end");
                last_was_assign = false;
            }
        }
    }

    // Registers, one group per clock domain in declaration order.
    let name_of = |id: Option<u32>| id.map(|i| d.sig(i).name.clone()).unwrap_or_default();
    for (k, dom) in d.domains.iter().enumerate() {
        let k = k as u32;
        let clk = name_of(dom.clock);
        let rst = name_of(dom.reset);
        let with_reset: Vec<_> = d
            .regs
            .iter()
            .filter(|r| r.dom == k && r.reset.is_some())
            .collect();
        let without: Vec<_> = d
            .regs
            .iter()
            .filter(|r| r.dom == k && r.reset.is_none())
            .collect();
        if !with_reset.is_empty() {
            out.push('\n');
            let st = d.reset_style;
            let sens = match st {
                ResetStyle::AsyncLow => format!("posedge {clk} or negedge {rst}"),
                ResetStyle::AsyncHigh => format!("posedge {clk} or posedge {rst}"),
                ResetStyle::SyncLow | ResetStyle::SyncHigh => format!("posedge {clk}"),
            };
            let cond = if st.active_low() {
                format!("!{rst}")
            } else {
                rst.clone()
            };
            let _ = writeln!(out, "{IND}always_ff @({sens}) begin");
            let _ = writeln!(out, "{IND}{IND}if ({cond}) begin");
            for r in &with_reset {
                let q = d.sig(r.q);
                let reset = r.reset.as_ref().map(|e| w.expr(e)).unwrap_or_default();
                let _ = writeln!(out, "{IND}{IND}{IND}{} <= {reset};", q.name);
            }
            let _ = writeln!(out, "{IND}{IND}end else begin");
            for r in &with_reset {
                let _ = writeln!(
                    out,
                    "{IND}{IND}{IND}{} <= {};",
                    d.sig(r.q).name,
                    d.sig(r.d).name
                );
            }
            let _ = writeln!(out, "{IND}{IND}end");
            let _ = writeln!(out, "{IND}end");
        }
        if !without.is_empty() {
            out.push('\n');
            let _ = writeln!(out, "{IND}always_ff @(posedge {clk}) begin");
            for r in &without {
                let _ = writeln!(out, "{IND}{IND}{} <= {};", d.sig(r.q).name, d.sig(r.d).name);
            }
            let _ = writeln!(out, "{IND}end");
        }
    }

    // Memories: no reset, registered read, so FPGA tools infer block RAM. Read ports of
    // another domain than the writes get a process of their own (a dual-clock RAM).
    for m in &d.mems {
        out.push('\n');
        let _ = writeln!(
            out,
            "{IND}// memory `{}`: {} x {} bits, registered read",
            m.name, m.depth, m.width
        );
        let clk = name_of(d.domains[m.dom as usize].clock);
        let _ = writeln!(out, "{IND}always_ff @(posedge {clk}) begin");
        for wr in &m.writes {
            let _ = writeln!(out, "{IND}{IND}if ({}) begin", w.cond(&wr.en));
            let _ = writeln!(
                out,
                "{IND}{IND}{IND}{}[{}] <= {};",
                m.name,
                w.expr(&wr.addr),
                w.expr(&wr.data)
            );
            let _ = writeln!(out, "{IND}{IND}end");
        }
        let read = |out: &mut String, rd: &crate::module::MemReadPort| {
            let _ = writeln!(out, "{IND}{IND}if ({}) begin", w.expr(&rd.en));
            let _ = writeln!(
                out,
                "{IND}{IND}{IND}{} <= {}[{}];",
                d.sig(rd.data).name,
                m.name,
                w.expr(&rd.addr)
            );
            let _ = writeln!(out, "{IND}{IND}end");
        };
        for rd in m.reads.iter().filter(|r| r.dom == m.dom) {
            read(&mut out, rd);
        }
        let _ = writeln!(out, "{IND}end");
        for rd in m.reads.iter().filter(|r| r.dom != m.dom) {
            let clk = name_of(d.domains[rd.dom as usize].clock);
            let _ = writeln!(out, "{IND}always_ff @(posedge {clk}) begin");
            read(&mut out, rd);
            let _ = writeln!(out, "{IND}end");
        }
    }

    // Functional coverage points, last: simulation only.
    if !d.covers.is_empty() {
        // Coverage points live in the default domain: its clock, out of its reset.
        let clk = name_of(d.domains[0].clock);
        let active = match d.domains[0].reset {
            Some(r) if d.reset_style.active_low() => d.sig(r).name.clone(),
            Some(r) => format!("!{}", d.sig(r).name),
            None => "1'b1".to_string(),
        };
        out.push('\n');
        let _ = writeln!(
            out,
            "{IND}// Functional coverage: each point counts the clock edges, out of reset, at which"
        );
        let _ = writeln!(
            out,
            "{IND}// its condition holds (Verilator --coverage-user). Not for synthesis."
        );
        let _ = writeln!(out, "`ifndef SYNTHESIS");
        for c in &d.covers {
            let _ = writeln!(
                out,
                "{IND}cov_{}: cover property (@(posedge {clk}) {active} && ({}));",
                c.name,
                w.expr_fixed(&c.cond)
            );
        }
        let _ = writeln!(out, "`endif");
    }

    out.push('\n');
    let _ = writeln!(out, "endmodule");
    out
}
