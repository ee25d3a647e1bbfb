//! The golden reference's rules: the SQEs of the stimulus, QoS's grant table and its status,
//! the RoCE target's answers, and the routing table firmware's writes leave.

use super::*;

/// The SQE of `c` with CID `cid`.
pub(super) fn sqe_for(c: &Cmd, cid: u16) -> Sqe {
    let mut s = [0u8; 64];
    let (opc, nsid, slba, nlb): (u8, u32, u64, u16) = match c.kind {
        0 => (0x00, 1, 0, 0),
        1 => (0x08, 1, c.slba % (BLOCKS + 4), c.nlb % 8),
        2 => (0x02, 1, BLOCKS + c.slba % 8, c.nlb % 8),
        3 if c.nlb.is_multiple_of(2) => (0x7e, 1, 0, 0),
        3 => (VERIFY, 1, c.slba % (BLOCKS + 4), c.nlb / 2 % 8),
        4 if c.nlb.is_multiple_of(2) => (0x08, 2, c.slba % NS2_BLOCKS, 0),
        4 => (0x02, 2, c.slba % (NS2_BLOCKS - 4), c.nlb / 2 % 4),
        5 => (0x01, 1, c.slba % (BLOCKS - 32), c.nlb % 32),
        6 => (0x02, 3, 0, 0),
        7 => (0x09, 1, 0, 0),
        8 => (0x05, 1, c.slba % (BLOCKS - 8), c.nlb % 8),
        9 => (0x01, 1, c.slba % (BLOCKS - 8), c.nlb % 2),
        _ => (0x02, 1, c.slba % (BLOCKS - 32), c.nlb % 32),
    };
    s[0] = opc;
    s[2..4].copy_from_slice(&cid.to_le_bytes());
    s[4..8].copy_from_slice(&nsid.to_le_bytes());
    s[40..48].copy_from_slice(&slba.to_le_bytes());
    s[48..50].copy_from_slice(&nlb.to_le_bytes());
    s[60] = cid as u8;
    s
}

/// Which grant entries firmware writes for queue `sqid`: (nsid, read, write, first, last).
pub(super) fn grant_entries(g: Grant) -> Vec<(u32, bool, bool, u64, u64)> {
    let all = (0, u64::MAX >> 1);
    match g {
        Grant::Full => vec![(1, true, true, all.0, all.1), (2, true, true, all.0, all.1)],
        Grant::ReadOnly => vec![(1, true, false, all.0, all.1)],
        Grant::WriteOnly => vec![(1, false, true, all.0, all.1)],
        Grant::Window(a, b) => {
            let (lo, hi) = (u64::from(a.min(b)) % BLOCKS, u64::from(a.max(b)) % BLOCKS);
            vec![(1, true, true, lo, hi)]
        }
        Grant::None => vec![],
    }
}

/// One grant table entry: (sqid, nsid, read, write, first, last).
pub(super) type GrantEntry = (u16, u32, bool, bool, u64, u64);

/// The grant table firmware writes, in its order: each queue's entries ([`grant_entries`]) for
/// the namespaces QoS polices, as many as the table holds (`qos.grants`; a queue whose entries
/// do not fit gets what fits, and QoS then denies the rest).
pub(super) fn grant_table(grants: &BTreeMap<u16, Grant>) -> Vec<GrantEntry> {
    grants
        .iter()
        .flat_map(|(&y, &g)| {
            grant_entries(g)
                .into_iter()
                .map(move |(n, r, w, first, last)| (y, n, r, w, first, last))
        })
        .filter(|e| e.1 <= config::QOS_NAMESPACES)
        .take(config::QOS_GRANTS as usize)
        .collect()
}

/// Blocks of namespace `nsid` as firmware sizes it in QoS: 0 for one QoS does not police.
pub(super) fn ns_blocks(nsid: u32) -> u64 {
    match nsid {
        _ if nsid > config::QOS_NAMESPACES => 0,
        1 => BLOCKS,
        2 => NS2_BLOCKS,
        _ => 0,
    }
}

/// The status QoS gives `sqe` of `sqid`, or `None` when it admits it (the rules of
/// `hdl-gen/src/qos/mod.rs`, "Checks").
pub(super) fn qos_status(sqid: u16, sqe: &Sqe, queues: u16, table: &[GrantEntry]) -> Option<u16> {
    let opc = sqe[0];
    let nsid = u32::from_le_bytes(sqe[4..8].try_into().unwrap());
    let slba = u64::from_le_bytes(sqe[40..48].try_into().unwrap());
    let nlb = u64::from(u16::from_le_bytes([sqe[48], sqe[49]]));
    let nsze = ns_blocks(nsid);
    if nsze == 0 {
        return Some(0x400b);
    }
    let lba = matches!(opc, 0x01 | 0x02 | 0x05 | 0x08);
    let (read, write) = match opc {
        0x02 | 0x05 => (true, false),
        0x00 | 0x01 | 0x08 | 0x09 => (false, true),
        _ => (true, true),
    };
    if lba && slba.checked_add(nlb).is_none_or(|e| e >= nsze) {
        return Some(0x4080);
    }
    let granted = sqid >= 1
        && sqid <= queues
        && table.iter().any(|&(y, n, r, w, first, last)| {
            y == sqid
                && n == nsid
                && (r || !read)
                && (w || !write)
                && (!lba || (first <= slba && slba + nlb <= last))
        });
    (!granted).then_some(0x4286)
}

/// What the RoCE target with a namespace 1 of `blocks` blocks answers for a command it
/// executes (`models::roce_target`).
pub(crate) fn target_status(sqe: &Sqe, blocks: u64) -> u16 {
    let opc = sqe[0];
    let nsid = u32::from_le_bytes(sqe[4..8].try_into().unwrap());
    let slba = u64::from_le_bytes(sqe[40..48].try_into().unwrap());
    let nlb = u64::from(u16::from_le_bytes([sqe[48], sqe[49]])) + 1;
    match opc {
        0x00 => 0,
        0x01 | 0x02 | 0x08 if nsid != 1 => 0x0b,
        0x01 | 0x02 | 0x08 if slba + nlb <= blocks => 0,
        0x01 | 0x02 | 0x08 => 0x80,
        _ => 0x01,
    }
}

/// Firmware's routing-table writes for `r`: (SQ id, `route_set` entry), in order.
pub(super) fn route_writes(r: Routes, qps: usize, conns: usize) -> Vec<(u16, u32)> {
    match r {
        Routes::Reset => vec![],
        Routes::Swapped => vec![(1, 1 << 31 | 1), (2, 1 << 31)],
        Routes::Sq2Unbound => vec![(2, 0)],
        Routes::Table(b) => (1..=3u16)
            .zip(b)
            .map(|(y, b)| {
                let e = match b {
                    Bind::Roce(c) => 1 << 31 | (u32::from(c) % qps as u32),
                    Bind::Tcp(c) => 1 << 31 | 1 << 16 | (u32::from(c) % conns as u32),
                    Bind::Off => 0,
                };
                (y, e)
            })
            .collect(),
    }
}

/// The routing table as the contract says firmware's writes leave it: SQ id -> channel. After
/// reset SQ y is on QP y - 1 (the default transport is RoCE); binding a channel unbinds
/// whichever queue had it; an entry of 0 unbinds; a write for an SQ id beyond `queues`, or
/// binding to a transport or channel the chip lacks (`qps` QPs, `conns` connections), is refused.
pub(super) fn routes(
    writes: &[(u16, u32)],
    qps: usize,
    conns: usize,
    queues: u16,
) -> BTreeMap<u16, Chan> {
    let mut t: BTreeMap<u16, Chan> = (1..=queues)
        .filter(|&y| usize::from(y) <= qps)
        .map(|y| (y, Chan::Roce(usize::from(y) - 1)))
        .collect();
    for &(y, e) in writes {
        // A write for an SQ id without an entry (1..queues have one) is refused: nothing
        // changes (configs/smallest.toml has two).
        if y == 0 || y > queues {
            continue;
        }
        if e >> 31 == 0 {
            t.remove(&y);
            continue;
        }
        let ch = (e & 0xff) as usize;
        let c = match e >> 16 & 3 {
            0 if ch < qps => Chan::Roce(ch),
            1 if ch < conns => Chan::Tcp(ch),
            _ => continue,
        };
        t.retain(|_, v| *v != c);
        t.insert(y, c);
    }
    t
}

/// What `chip_csr.route_get` reads for SQ `y` under `table`: bit 31 bound, bit 16 NVMe/TCP
/// (else RoCE), the channel in the low bits; 0 for an unbound queue.
pub(super) fn route_word(table: &BTreeMap<u16, Chan>, y: u16) -> u32 {
    table.get(&y).map_or(0, |&c| match c {
        Chan::Roce(q) => 1 << 31 | q as u32,
        Chan::Tcp(q) => 1 << 31 | 1 << 16 | q as u32,
    })
}
