//! Golden model of the QoS arbiter (hdl-gen `qos`): what happens to each command (admitted with
//! its cost, or denied with the statuses the specification allows), the token bucket rule, the
//! rate bound every window must keep, and the share weighted round robin gives each weight.
//!
//! The check of a command is transaction level. The token bucket is about time, so
//! [`DebtBucket`] counts cycles, in exact fixed-point arithmetic (levels in units of
//! `2^-frac` tokens), one [`DebtBucket::step`] per clock cycle.

/// Fraction bits of a bandwidth rate (bytes per cycle).
pub const BW_FRAC: u32 = 16;
/// Fraction bits of an IOPS rate (commands per cycle).
pub const IOPS_FRAC: u32 = 24;

/// 0Bh Invalid Namespace or Format (SCT 0), with DNR: the status field value.
pub const ST_INVALID_NAMESPACE: u16 = 0x400b;
/// 80h LBA Out of Range (SCT 0), with DNR.
pub const ST_LBA_OUT_OF_RANGE: u16 = 0x4080;
/// 86h Access Denied (SCT 2), with DNR.
pub const ST_ACCESS_DENIED: u16 = 0x4286;

/// A rate limit: `rate` in `2^-frac` tokens per cycle (0 = unlimited), `burst` whole tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limit {
    /// Tokens per cycle, fixed point; 0 = unlimited.
    pub rate: u32,
    /// Capacity in whole tokens.
    pub burst: u32,
}

/// One queue's configuration (SQ id = index + 1).
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueCfg {
    /// Priority class: 0 urgent .. 3 low.
    pub class: u8,
    /// Weight inside the class, 0's based.
    pub weight: u8,
    /// Bytes per cycle (16 fraction bits), burst in bytes.
    pub bw: Limit,
    /// Commands per cycle (24 fraction bits), burst in commands (8 bits).
    pub iops: Limit,
}

/// One namespace's configuration (NSID = index + 1).
#[derive(Clone, Copy, Debug, Default)]
pub struct NsCfg {
    /// NSZE in LBAs; 0 = absent.
    pub size: u64,
    /// log2 of the LBA size in bytes.
    pub lba_shift: u8,
    /// Bandwidth limit.
    pub bw: Limit,
    /// IOPS limit.
    pub iops: Limit,
}

/// One grant table entry.
#[derive(Clone, Copy, Debug, Default)]
pub struct Grant {
    /// Submission queue (0: unused entry).
    pub sqid: u16,
    /// Namespace.
    pub nsid: u8,
    /// Read access.
    pub read: bool,
    /// Write access.
    pub write: bool,
    /// First LBA granted.
    pub first: u64,
    /// Last LBA granted, inclusive.
    pub last: u64,
}

/// The whole configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Per queue (SQ ids 1..).
    pub queues: Vec<QueueCfg>,
    /// Per namespace (NSIDs 1..).
    pub namespaces: Vec<NsCfg>,
    /// The grant table.
    pub grants: Vec<Grant>,
}

/// The fields of an SQE the block reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sqe {
    /// CDW0[7:0].
    pub opcode: u8,
    /// CDW0[31:16].
    pub cid: u16,
    /// DW1.
    pub nsid: u32,
    /// CDW11:CDW10.
    pub slba: u64,
    /// CDW12[15:0], 0's based.
    pub nlb: u16,
}

impl Sqe {
    /// The 64-byte SQE with these fields and `fill` in every other byte position it does not
    /// name (so the test sees that the block passes the SQE through unchanged).
    pub fn bytes(&self, fill: &[u8; 64]) -> [u8; 64] {
        let mut b = *fill;
        b[0] = self.opcode;
        b[2..4].copy_from_slice(&self.cid.to_le_bytes());
        b[4..8].copy_from_slice(&self.nsid.to_le_bytes());
        b[40..48].copy_from_slice(&self.slba.to_le_bytes());
        b[48..50].copy_from_slice(&self.nlb.to_le_bytes());
        b
    }

    /// Decodes an SQE.
    pub fn decode(b: &[u8; 64]) -> Sqe {
        Sqe {
            opcode: b[0],
            cid: u16::from_le_bytes([b[2], b[3]]),
            nsid: u32::from_le_bytes(b[4..8].try_into().unwrap()),
            slba: u64::from_le_bytes(b[40..48].try_into().unwrap()),
            nlb: u16::from_le_bytes([b[48], b[49]]),
        }
    }
}

/// What the opcode needs (see the table in hdl-gen/src/qos/mod.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpKind {
    /// Needs read access.
    pub read: bool,
    /// Needs write access (and counts as write-side).
    pub write: bool,
    /// Has an LBA range to check.
    pub lba: bool,
    /// Moves data: costs bandwidth tokens.
    pub data: bool,
}

/// What opcode `op` needs.
pub fn op_kind(op: u8) -> OpKind {
    match op {
        0x02 | 0x05 => OpKind {
            read: true,
            write: false,
            lba: true,
            data: true,
        },
        0x01 => OpKind {
            read: false,
            write: true,
            lba: true,
            data: true,
        },
        0x08 => OpKind {
            read: false,
            write: true,
            lba: true,
            data: false,
        },
        0x09 | 0x00 => OpKind {
            read: false,
            write: true,
            lba: false,
            data: false,
        },
        _ => OpKind {
            read: true,
            write: true,
            lba: false,
            data: false,
        },
    }
}

/// The fate of a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Admitted: released to the transport once its buckets allow.
    Admit {
        /// Queue index (SQ id - 1).
        queue: usize,
        /// Namespace index (NSID - 1).
        ns: usize,
        /// Bytes it costs the bandwidth buckets.
        cost: u64,
        /// Write-side (counters).
        write: bool,
    },
    /// Denied: completed by the block with one of `allowed`.
    Deny {
        /// Every status the specification allows for its faults.
        allowed: Vec<u16>,
        /// Write-side (counters).
        write: bool,
    },
}

/// What the block must do with command `sqe` from SQ `sqid`. Where a command has several faults
/// each one's status is allowed.
pub fn check(cfg: &Config, sqid: u16, sqe: &Sqe) -> Verdict {
    let k = op_kind(sqe.opcode);
    let nq = cfg.queues.len();
    let q_ok = sqid >= 1 && usize::from(sqid) <= nq;
    let ns_idx =
        (sqe.nsid >= 1 && sqe.nsid as usize <= cfg.namespaces.len()).then(|| sqe.nsid as usize - 1);
    let ns = ns_idx.map(|i| cfg.namespaces[i]).filter(|n| n.size != 0);
    let end = u128::from(sqe.slba) + u128::from(sqe.nlb);
    let mut allowed = Vec::new();
    let Some(ns) = ns else {
        return Verdict::Deny {
            allowed: vec![ST_INVALID_NAMESPACE],
            write: k.write,
        };
    };
    if k.lba && end >= u128::from(ns.size) {
        allowed.push(ST_LBA_OUT_OF_RANGE);
    }
    let granted = q_ok
        && cfg.grants.iter().any(|g| {
            g.sqid == sqid
                && u32::from(g.nsid) == sqe.nsid
                && (!k.read || g.read)
                && (!k.write || g.write)
                && (!k.lba || (sqe.slba >= g.first && end <= u128::from(g.last)))
        });
    if !granted {
        allowed.push(ST_ACCESS_DENIED);
    }
    if !allowed.is_empty() {
        return Verdict::Deny {
            allowed,
            write: k.write,
        };
    }
    let cost = if k.data {
        (u64::from(sqe.nlb) + 1) << ns.lba_shift
    } else {
        0
    };
    Verdict::Admit {
        queue: usize::from(sqid) - 1,
        ns: ns_idx.unwrap(),
        cost,
        write: k.write,
    }
}

/// Where a buffered head stands in one cycle (hdl-gen/src/qos/mod.rs, Scheduling).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// A candidate of this cycle's decision.
    Eligible,
    /// Its buckets have budget, but its queue left debt so recently that the block may not
    /// know yet (the budget bit's lag): it may be a candidate or wait for budget.
    Maybe,
    /// Its channel is full (`dst_space_i` bit 0): passed over, spends nothing, and is not
    /// counted as waiting for budget, whatever its buckets say.
    NoChannel,
    /// Its channel has space but a bucket has no budget: counted in `wait_rd`/`wait_wr`.
    NoBudget,
}

/// What the block knows of a queue's own buckets in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueBudget {
    /// Budget, and the block knows it.
    Yes,
    /// Budget, regained within the lag the contract allows: the block may not know yet.
    Lagging,
    /// No budget (the block never believes otherwise).
    No,
}

/// The standing of a buffered head (of an enabled block) in one cycle: whether its channel
/// has space, what is known of its queue's buckets, and whether its namespace's buckets
/// (charged the cycle after each decision) have budget.
pub fn standing(channel_space: bool, queue: QueueBudget, ns: bool) -> Standing {
    match (channel_space, queue, ns) {
        (false, ..) => Standing::NoChannel,
        (true, QueueBudget::Yes, true) => Standing::Eligible,
        (true, QueueBudget::Lagging, true) => Standing::Maybe,
        _ => Standing::NoBudget,
    }
}

/// The contract's bound on the budget bit's lag: a queue whose buckets regained budget in
/// cycle x is known to have it from cycle `x + budget_lag(queues)` on.
pub fn budget_lag(queues: usize) -> u64 {
    queues as u64 + 2
}

/// A queue's budget as the block may know it: the exact buckets, and since when they have
/// had budget again after a charge left one in debt.
#[derive(Clone, Copy, Debug, Default)]
pub struct BudgetBit {
    in_debt: bool,
    regained: Option<u64>,
}

impl BudgetBit {
    /// After the charge of a command of this queue: `ok` is whether its buckets have budget
    /// after the spend.
    pub fn charged(&mut self, ok: bool) {
        self.in_debt = !ok;
        self.regained = None;
    }

    /// In cycle `t`, with the exact buckets' budget `ok` and a lag bound of `lag` cycles.
    pub fn at(&mut self, t: u64, ok: bool, lag: u64) -> QueueBudget {
        if !ok {
            return QueueBudget::No;
        }
        if !self.in_debt {
            return QueueBudget::Yes;
        }
        let x = *self.regained.get_or_insert(t);
        if t < x + lag {
            QueueBudget::Lagging
        } else {
            self.in_debt = false;
            QueueBudget::Yes
        }
    }
}

/// A debt-model token bucket, one [`DebtBucket::step`] per cycle: budget when the level is
/// `>= 0` or the rate is 0; a spend takes the whole cost; next level `min(L - spent + r, B)`.
#[derive(Clone, Debug)]
pub struct DebtBucket {
    frac: u32,
    limit: Limit,
    level: i128,
}

impl DebtBucket {
    /// A full bucket (as the block's are when it is enabled).
    pub fn full(frac: u32, limit: Limit) -> DebtBucket {
        DebtBucket {
            frac,
            limit,
            level: i128::from(limit.burst) << frac,
        }
    }

    /// The level, in `2^-frac` tokens.
    pub fn level(&self) -> i128 {
        self.level
    }

    /// Budget this cycle.
    pub fn ok(&self) -> bool {
        self.limit.rate == 0 || self.level >= 0
    }

    /// Ends a cycle in which `spent` whole tokens were taken.
    pub fn step(&mut self, spent: u64) {
        let full = i128::from(self.limit.burst) << self.frac;
        if self.limit.rate == 0 {
            self.level = full;
            return;
        }
        let next = self.level - (i128::from(spent) << self.frac) + i128::from(self.limit.rate);
        self.level = next.min(full);
    }
}

/// The largest excess over `rate * T + burst + max_cost` of any window of the spends `events`
/// (cycle, cost; cycles increasing), in `2^-frac` tokens; `<= 0` means every window keeps the
/// bound. Returns the excess and the window (first cycle, last cycle) where it is largest.
pub fn worst_window(frac: u32, limit: Limit, events: &[(u64, u64)]) -> (i128, u64, u64) {
    worst_window_debt(frac, limit, events, 1)
}

/// As [`worst_window`] for a bucket that may go into debt by `debt` commands: the bound is
/// `rate * T + burst + debt * max_cost` (a namespace bucket, charged the cycle after each
/// decision, has `debt` 2).
pub fn worst_window_debt(
    frac: u32,
    limit: Limit,
    events: &[(u64, u64)],
    debt: u64,
) -> (i128, u64, u64) {
    if limit.rate == 0 || events.is_empty() {
        return (i128::MIN, 0, 0);
    }
    let max_cost = events.iter().map(|e| e.1).max().unwrap_or(0);
    let allowance = (i128::from(limit.burst) + i128::from(debt * max_cost)) << frac;
    let r = i128::from(limit.rate);
    // Window from event j to event k: (S_k - S_{j-1}) << frac - r (t_k - t_j + 1).
    let mut best = (i128::MIN, 0, 0);
    let mut before = 0i128; // S_{j-1} << frac
    let mut min_start = (i128::MAX, 0u64); // min over j of (S_{j-1} << frac) - r t_j
    let mut sum = 0i128;
    for &(t, c) in events {
        let start = before - r * i128::from(t);
        if start < min_start.0 {
            min_start = (start, t);
        }
        sum += i128::from(c) << frac;
        before = sum;
        let excess = (sum - r * i128::from(t)) - min_start.0 - r - allowance;
        if excess > best.0 {
            best = (excess, min_start.1, t);
        }
    }
    best
}

/// The share of decisions weighted round robin gives each of `weights` (0's based) when all
/// are saturated: `(w + 1) / sum(w + 1)`.
pub fn wrr_shares(weights: &[u8]) -> Vec<f64> {
    let total: f64 = weights.iter().map(|&w| f64::from(w) + 1.0).sum();
    weights
        .iter()
        .map(|&w| (f64::from(w) + 1.0) / total)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqe_round_trips() {
        let s = Sqe {
            opcode: 2,
            cid: 0xbeef,
            nsid: 3,
            slba: 0x1122_3344_5566_7788,
            nlb: 7,
        };
        assert_eq!(Sqe::decode(&s.bytes(&[0xa5; 64])), s);
    }

    #[test]
    fn window_bound_holds_for_a_saturated_bucket() {
        let limit = Limit {
            rate: 3 << 15, // 1.5 tokens per cycle
            burst: 10,
        };
        let mut b = DebtBucket::full(16, limit);
        let mut ev = Vec::new();
        for t in 0..10_000u64 {
            let spend = if b.ok() { 7 } else { 0 };
            if spend > 0 {
                ev.push((t, spend));
            }
            b.step(spend);
        }
        assert!(worst_window(16, limit, &ev).0 <= 0);
        let total: u64 = ev.iter().map(|e| e.1).sum();
        assert!((total as f64 / 15_000.0 - 1.0).abs() < 0.01);
        // A bucket that overspends by one command breaks the bound.
        let mut bad = ev.clone();
        bad.insert(1, (ev[0].0, 17));
        bad.sort();
        assert!(worst_window(16, limit, &bad).0 > 0);
    }

    #[test]
    fn statuses() {
        let cfg = Config {
            queues: vec![QueueCfg::default(); 2],
            namespaces: vec![NsCfg {
                size: 100,
                lba_shift: 9,
                ..NsCfg::default()
            }],
            grants: vec![Grant {
                sqid: 1,
                nsid: 1,
                read: true,
                write: false,
                first: 10,
                last: 19,
            }],
        };
        let rd = |nsid, slba, nlb| Sqe {
            opcode: 2,
            cid: 1,
            nsid,
            slba,
            nlb,
        };
        assert_eq!(
            check(&cfg, 1, &rd(1, 10, 9)),
            Verdict::Admit {
                queue: 0,
                ns: 0,
                cost: 5120,
                write: false
            }
        );
        let deny = |v: Verdict| match v {
            Verdict::Deny { allowed, .. } => allowed,
            _ => vec![],
        };
        assert_eq!(deny(check(&cfg, 1, &rd(1, 10, 10))), vec![ST_ACCESS_DENIED]);
        assert_eq!(deny(check(&cfg, 2, &rd(1, 10, 0))), vec![ST_ACCESS_DENIED]);
        assert_eq!(
            deny(check(&cfg, 1, &rd(2, 10, 0))),
            vec![ST_INVALID_NAMESPACE]
        );
        assert_eq!(
            deny(check(&cfg, 1, &rd(1, 99, 1))),
            vec![ST_LBA_OUT_OF_RANGE, ST_ACCESS_DENIED]
        );
        let mut w = rd(1, 10, 0);
        w.opcode = 1;
        assert_eq!(deny(check(&cfg, 1, &w)), vec![ST_ACCESS_DENIED]);
    }
}
