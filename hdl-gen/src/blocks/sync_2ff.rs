//! Two-flop synchronizer: brings a level (or a gray-coded value, whose successive values differ
//! in one bit) from another clock domain into this module's clock domain.

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The module name for a width: `sync_2ff_w<width>`.
pub fn module_name(width: u32) -> String {
    format!("sync_2ff_w{width}")
}

/// A two-flop synchronizer of `width` bits, named by [`module_name`]. Ports: `clk_i` and the
/// reset of the destination domain, `d_i` (a declared clock-domain crossing: the builder lets any
/// domain's value, or an asynchronous one, feed it), `q_o` (in the destination domain).
///
/// Contract: `q_o` is `d_i` delayed through two flip-flops clocked by `clk_i`, both reset to 0. A
/// change of `d_i` reaches `q_o` at the second or third rising edge of `clk_i` after it (the
/// second in simulation, which has no metastability; the third when the first flop's sample
/// was marginal on silicon). Each bit is synchronized on its own: a multi-bit value is only
/// safe when at most one bit changes between two samples (a gray-coded pointer), or when it is
/// held stable until a synchronized strobe says it may be read.
pub fn sync_2ff(width: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let name = module_name(width);
    if width == 0 {
        return Err(Errors::invalid(
            &name,
            "a synchronizer of 0 bits: the width must be at least 1",
        ));
    }
    let mut m = ModuleBuilder::with_reset(&name, reset);
    m.doc(&format!(
        "Two-flop synchronizer, {width} bit{}: q_o is d_i (of any clock domain) through two",
        if width == 1 { "" } else { "s" }
    ));
    m.doc("flip-flops on clk_i, so a change of d_i shows on q_o 2 (silicon: 2 or 3) clk_i edges later.");
    m.doc("Bits are synchronized independently: feed it levels or gray-coded values only.");
    m.clock();
    m.reset();
    let d = m.input_crossing("d_i", width);
    let q = m.output("q_o", width);
    let meta = m.reg("meta", width, 0);
    m.comment(meta.q, "first stage: may go metastable on silicon");
    let sync = m.reg("sync", width, 0);
    m.assign(meta.d, d);
    m.assign(sync.d, meta.q);
    m.assign(q, sync.q);
    m.finish()
}
