//! AXI4-Lite slave: a 32-bit register file bound to a model's master port by prefix, with
//! random handshake delays and checks of the master's side of the protocol.
//!
//! It drives `<prefix>_awready_i`, `_wready_i`, `_bvalid_i`, `_bresp_i`, `_arready_i`,
//! `_rvalid_i`, `_rdata_i`, `_rresp_i` and watches `_awvalid_o`, `_awaddr_o`, `_wvalid_o`,
//! `_wdata_o`, `_wstrb_o`, `_bready_o`, `_arvalid_o`, `_araddr_o`, `_rready_o`.
//!
//! Behaviour: one write and one read at a time, like the generated CSR blocks. `awready`,
//! `wready` and `arready` are raised at random (`stall_percent` of the cycles low) while the
//! slave can take that half of an access; `bvalid` and `rvalid` rise after a random delay
//! (0 to `max_delay` cycles after the request is complete) and stay up, with their payload,
//! until `bready`/`rready`. Bits `[1:0]` of the address are ignored. A word is either mapped
//! (written through `wstrb`, read back; a never-written word reads [`AxilSlave::initial`]) or,
//! when [`AxilSlave::unmapped`] says so, answers SLVERR, is not written and reads 0, as the
//! `regs.rs` CSR modules do for an offset without a register.
//!
//! Checks, recorded in `violations`: `valid` held with a stable payload until `ready` on AW, W
//! and AR; `awvalid` and `wvalid` raised together for each write (the CSR modules accept a
//! write only with both); no second write (read) presented before the response of the first.
//! Every access carried out is appended to `log` with the address the slave saw.

use super::{Dir, Hold, Ports, Resp};
use crate::rng::Rng;
use crate::sim::{Component, Signal};
use std::collections::BTreeMap;

/// Timing of an [`AxilSlave`].
#[derive(Clone, Debug)]
pub struct AxilSlaveConfig {
    /// Seed of the random delays, and of the initial contents and the unmapped words.
    pub seed: u64,
    /// Percent of cycles `awready`, `wready` and `arready` are each held low.
    pub stall_percent: u8,
    /// Longest wait, in cycles, before `bvalid`/`rvalid` rise.
    pub max_delay: u8,
    /// Percent of the words that are unmapped (answer SLVERR).
    pub unmapped_percent: u8,
}

/// An access the slave carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlaveAccess {
    /// Cycle of the last request handshake.
    pub cycle: u64,
    /// Read or write.
    pub dir: Dir,
    /// The address the slave saw (all its bits).
    pub addr: u64,
    /// Write: the data on the bus. Read: the data returned.
    pub data: u32,
    /// Write strobes (0xf for a read).
    pub strb: u8,
    /// The response given.
    pub resp: Resp,
}

/// The slave component (see the module documentation).
pub struct AxilSlave {
    awvalid: Signal,
    awaddr: Signal,
    awready: Signal,
    wvalid: Signal,
    wdata: Signal,
    wstrb: Signal,
    wready: Signal,
    bvalid: Signal,
    bresp: Signal,
    bready: Signal,
    arvalid: Signal,
    araddr: Signal,
    arready: Signal,
    rvalid: Signal,
    rdata: Signal,
    rresp: Signal,
    rready: Signal,
    cfg: AxilSlaveConfig,
    rng: Rng,
    /// Words written since the start (by word index); others read [`AxilSlave::initial`].
    pub mem: BTreeMap<u64, u32>,
    // The write being collected or answered.
    aw_got: Option<(u64, u64)>,
    w_got: Option<(u32, u8)>,
    b_out: Option<(Resp, u64)>,
    b_wait: u8,
    in_write: bool,
    aw_hold: Hold<u64>,
    w_hold: Hold<(u64, u64)>,
    // The read being answered.
    r_out: Option<(u32, Resp)>,
    r_wait: u8,
    ar_hold: Hold<u64>,
    /// Every access carried out, in order.
    pub log: Vec<SlaveAccess>,
    /// Breaches of the protocol by the master.
    pub violations: Vec<String>,
}

/// A 64-bit mix of `a` and `b` (SplitMix64's finalizer), for contents that depend on the seed
/// and the word.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl AxilSlave {
    /// A slave on the master port `prefix` of `ports`.
    #[track_caller]
    pub fn new(ports: &impl Ports, prefix: &str, cfg: AxilSlaveConfig) -> AxilSlave {
        let p = |name: &str, dir: &str| ports.port(&format!("{prefix}_{name}_{dir}"));
        let s = AxilSlave {
            awvalid: p("awvalid", "o"),
            awaddr: p("awaddr", "o"),
            awready: p("awready", "i"),
            wvalid: p("wvalid", "o"),
            wdata: p("wdata", "o"),
            wstrb: p("wstrb", "o"),
            wready: p("wready", "i"),
            bvalid: p("bvalid", "i"),
            bresp: p("bresp", "i"),
            bready: p("bready", "o"),
            arvalid: p("arvalid", "o"),
            araddr: p("araddr", "o"),
            arready: p("arready", "i"),
            rvalid: p("rvalid", "i"),
            rdata: p("rdata", "i"),
            rresp: p("rresp", "i"),
            rready: p("rready", "o"),
            rng: Rng::new(cfg.seed),
            cfg,
            mem: BTreeMap::new(),
            aw_got: None,
            w_got: None,
            b_out: None,
            b_wait: 0,
            in_write: false,
            aw_hold: Hold::default(),
            w_hold: Hold::default(),
            r_out: None,
            r_wait: 0,
            ar_hold: Hold::default(),
            log: Vec::new(),
            violations: Vec::new(),
        };
        assert_eq!(s.wdata.width(), 32, "{prefix}: a 32-bit AXI4-Lite slave");
        s.idle();
        s
    }

    /// The value of word `word` (byte address / 4) before any write, for `seed`.
    pub fn initial(seed: u64, word: u64) -> u32 {
        mix(seed, word) as u32
    }

    /// Whether word `word` is unmapped (answers SLVERR) for `seed` and `percent`.
    pub fn unmapped(seed: u64, percent: u8, word: u64) -> bool {
        mix(seed ^ 0x5bd1_e995, word) % 100 < u64::from(percent)
    }

    fn is_unmapped(&self, word: u64) -> bool {
        Self::unmapped(self.cfg.seed, self.cfg.unmapped_percent, word)
    }

    fn read_word(&self, word: u64) -> u32 {
        self.mem
            .get(&word)
            .copied()
            .unwrap_or_else(|| Self::initial(self.cfg.seed, word))
    }

    fn idle(&self) {
        for s in [
            &self.awready,
            &self.wready,
            &self.bvalid,
            &self.bresp,
            &self.arready,
            &self.rvalid,
            &self.rdata,
            &self.rresp,
        ] {
            s.set(0);
        }
    }

    fn delay(&mut self) -> u8 {
        self.rng.below(u64::from(self.cfg.max_delay) + 1) as u8
    }

    /// Carries out the write whose address and data are both in.
    fn write(&mut self, cycle: u64, addr: u64, data: u32, strb: u8) {
        let word = addr >> 2;
        let resp = if self.is_unmapped(word) {
            Resp::SlvErr
        } else {
            let mut v = self.read_word(word);
            for lane in 0..4 {
                if strb >> lane & 1 == 1 {
                    let m = 0xffu32 << (8 * lane);
                    v = (v & !m) | (data & m);
                }
            }
            self.mem.insert(word, v);
            Resp::Okay
        };
        self.log.push(SlaveAccess {
            cycle,
            dir: Dir::Write,
            addr,
            data,
            strb,
            resp,
        });
        self.b_out = Some((resp, cycle));
        self.b_wait = self.delay();
    }
}

impl Component for AxilSlave {
    fn sample(&mut self, cycle: u64) {
        let mut v = std::mem::take(&mut self.violations);
        // Write response.
        if self.bvalid.is_high() && self.bready.is_high() {
            self.b_out = None;
            self.in_write = false;
        }
        // Write request: AW and W rise together for each write.
        let (awv, wv) = (self.awvalid.is_high(), self.wvalid.is_high());
        if (awv || wv) && !self.in_write {
            if !(awv && wv) {
                v.push(format!(
                    "cycle {cycle}: a write began with {} alone (AWVALID and WVALID rise together)",
                    if awv { "AWVALID" } else { "WVALID" }
                ));
            }
            self.in_write = true;
        }
        let awaddr = &self.awaddr;
        let aw = self.aw_hold.observe(
            cycle,
            "AW",
            awv,
            self.awready.is_high(),
            || awaddr.get(),
            &mut v,
        );
        let (wdata, wstrb) = (&self.wdata, &self.wstrb);
        let w = self.w_hold.observe(
            cycle,
            "W",
            wv,
            self.wready.is_high(),
            || (wdata.get(), wstrb.get()),
            &mut v,
        );
        if awv && (self.aw_got.is_some() || self.b_out.is_some()) && aw.is_none() {
            v.push(format!(
                "cycle {cycle}: AW: a second write address before the response of the first"
            ));
        }
        if wv && (self.w_got.is_some() || self.b_out.is_some()) && w.is_none() {
            v.push(format!(
                "cycle {cycle}: W: second write data before the response of the first"
            ));
        }
        if let Some(a) = aw {
            self.aw_got = Some((a, cycle));
        }
        if let Some((d, s)) = w {
            self.w_got = Some((d as u32, s as u8));
        }
        if let (Some((a, _)), Some((d, s))) = (self.aw_got, self.w_got) {
            self.aw_got = None;
            self.w_got = None;
            self.write(cycle, a, d, s);
        }
        // Read response, then request.
        if self.rvalid.is_high() && self.rready.is_high() {
            self.r_out = None;
        }
        let arv = self.arvalid.is_high();
        let araddr = &self.araddr;
        let ar = self.ar_hold.observe(
            cycle,
            "AR",
            arv,
            self.arready.is_high(),
            || araddr.get(),
            &mut v,
        );
        if arv && self.r_out.is_some() && ar.is_none() {
            v.push(format!(
                "cycle {cycle}: AR: a second read before the response of the first"
            ));
        }
        if let Some(a) = ar {
            let word = a >> 2;
            let (data, resp) = if self.is_unmapped(word) {
                (0, Resp::SlvErr)
            } else {
                (self.read_word(word), Resp::Okay)
            };
            self.log.push(SlaveAccess {
                cycle,
                dir: Dir::Read,
                addr: a,
                data,
                strb: 0xf,
                resp,
            });
            self.r_out = Some((data, resp));
            self.r_wait = self.delay();
        }
        self.violations = v;
    }

    fn drive(&mut self, _cycle: u64) {
        let stall = self.cfg.stall_percent;
        // Requests: ready only while that half of an access can be taken.
        let aw_free = self.aw_got.is_none() && self.b_out.is_none();
        let w_free = self.w_got.is_none() && self.b_out.is_none();
        self.awready
            .set(u64::from(aw_free && !self.rng.chance(stall)));
        self.wready
            .set(u64::from(w_free && !self.rng.chance(stall)));
        let ar_free = self.r_out.is_none();
        self.arready
            .set(u64::from(ar_free && !self.rng.chance(stall)));
        // Responses: after their delay, held until taken.
        match self.b_out {
            Some((resp, _)) if self.b_wait == 0 => {
                self.bvalid.set(1);
                self.bresp.set(resp.bits());
            }
            Some(_) => {
                self.b_wait -= 1;
                self.bvalid.set(0);
            }
            None => self.bvalid.set(0),
        }
        match self.r_out {
            Some((data, resp)) if self.r_wait == 0 => {
                self.rvalid.set(1);
                self.rdata.set(u64::from(data));
                self.rresp.set(resp.bits());
            }
            Some(_) => {
                self.r_wait -= 1;
                self.rvalid.set(0);
            }
            None => self.rvalid.set(0),
        }
    }

    fn reset(&mut self) {
        // The register file keeps its contents (it stands for blocks outside the reset of the
        // master); accesses in flight are forgotten.
        self.aw_got = None;
        self.w_got = None;
        self.b_out = None;
        self.in_write = false;
        self.aw_hold.clear();
        self.w_hold.clear();
        self.r_out = None;
        self.ar_hold.clear();
        self.idle();
    }
}
