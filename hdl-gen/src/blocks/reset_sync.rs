//! Reset synchronizer: asserts a domain's reset at once with the request, and releases it on
//! that domain's clock, so no flip-flop of the domain sees the release near its clock edge.

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The module's name (it has no parameters but the design's reset style).
pub const NAME: &str = "reset_sync";

/// The reset synchronizer `reset_sync`. Ports: `clk_i`; the reset request (`rst_ni` or
/// `rst_i`, by style: any source, asynchronous to `clk_i`); the synchronized reset, `rst_no`
/// (active low) for the low styles or `rst_o` (active high) for the high ones, to feed the
/// reset port of every module of the `clk_i` domain.
///
/// Contract, in the asynchronous styles (the chip's default): the output asserts in the same
/// instant as the request, without a clock edge; once the request ends, the output releases at
/// the second rising edge of `clk_i` (two flip-flops shift the release in; a request that
/// returns meanwhile asserts the output again at once). In the synchronous styles the request
/// is sampled on `clk_i` like every other reset, so assertion too waits for an edge.
pub fn reset_sync(reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::with_reset(NAME, reset);
    let low = reset.active_low();
    m.doc("Reset synchronizer: the output reset asserts at once with the request and releases");
    m.doc("at the second clk_i edge after the request ends (two flip-flops shift the release in).");
    m.clock();
    m.reset();
    let out = m.output(if low { "rst_no" } else { "rst_o" }, 1);
    // Asserted is 0 for an active-low output, 1 for an active-high one.
    let (asserted, released) = if low { (0, 1) } else { (1, 0) };
    let meta = m.reg("meta", 1, asserted);
    m.comment(
        meta.q,
        "takes the release first: may go metastable on silicon",
    );
    let sync = m.reg("sync", 1, asserted);
    m.assign(meta.d, lit(1, released));
    m.assign(sync.d, meta.q);
    m.assign(out, sync.q);
    m.finish()
}
