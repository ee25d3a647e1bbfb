//! Expressions: width-carrying trees built with Rust operators and methods.
//!
//! Building an expression never fails; widths are checked when the module is finished, and each
//! error points at the Rust line that built the offending node (`#[track_caller]`). All arithmetic
//! is unsigned and wraps at the operand width, as in SystemVerilog with equal-width operands.

use crate::error::Loc;
use std::ops;
use std::panic::Location;
use std::rc::Rc;

/// A handle to a signal (port, wire, register output or input, memory read data) of one module.
///
/// Cheap to copy; use it anywhere an expression is expected.
///
/// `Sig` deliberately has no `PartialEq`: `a.eq(b)` builds a hardware comparison.
#[derive(Clone, Copy, Debug)]
pub struct Sig {
    pub(crate) module: u32,
    pub(crate) id: u32,
    pub(crate) width: u32,
    pub(crate) enum_ty: Option<u32>,
}

impl Sig {
    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }
}

/// A hardware expression with a width in bits.
#[derive(Clone, Debug)]
pub struct Expr(pub(crate) Rc<Node>);

#[derive(Debug)]
pub(crate) struct Node {
    pub kind: Kind,
    pub width: u32,
    pub loc: Loc,
    /// (module, enum index) when the value is of an enum type.
    pub enum_ty: Option<(u32, u32)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    And,
    Or,
    Xor,
    Add,
    Sub,
    Mul,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RedOp {
    And,
    Or,
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShiftOp {
    Left,
    Right,
}

#[derive(Debug)]
pub(crate) enum Kind {
    Sig(Sig),
    /// A constant; `width` is the node's width. Values wider than 128 bits only have low bits.
    Const(u128),
    /// All ones, any width.
    Ones,
    /// Item `index` of enum `(module, enum)`.
    EnumItem(u32),
    Not(Expr),
    Reduce(RedOp, Expr),
    Bin(BinOp, Expr, Expr),
    Cmp(CmpOp, Expr, Expr),
    Shift(ShiftOp, Expr, Expr),
    ShiftConst(ShiftOp, Expr, u32),
    Slice(Expr, u32, u32),
    Concat(Vec<Expr>),
    Repeat(Expr, u32),
    Mux(Expr, Expr, Expr),
    Zext(Expr),
}

impl Expr {
    pub(crate) fn new(kind: Kind, width: u32, loc: Loc) -> Expr {
        Expr(Rc::new(Node {
            kind,
            width,
            loc,
            enum_ty: None,
        }))
    }

    pub(crate) fn with_enum(kind: Kind, width: u32, loc: Loc, ty: Option<(u32, u32)>) -> Expr {
        Expr(Rc::new(Node {
            kind,
            width,
            loc,
            enum_ty: ty,
        }))
    }

    /// Width in bits.
    pub fn width(&self) -> u32 {
        self.0.width
    }

    pub(crate) fn loc(&self) -> Loc {
        self.0.loc
    }

    pub(crate) fn kind(&self) -> &Kind {
        &self.0.kind
    }
}

/// A sized constant: `lit(8, 0x5a)` is `8'h5a`.
#[track_caller]
pub fn lit(width: u32, value: u128) -> Expr {
    Expr::new(Kind::Const(value), width, Location::caller())
}

/// All bits one: `ones(8)` is `8'hff`.
#[track_caller]
pub fn ones(width: u32) -> Expr {
    Expr::new(Kind::Ones, width, Location::caller())
}

/// All bits zero.
#[track_caller]
pub fn zeros(width: u32) -> Expr {
    Expr::new(Kind::Const(0), width, Location::caller())
}

/// Concatenation, most significant part first (as in `{a, b}`).
#[track_caller]
pub fn cat<I, T>(parts: I) -> Expr
where
    I: IntoIterator<Item = T>,
    T: Into<Expr>,
{
    let parts: Vec<Expr> = parts.into_iter().map(Into::into).collect();
    let width = parts.iter().map(|p| p.width()).sum();
    Expr::new(Kind::Concat(parts), width, Location::caller())
}

/// `cond ? a : b`. `cond` must be one bit wide; `a` and `b` must have the same width.
#[track_caller]
pub fn mux(cond: impl Into<Expr>, a: impl Operand, b: impl Operand) -> Expr {
    let loc = Location::caller();
    let cond = cond.into();
    let (a, b) = pair(a, b, loc);
    let ty = a.0.enum_ty.or(b.0.enum_ty);
    let w = a.width().max(b.width());
    Expr::with_enum(Kind::Mux(cond, a, b), w, loc, ty)
}

/// Something that becomes an expression; integers take the width of the other side.
pub trait Operand {
    /// Turns `self` into an expression, sizing bare integers to `width`.
    fn to_expr(self, width: u32, loc: Loc) -> Expr;
    /// The width of `self` when it has one of its own (integers do not).
    fn own_width(&self) -> Option<u32>;
}

impl Operand for Expr {
    fn to_expr(self, _: u32, _: Loc) -> Expr {
        self
    }
    fn own_width(&self) -> Option<u32> {
        Some(self.width())
    }
}

impl Operand for &Expr {
    fn to_expr(self, _: u32, _: Loc) -> Expr {
        self.clone()
    }
    fn own_width(&self) -> Option<u32> {
        Some(self.width())
    }
}

impl Operand for Sig {
    fn to_expr(self, _: u32, loc: Loc) -> Expr {
        sig_expr(self, loc)
    }
    fn own_width(&self) -> Option<u32> {
        Some(self.width)
    }
}

impl Operand for &Sig {
    fn to_expr(self, _: u32, loc: Loc) -> Expr {
        sig_expr(*self, loc)
    }
    fn own_width(&self) -> Option<u32> {
        Some(self.width)
    }
}

impl Operand for u64 {
    fn to_expr(self, width: u32, loc: Loc) -> Expr {
        Expr::new(Kind::Const(self as u128), width, loc)
    }
    fn own_width(&self) -> Option<u32> {
        None
    }
}

impl Operand for bool {
    fn to_expr(self, _: u32, loc: Loc) -> Expr {
        Expr::new(Kind::Const(self as u128), 1, loc)
    }
    fn own_width(&self) -> Option<u32> {
        Some(1)
    }
}

pub(crate) fn sig_expr(s: Sig, loc: Loc) -> Expr {
    Expr::with_enum(Kind::Sig(s), s.width, loc, s.enum_ty.map(|t| (s.module, t)))
}

impl From<Sig> for Expr {
    #[track_caller]
    fn from(s: Sig) -> Expr {
        sig_expr(s, Location::caller())
    }
}

impl From<&Sig> for Expr {
    #[track_caller]
    fn from(s: &Sig) -> Expr {
        sig_expr(*s, Location::caller())
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

/// Sizes two operands against each other: an integer takes the width of the other side.
pub(crate) fn pair(a: impl Operand, b: impl Operand, loc: Loc) -> (Expr, Expr) {
    match (a.own_width(), b.own_width()) {
        (Some(wa), _) => {
            let a = a.to_expr(wa, loc);
            let b = b.to_expr(wa, loc);
            (a, b)
        }
        (None, Some(wb)) => (a.to_expr(wb, loc), b.to_expr(wb, loc)),
        // Two bare integers: size them to 64 bits; the width check will complain if that is wrong.
        (None, None) => (a.to_expr(64, loc), b.to_expr(64, loc)),
    }
}

/// Methods shared by [`Sig`] and [`Expr`]. Import with `use hdl_builder::prelude::*`.
pub trait Value: Sized {
    /// This value as an expression.
    #[track_caller]
    fn ex(&self) -> Expr;

    /// Bits `hi` down to `lo`, inclusive.
    #[track_caller]
    fn slice(&self, hi: u32, lo: u32) -> Expr {
        let loc = Location::caller();
        Expr::new(
            Kind::Slice(self.ex(), hi, lo),
            hi.saturating_sub(lo) + 1,
            loc,
        )
    }

    /// One bit.
    #[track_caller]
    fn bit(&self, i: u32) -> Expr {
        let loc = Location::caller();
        Expr::new(Kind::Slice(self.ex(), i, i), 1, loc)
    }

    /// Zero-extends to `width` bits (which must not be smaller than the value's width).
    #[track_caller]
    fn zext(&self, width: u32) -> Expr {
        let e = self.ex();
        if e.width() == width {
            return e;
        }
        Expr::new(Kind::Zext(e), width, Location::caller())
    }

    /// Keeps the low `width` bits, or zero-extends when `width` is larger.
    #[track_caller]
    fn resize(&self, width: u32) -> Expr {
        let e = self.ex();
        let loc = Location::caller();
        match e.width().cmp(&width) {
            std::cmp::Ordering::Equal => e,
            std::cmp::Ordering::Less => Expr::new(Kind::Zext(e), width, loc),
            std::cmp::Ordering::Greater => Expr::new(Kind::Slice(e, width - 1, 0), width, loc),
        }
    }

    /// `{n{self}}`.
    #[track_caller]
    fn repeat(&self, n: u32) -> Expr {
        let e = self.ex();
        let w = e.width() * n;
        Expr::new(Kind::Repeat(e, n), w, Location::caller())
    }

    /// Equality, one bit.
    #[track_caller]
    fn eq(&self, rhs: impl Operand) -> Expr {
        cmp(CmpOp::Eq, self.ex(), rhs, Location::caller())
    }
    /// Inequality, one bit.
    #[track_caller]
    fn ne(&self, rhs: impl Operand) -> Expr {
        cmp(CmpOp::Ne, self.ex(), rhs, Location::caller())
    }
    /// Unsigned less-than, one bit.
    #[track_caller]
    fn lt(&self, rhs: impl Operand) -> Expr {
        cmp(CmpOp::Lt, self.ex(), rhs, Location::caller())
    }
    /// Unsigned less-or-equal, one bit.
    #[track_caller]
    fn le(&self, rhs: impl Operand) -> Expr {
        cmp(CmpOp::Le, self.ex(), rhs, Location::caller())
    }
    /// Unsigned greater-than, one bit.
    #[track_caller]
    fn gt(&self, rhs: impl Operand) -> Expr {
        cmp(CmpOp::Gt, self.ex(), rhs, Location::caller())
    }
    /// Unsigned greater-or-equal, one bit.
    #[track_caller]
    fn ge(&self, rhs: impl Operand) -> Expr {
        cmp(CmpOp::Ge, self.ex(), rhs, Location::caller())
    }

    /// OR of all bits.
    #[track_caller]
    fn any(&self) -> Expr {
        Expr::new(Kind::Reduce(RedOp::Or, self.ex()), 1, Location::caller())
    }
    /// AND of all bits.
    #[track_caller]
    fn all(&self) -> Expr {
        Expr::new(Kind::Reduce(RedOp::And, self.ex()), 1, Location::caller())
    }
    /// XOR of all bits (parity).
    #[track_caller]
    fn parity(&self) -> Expr {
        Expr::new(Kind::Reduce(RedOp::Xor, self.ex()), 1, Location::caller())
    }

    /// Full-width unsigned product: the result is as wide as both operands together.
    #[track_caller]
    fn mul(&self, rhs: impl Operand) -> Expr {
        let loc = Location::caller();
        let a = self.ex();
        let b = rhs.to_expr(a.width(), loc);
        let w = a.width() + b.width();
        // Both operands are widened to the result width so no bits are lost.
        let a = Expr::new(Kind::Zext(a.clone()), w, loc);
        let b = Expr::new(Kind::Zext(b.clone()), w, loc);
        Expr::new(Kind::Bin(BinOp::Mul, a, b), w, loc)
    }

    /// Logical shift left by a signal amount; the width stays that of `self`.
    #[track_caller]
    fn shl_by(&self, amount: impl Into<Expr>) -> Expr {
        let e = self.ex();
        let w = e.width();
        Expr::new(
            Kind::Shift(ShiftOp::Left, e, amount.into()),
            w,
            Location::caller(),
        )
    }

    /// Logical shift right by a signal amount; the width stays that of `self`.
    #[track_caller]
    fn shr_by(&self, amount: impl Into<Expr>) -> Expr {
        let e = self.ex();
        let w = e.width();
        Expr::new(
            Kind::Shift(ShiftOp::Right, e, amount.into()),
            w,
            Location::caller(),
        )
    }
}

fn cmp(op: CmpOp, a: Expr, b: impl Operand, loc: Loc) -> Expr {
    let (a, b) = pair(a, b, loc);
    Expr::new(Kind::Cmp(op, a, b), 1, loc)
}

impl Value for Sig {
    #[track_caller]
    fn ex(&self) -> Expr {
        sig_expr(*self, Location::caller())
    }
}

impl Value for Expr {
    fn ex(&self) -> Expr {
        self.clone()
    }
}

fn bin(op: BinOp, a: impl Operand, b: impl Operand, loc: Loc) -> Expr {
    let (a, b) = pair(a, b, loc);
    let w = a.width().max(b.width());
    Expr::new(Kind::Bin(op, a, b), w, loc)
}

macro_rules! binops {
    ($lhs:ty) => {
        binops!(@one $lhs, Expr);
        binops!(@one $lhs, &Expr);
        binops!(@one $lhs, Sig);
        binops!(@one $lhs, u64);
        binops!(@one $lhs, bool);
    };
    (@one $lhs:ty, $rhs:ty) => {
        impl ops::BitAnd<$rhs> for $lhs {
            type Output = Expr;
            #[track_caller]
            fn bitand(self, rhs: $rhs) -> Expr {
                bin(BinOp::And, self, rhs, Location::caller())
            }
        }
        impl ops::BitOr<$rhs> for $lhs {
            type Output = Expr;
            #[track_caller]
            fn bitor(self, rhs: $rhs) -> Expr {
                bin(BinOp::Or, self, rhs, Location::caller())
            }
        }
        impl ops::BitXor<$rhs> for $lhs {
            type Output = Expr;
            #[track_caller]
            fn bitxor(self, rhs: $rhs) -> Expr {
                bin(BinOp::Xor, self, rhs, Location::caller())
            }
        }
        impl ops::Add<$rhs> for $lhs {
            type Output = Expr;
            #[track_caller]
            fn add(self, rhs: $rhs) -> Expr {
                bin(BinOp::Add, self, rhs, Location::caller())
            }
        }
        impl ops::Sub<$rhs> for $lhs {
            type Output = Expr;
            #[track_caller]
            fn sub(self, rhs: $rhs) -> Expr {
                bin(BinOp::Sub, self, rhs, Location::caller())
            }
        }
    };
}

binops!(Expr);
binops!(&Expr);
binops!(Sig);

macro_rules! unops {
    ($t:ty) => {
        impl ops::Not for $t {
            type Output = Expr;
            #[track_caller]
            fn not(self) -> Expr {
                let loc = Location::caller();
                let e = self.to_expr(0, loc);
                let w = e.width();
                Expr::new(Kind::Not(e), w, loc)
            }
        }
        impl ops::Shl<u32> for $t {
            type Output = Expr;
            #[track_caller]
            fn shl(self, n: u32) -> Expr {
                let loc = Location::caller();
                let e = self.to_expr(0, loc);
                let w = e.width();
                Expr::new(Kind::ShiftConst(ShiftOp::Left, e, n), w, loc)
            }
        }
        impl ops::Shr<u32> for $t {
            type Output = Expr;
            #[track_caller]
            fn shr(self, n: u32) -> Expr {
                let loc = Location::caller();
                let e = self.to_expr(0, loc);
                let w = e.width();
                Expr::new(Kind::ShiftConst(ShiftOp::Right, e, n), w, loc)
            }
        }
    };
}

unops!(Expr);
unops!(&Expr);
unops!(Sig);

/// Bits needed to hold values `0..n` (at least 1).
pub fn clog2(n: u64) -> u32 {
    if n <= 2 {
        1
    } else {
        64 - (n - 1).leading_zeros()
    }
}
