//! The host's steps: admin commands, I/O queue pairs created through them, the bring-up, AERs
//! re-armed, batches of I/O SQEs on the rings (also what the `chip` suites and `bench --suite
//! nvme` drive the front end with).

use super::*;

pub(super) fn dw(sqe: &mut Sqe, i: usize, v: u32) {
    sqe[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
}

pub(super) fn admin_sqe(opc: u8, cid: u16, cdw10: u32, cdw11: u32, prp1: u64) -> Sqe {
    let mut s = [0u8; 64];
    dw(&mut s, 0, u32::from(opc) | u32::from(cid) << 16);
    s[24..32].copy_from_slice(&prp1.to_le_bytes());
    dw(&mut s, 10, cdw10);
    dw(&mut s, 11, cdw11);
    s
}

/// A CID not outstanding on `sqid`.
pub fn next_cid<T: Dut>(env: &mut Env<T>, sqid: u16) -> u16 {
    if env.host.lowest_cid {
        // As a tag allocator (Linux's blk-mq tags): the lowest CID not outstanding.
        let q = env.host.model.sqs.get(&sqid);
        return (0..=u16::MAX)
            .find(|c| q.is_none_or(|q| !q.outstanding.contains_key(c)))
            .expect("a free CID");
    }
    loop {
        let c = env.host.next_cid.entry(sqid).or_insert(0);
        *c = c.wrapping_add(1);
        let cid = *c;
        let busy = env
            .host
            .model
            .sqs
            .get(&sqid)
            .is_some_and(|q| q.outstanding.contains_key(&cid));
        if !busy {
            return cid;
        }
    }
}

/// Submits one admin command and runs until it completes (consuming every CQ meanwhile).
pub fn admin<T: Dut>(
    env: &mut Env<T>,
    opc: u8,
    cdw10: u32,
    cdw11: u32,
    prp1: u64,
) -> Result<(), String> {
    let cid = next_cid(env, 0);
    let sqe = admin_sqe(opc, cid, cdw10, cdw11, prp1);
    env.submit(0, &[sqe], true)?;
    let mut n = 0u64;
    while env
        .host
        .model
        .sqs
        .get(&0)
        .is_some_and(|q| q.outstanding.contains_key(&cid))
    {
        env.consume_all()?;
        env.step()?;
        n += 1;
        if n > 300_000 {
            return Err(format!(
                "admin command {opc:#04x} (CID {cid}) never completed"
            ));
        }
    }
    Ok(())
}

/// Creates I/O queue pair `qid` through admin commands.
pub fn create_pair<T: Dut>(
    env: &mut Env<T>,
    qid: u16,
    p: &Pair,
    vectors: u32,
) -> Result<(), String> {
    let max = env.host.model.max_entries;
    let (sq, cq) = (u32::from(p.sq).min(max), u32::from(p.cq).min(max));
    let vector = u16::from(p.vector) % vectors as u16;
    let cr = env.alloc_ring(qid, true, cq, p.ien.then_some(vector));
    let base = env.host.rings[cr].range.start;
    admin(
        env,
        0x05,
        (cq - 1) << 16 | u32::from(qid),
        1 | u32::from(p.ien) << 1 | u32::from(vector) << 16,
        base,
    )?;
    if env.host.model.cqs.contains_key(&qid) {
        env.host.cq_ring.insert(qid, cr);
        env.host.cq_head.insert(qid, (0, true));
    }
    let sr = env.alloc_ring(qid, false, sq, None);
    let base = env.host.rings[sr].range.start;
    admin(
        env,
        0x01,
        (sq - 1) << 16 | u32::from(qid),
        1 | u32::from(p.prio) << 1 | u32::from(qid) << 16,
        base,
    )?;
    if env.host.model.sqs.contains_key(&qid) {
        env.host.rings[sr].urgent = p.prio == 0;
        env.host.sq_ring.insert(qid, sr);
        env.host.submitted.insert(qid, 0);
        env.host.completed.insert(qid, 0);
    }
    Ok(())
}

pub(super) fn bring_up(env: &mut Env, input: &Input) -> Result<(), String> {
    env.enable(
        u32::from(input.admin.0),
        u32::from(input.admin.1),
        input.wrr,
    )?;
    admin(env, 0x09, 0x01, input.arb, 0)?;
    admin(
        env,
        0x09,
        0x08,
        u32::from(input.coalesce.0) | u32::from(input.coalesce.1) << 8,
        0,
    )?;
    for v in 0..env.vectors.min(16) {
        if input.cd >> v & 1 == 1 {
            admin(env, 0x09, 0x09, v | 1 << 16, 0)?;
        }
    }
    for (i, p) in input.pairs.iter().enumerate() {
        let qid = i as u16 + 1;
        if qid <= env.io_queues {
            let vectors = env.vectors;
            create_pair(env, qid, p, vectors)?;
        }
    }
    rearm_aer(env)
}

/// Keeps one Asynchronous Event Request outstanding, for doorbell faults.
pub fn rearm_aer<T: Dut>(env: &mut Env<T>) -> Result<(), String> {
    if env.host.model.sqs.contains_key(&0) && env.host.model.aers.is_empty() {
        let cid = next_cid(env, 0);
        let sqe = admin_sqe(0x0c, cid, 0, 0, 0);
        env.submit(0, &[sqe], true)?;
    }
    Ok(())
}

/// A random I/O SQE; `bad` percent chance of an unknown opcode or a reserved field.
/// `n` SQEs for SQ `qid` made by `make`, each given a CID that is neither outstanding nor used
/// by another SQE of the batch.
pub fn io_batch<T: Dut>(
    env: &mut Env<T>,
    qid: u16,
    n: u32,
    mut make: impl FnMut(u16) -> Sqe,
) -> Vec<Sqe> {
    let mut sqes = Vec::new();
    for _ in 0..n {
        let cid = next_cid(env, qid);
        sqes.push(make(cid));
        // Keep the CID reserved for the rest of the batch.
        outstanding(env, qid).insert(cid, vec![]);
    }
    for s in &sqes {
        outstanding(env, qid).remove(&u16::from_le_bytes([s[2], s[3]]));
    }
    sqes
}

pub(super) fn outstanding<T: Dut>(
    env: &mut Env<T>,
    qid: u16,
) -> &mut BTreeMap<u16, crate::models::nvme::Allowed> {
    &mut env
        .host
        .model
        .sqs
        .get_mut(&qid)
        .expect("the SQ exists")
        .outstanding
}

/// An I/O SQE of an opcode the hardware carries, random fields elsewhere; a Read or Write moves
/// at most `max_blocks` (the controller's MDTS: a bound, near it, or small). With chance `bad`
/// (percent) it is spoiled: an opcode the hardware does not carry, a bad CDW0 field, or a Read
/// or Write just over or far over MDTS (when NLB can say so).
pub fn io_sqe(rng: &mut Rng, cid: u16, bad: u8, max_blocks: u32) -> Sqe {
    let mut s = [0u8; 64];
    for b in s.iter_mut().skip(4) {
        *b = rng.next_u64() as u8;
    }
    let opc = [0x00u8, 0x01, 0x02, 0x08, 0x09][rng.below(5) as usize];
    let psdt = [0u32, 1, 2][rng.below(3) as usize];
    let mut cdw0 = u32::from(opc) | psdt << 14 | u32::from(cid) << 16;
    let most = max_blocks.min(65536) as u64;
    let mut blocks = match rng.below(4) {
        0 => most,
        1 => 1,
        _ => 1 + rng.below(most),
    };
    if rng.chance(bad) {
        match rng.below(5) {
            0 => cdw0 = cdw0 & !0xff | [0x05u32, 0x7f, 0x80, 0x0a][rng.below(4) as usize],
            1 => cdw0 |= (1 + rng.below(3) as u32) << 8,
            2 => cdw0 |= 1 << (10 + rng.below(4)),
            3 if most < 65536 => {
                cdw0 = cdw0 & !0xff | [0x01u32, 0x02][rng.below(2) as usize];
                blocks = if rng.chance(50) {
                    most + 1
                } else {
                    most + 1 + rng.below(65536 - most)
                };
            }
            _ => cdw0 |= 3 << 14,
        }
    }
    dw(&mut s, 0, cdw0);
    s[48..50].copy_from_slice(&((blocks - 1) as u16).to_le_bytes());
    s
}

/// An I/O SQE the hardware does not carry, with clean CDW0 fields: mostly Verify of firmware's
/// namespace 1 (in range, crossing its end, or of another NSID), else Compare or an opcode
/// nobody implements.
pub fn fallback_sqe(rng: &mut Rng, cid: u16, ns_blocks: u64) -> Sqe {
    let mut s = [0u8; 64];
    for b in s.iter_mut().skip(4) {
        *b = rng.next_u64() as u8;
    }
    let opc = match rng.below(8) {
        0 => 0x05,
        1 => [0x7fu32, 0x80, 0x0a, 0x0d, 0x91][rng.below(5) as usize],
        _ => u32::from(VERIFY),
    };
    let psdt = [0u32, 1, 2][rng.below(3) as usize];
    dw(&mut s, 0, opc | psdt << 14 | u32::from(cid) << 16);
    if opc == u32::from(VERIFY) {
        let nsid = match rng.below(10) {
            0 => 2,
            1 => 0xffff_ffff,
            _ => 1,
        };
        let nlb = rng.below(16);
        let slba = match rng.below(4) {
            0 => ns_blocks.saturating_sub(nlb + 1) + rng.below(3),
            1 => u64::MAX - rng.below(4),
            _ => rng.below(ns_blocks),
        };
        dw(&mut s, 1, nsid);
        s[40..48].copy_from_slice(&slba.to_le_bytes());
        s[48..50].copy_from_slice(&(nlb as u16).to_le_bytes());
    }
    s
}
