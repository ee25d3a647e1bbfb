//! The front end's latency histograms as `hdl-gen/src/nvme/mod.rs` ("Latency histograms")
//! defines them: which commands are timed, from which doorbell to which CQE write response,
//! and the bin each lands in. It works on the instants the host and its bus see (doorbell
//! acceptance on BAR0, the cycle a CQE's post was decided, its write response), so it knows
//! cycles but nothing inside the front end.

/// Histograms: read, write, other.
pub const DIRS: usize = 3;
/// Bins per histogram.
pub const BINS: usize = 32;

/// The histograms: `[direction][bin]` counts.
pub type Histograms = [[u32; BINS]; DIRS];

/// The direction of a command: 0 read (02h), 1 write (01h), 2 other (every other opcode, and
/// a command whose SQE fetch failed).
pub fn direction(opcode: u8, fetch_failed: bool) -> usize {
    match opcode {
        _ if fetch_failed => 2,
        0x02 => 0,
        0x01 => 1,
        _ => 2,
    }
}

/// Bin of a latency of `cycles` (at least 1): the index of its highest set bit.
pub fn bin(cycles: u64) -> usize {
    (63 - cycles.max(1).leading_zeros() as usize).min(BINS - 1)
}

/// One tail doorbell of an SQ, as the host wrote it.
#[derive(Clone, Debug)]
pub struct Doorbell {
    /// Cycle its BAR0 write was accepted.
    pub accepted: u64,
    /// Entries the SQ had been given before it (since its creation): the first entry it
    /// publishes is entry `before` of [`SqLife::entries`].
    pub before: u64,
}

/// One SQ from its creation to its deletion or the controller reset that ended it.
#[derive(Clone, Debug)]
pub struct SqLife {
    /// SQ id (never 0: the admin queue is not timed).
    pub qid: u16,
    /// Its tail doorbells in order (each publishes at least one entry).
    pub doorbells: Vec<Doorbell>,
    /// Per entry given to the SQ, in order: (CID, direction).
    pub entries: Vec<(u16, usize)>,
    /// No CQE posted from this cycle on belongs to it (the end of the controller reset after
    /// it, or never).
    pub end: u64,
}

/// One CQE the front end wrote.
#[derive(Clone, Copy, Debug)]
pub struct CqeWrite {
    /// The cycle its post was decided (the cycle before its AW valid rose).
    pub post: u64,
    /// The cycle its write response was taken.
    pub response: u64,
    /// The response was OKAY.
    pub ok: bool,
    /// Its SQ id and CID.
    pub sqid: u16,
    /// Its CID.
    pub cid: u16,
}

/// What the histograms must hold after these SQ lives and CQE writes (from a clear, with
/// no write response during a clear).
pub fn histograms(sqs: &[SqLife], writes: &[CqeWrite]) -> Histograms {
    let mut h = [[0u32; BINS]; DIRS];
    for sq in sqs {
        // `None`: free; `Some(None)`: busy for good; `Some(Some(p))`: busy up to the post p.
        let mut busy: Option<Option<u64>> = None;
        for d in &sq.doorbells {
            if let Some(Some(p)) = busy {
                if p < d.accepted {
                    busy = None;
                }
            }
            if busy.is_some() {
                continue;
            }
            let Some(&(cid, dir)) = sq.entries.get(d.before as usize) else {
                busy = Some(None);
                continue;
            };
            let w = writes.iter().find(|w| {
                w.sqid == sq.qid && w.cid == cid && w.post > d.accepted && w.post < sq.end
            });
            busy = Some(w.map(|w| w.post));
            if let Some(w) = w.filter(|w| w.ok) {
                let b = &mut h[dir][bin(w.response - d.accepted)];
                *b = b.saturating_add(1);
            }
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins() {
        assert_eq!(bin(1), 0);
        assert_eq!(bin(2), 1);
        assert_eq!(bin(3), 1);
        assert_eq!(bin(1023), 9);
        assert_eq!(bin(1024), 10);
        assert_eq!(bin(u64::MAX), 31);
    }

    #[test]
    fn one_at_a_time() {
        let sq = SqLife {
            qid: 1,
            doorbells: vec![
                Doorbell {
                    accepted: 10,
                    before: 0,
                },
                // While entry 0 is in flight: not timed.
                Doorbell {
                    accepted: 20,
                    before: 1,
                },
                // In the cycle entry 0's post is decided: still busy.
                Doorbell {
                    accepted: 40,
                    before: 2,
                },
                // After it: timed.
                Doorbell {
                    accepted: 41,
                    before: 3,
                },
            ],
            entries: vec![(7, 0), (8, 1), (9, 1), (10, 1)],
            end: u64::MAX,
        };
        let w = |post, response, cid| CqeWrite {
            post,
            response,
            ok: true,
            sqid: 1,
            cid,
        };
        let h = histograms(
            &[sq],
            &[w(40, 45, 7), w(42, 50, 8), w(43, 60, 9), w(44, 61, 10)],
        );
        assert_eq!(h[0][5], 1, "entry 0: 45 - 10 = 35 cycles");
        assert_eq!(h[1][4], 1, "entry 3: 61 - 41 = 20 cycles");
        assert_eq!(h.iter().flatten().sum::<u32>(), 2);
    }
}
