//! Ready/valid register slice (skid buffer): cuts the combinational path on valid, data and
//! ready between two stream stages at full throughput.

use hdl_builder::prelude::*;
use hdl_builder::Errors;
use std::rc::Rc;

/// The stream a skid buffer carries: one `data` field.
pub fn stream_def(width: u32) -> StreamDef {
    StreamDef::new().field("data", width)
}

/// A skid buffer for `width`-bit data, named `skid_buffer_w<width>`.
///
/// Interface contract: `s_ready_o` and `m_valid_o` come straight from flip-flops; one transfer per
/// cycle in steady state; a word accepted on `s` leaves on `m` one cycle later at the earliest;
/// order is kept and nothing is dropped or duplicated. Two words of storage: the output register
/// and the skid register that catches the word accepted while the output stalled.
pub fn skid_buffer(width: u32, reset: ResetStyle) -> Result<Rc<Module>, Errors> {
    let mut m = ModuleBuilder::with_reset(&format!("skid_buffer_w{width}"), reset);
    m.doc(&format!(
        "Ready/valid register slice for {width}-bit data: s_ready_o and m_valid_o are registered,"
    ));
    m.doc("throughput is one transfer per cycle, latency one cycle. Order is kept.");
    m.clock();
    m.reset();
    let def = stream_def(width);
    m.group("upstream");
    let s = m.stream_in("s", &def);
    m.group("downstream");
    let o = m.stream_out("m", &def);

    let out_valid = m.reg("out_valid", 1, 0);
    let out_data = m.reg_noreset("out_data", width);
    let skid_valid = m.reg("skid_valid", 1, 0);
    let skid_data = m.reg_noreset("skid_data", width);
    let s_data = s.field("data");

    m.assign(s.ready, !skid_valid.q);
    m.assign(o.valid, out_valid.q);
    m.assign(o.field("data"), out_data.q);

    m.comb(|c| {
        c.set(out_valid.d, out_valid.q);
        c.set(out_data.d, out_data.q);
        c.set(skid_valid.d, skid_valid.q);
        c.set(skid_data.d, skid_data.q);
        // The output register loads when it is empty or its word leaves this cycle.
        c.if_(o.ready | !out_valid.q, |c| {
            c.if_(skid_valid.q, |c| {
                c.set(out_valid.d, 1);
                c.set(out_data.d, skid_data.q);
                c.set(skid_valid.d, 0);
            })
            .else_(|c| {
                c.set(out_valid.d, s.valid);
                c.set(out_data.d, s_data);
            });
        })
        // The output stalls: a word accepted now waits in the skid register.
        .else_if(s.valid & s.ready, |c| {
            c.set(skid_valid.d, 1);
            c.set(skid_data.d, s_data);
        });
    });
    m.finish()
}
