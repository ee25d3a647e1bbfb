//! Property `tcp_reopen`: a reset connection delivers nothing more, and its next incarnation
//! starts its byte stream clean. A connection opens to a smoltcp listener, smoltcp sends bytes
//! the application has no room for (`rx_space_i` low: they stay in the engine's receive
//! buffer, acknowledged), the firmware aborts the connection (exactly one RST), the application
//! has room again (a random number of cycles in CLOSED), and the connection opens again on the
//! same 4-tuple (smoltcp listening again). Then smoltcp sends new bytes. Checked: the
//! application receives none of the aborted incarnation's bytes, in CLOSED or while the
//! connection opens (RFC 9293 3.10.5: an abort flushes the receive queue; the engine's
//! contract, `hdl-gen/src/tcp/mod.rs`), and exactly the new ones; every engine frame passes
//! `models::tcp`'s golden check (the new ISS past the old SND.MAX included).

use super::{creg, Env, Setup};
use crate::prop::Property;
use crate::rng::Rng;
use proptest::prelude::*;
use proptest::strategy::BoxedStrategy;
use smoltcp::iface::{SocketHandle, SocketSet};
use smoltcp::socket::tcp;
use std::path::Path;

/// The stimulus.
#[derive(Clone, Debug)]
pub struct Input {
    /// The engine's connection.
    pub conn: u8,
    /// Bytes smoltcp sends to the first incarnation (left in the buffer) and to the second.
    pub old: u16,
    pub new: u16,
    /// Cycles between the abort and the open again (the application has room).
    pub gap: u16,
    /// Percent of cycles the application has no room once it takes bytes again.
    pub stall: u8,
    pub seed: u64,
}

/// Cycles any step may take.
const LIMIT: u64 = 400_000;

fn listener() -> tcp::Socket<'static> {
    let mut s = tcp::Socket::new(
        tcp::SocketBuffer::new(vec![0; 16384]),
        tcp::SocketBuffer::new(vec![0; 16384]),
    );
    s.set_congestion_control(tcp::CongestionControl::None);
    s
}

/// Runs `env` until `done` holds (given smoltcp's sockets and how many bytes of `data` it
/// took), smoltcp's socket `h` sending `data[*off..]` as it can.
fn run_until(
    env: &mut Env,
    h: SocketHandle,
    data: &[u8],
    off: &mut usize,
    what: &str,
    mut done: impl FnMut(&mut SocketSet<'static>, usize) -> bool,
) -> Result<(), String> {
    let end = env.sim.cycle() + LIMIT;
    loop {
        env.step(&mut |sockets| {
            let s = sockets.get_mut::<tcp::Socket>(h);
            if s.can_send() && *off < data.len() {
                if let Ok(k) = s.send_slice(&data[*off..]) {
                    *off += k;
                }
            }
        })?;
        let mut sockets = std::mem::replace(&mut env.sockets, SocketSet::new(vec![]));
        let ok = done(&mut sockets, *off);
        env.sockets = sockets;
        if ok {
            return Ok(());
        }
        if env.sim.cycle() > end {
            return Err(format!("no {what} within {LIMIT} cycles"));
        }
    }
}

pub fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
    let setup = Setup {
        mss: 1460,
        wscale: 0,
        key: (3, 5),
        rto_min: 40,
        retries: 12,
        time_wait: 50,
    };
    let mut env = Env::clean(waves, input.seed, &setup);
    let c = usize::from(input.conn) % env.n;
    let mut rng = Rng::new(input.seed ^ 0x5eed);
    let old: Vec<u8> = (0..input.old).map(|_| rng.next_u64() as u8).collect();
    let new: Vec<u8> = (0..input.new).map(|_| rng.next_u64() as u8).collect();
    let app = env.app().clone();
    app.borrow_mut().stall = 0;
    let mut sock = listener();
    sock.listen(4420).map_err(|e| format!("listen: {e:?}"))?;
    let h = env.sockets.add(sock);

    // 1. Open; smoltcp's bytes fill the buffer, the application never takes them.
    env.write(creg(c, 8), 1);
    let mut off = 0;
    run_until(&mut env, h, &[], &mut off, "handshake", |s, _| {
        s.get::<tcp::Socket>(h).state() == tcp::State::Established
    })?;
    app.borrow_mut().stall = 100;
    run_until(
        &mut env,
        h,
        &old,
        &mut off,
        "ACK of the old bytes",
        |s, off| off == old.len() && s.get::<tcp::Socket>(h).send_queue() == 0,
    )?;
    if !app.borrow().got[c].is_empty() {
        return Err("the application took bytes without rx_space".into());
    }

    // 2. The firmware aborts: one RST; the bytes stay where they are.
    env.view.conns[c].rst_ok = true;
    let rsts = env.view.conns[c].rsts;
    env.write(creg(c, 8), 4);
    run_until(
        &mut env,
        h,
        &[],
        &mut off,
        "smoltcp closed by the RST",
        |s, _| s.get::<tcp::Socket>(h).state() == tcp::State::Closed,
    )?;
    if env.view.conns[c].rsts != rsts + 1 {
        return Err(format!(
            "the abort sent {} RSTs, want one",
            env.view.conns[c].rsts - rsts
        ));
    }
    env.sockets
        .get_mut::<tcp::Socket>(h)
        .listen(4420)
        .map_err(|e| format!("listen again: {e:?}"))?;
    // CLOSED after the abort, with room: the flushed bytes must not come.
    app.borrow_mut().stall = input.stall % 60;
    for _ in 0..input.gap {
        env.step(&mut |_| {})?;
    }
    let flushed = app.borrow().got[c].len();
    if flushed > 0 {
        return Err(format!(
            "CLOSED after an abort, the engine delivered {flushed} of the aborted connection's              bytes (RFC 9293 3.10.5: an abort flushes the receive queue)"
        ));
    }

    // 3. Open again: none of the old bytes may come.
    let iss = env.view.conns[c].iss.ok_or("no ISS seen")?;
    env.view.reopen(c, iss.wrapping_add(1));
    env.write(creg(c, 8), 1);
    let mut off = 0;
    run_until(&mut env, h, &new, &mut off, "the new bytes", |_, _| {
        app.borrow().got[c].len() >= new.len()
    })?;
    for _ in 0..200 {
        env.step(&mut |_| {})?;
    }
    let got = &app.borrow().got[c];
    if *got != new {
        let stale = old
            .iter()
            .zip(got.iter())
            .take_while(|(a, b)| a == b)
            .count();
        return Err(format!(
            "the reopened connection delivered {} bytes, want the {} new ones; the first {stale} \
             are the aborted connection's (left in its buffer)",
            got.len(),
            new.len()
        ));
    }
    tracing::debug!(
        "tcp_reopen: connection {c}, {} old bytes left, {} new, gap {}, {} cycles",
        old.len(),
        new.len(),
        input.gap,
        env.sim.cycle()
    );
    let v = app.borrow().violations.first().cloned();
    if let Some(v) = v {
        return Err(format!("byte streams: {v}"));
    }
    Ok(())
}

pub struct TcpReopenProp;

impl Property for TcpReopenProp {
    type Input = Input;
    const NAME: &'static str = "tcp_reopen";

    fn strategy() -> BoxedStrategy<Input> {
        (
            any::<u8>(),
            1u16..6000,
            1u16..4000,
            1u16..300,
            any::<u8>(),
            any::<u64>(),
        )
            .prop_map(|(conn, old, new, gap, stall, seed)| Input {
                conn,
                old,
                new,
                gap,
                stall,
                seed,
            })
            .boxed()
    }

    fn run(input: &Input, waves: Option<&Path>) -> Result<(), String> {
        run(input, waves)
    }
}
