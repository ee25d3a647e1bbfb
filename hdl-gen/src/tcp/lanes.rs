//! Byte-lane buffers: a byte-addressed RAM split into eight memories one byte wide, byte
//! `A` of a region in lane `A mod 8` at word `A / 8`. Each lane has its own address, so the
//! eight bytes that follow any byte address are read or written in one cycle, whatever the
//! alignment (the TCP engine's sequence-addressed buffers: a segment starts anywhere).

use hdl_builder::prelude::*;
use hdl_builder::Mem;

/// Eight one-byte memories `<name>_l0` .. `<name>_l7`, in regions of `region_bytes` (a
/// power of two, at least 16) each: one per connection, or one.
pub struct Lanes {
    mems: Vec<Mem>,
    /// log2 of a region's bytes.
    region_bits: u32,
    /// The read port is made (one per buffer).
    read_made: bool,
    name: String,
}

impl Lanes {
    pub fn new(m: &mut ModuleBuilder, name: &str, regions: u64, region_bytes: u32) -> Lanes {
        let region_bits = clog2(u64::from(region_bytes));
        let depth = regions * u64::from(region_bytes) / 8;
        let mems = (0..8)
            .map(|l| m.memory(&format!("{name}_l{l}"), 8, depth))
            .collect();
        Lanes {
            mems,
            region_bits,
            read_made: false,
            name: name.to_string(),
        }
    }

    /// Lane `l`'s word address for the eight bytes from byte `word * 8 + a0` of region
    /// `region` (`None`: one region); an access wraps inside its region.
    fn addr(&self, region: Option<&Expr>, word: &Expr, a0: &Expr, l: u32) -> Expr {
        // Bytes at lanes below the start lane are in the next word.
        let w = if l == 7 {
            word.clone()
        } else {
            let wb = self.region_bits - 3;
            word.clone() + mux(a0.gt(u64::from(l)), lit(wb, 1), lit(wb, 0))
        };
        match region {
            Some(r) => cat([r.clone(), w]),
            None => w,
        }
    }

    /// The word and the lane of byte `off` (its low `region_bits`), as nets `<name>_<what>_word`
    /// and `<name>_<what>_lane`.
    fn split(&self, m: &mut ModuleBuilder, what: &str, off: &Expr) -> (Expr, Expr) {
        let word = m.net(
            &format!("{}_{what}_word", self.name),
            off.slice(self.region_bits - 1, 3),
        );
        let lane = m.net(&format!("{}_{what}_lane", self.name), off.slice(2, 0));
        (word.ex(), lane.ex())
    }

    /// Writes byte `i` of `data` (64 bits, byte `i` in bits `8i+7:8i`) at `off + i` for every
    /// bit `i` of `mask` (8 bits) that is set.
    pub fn write(
        &self,
        m: &mut ModuleBuilder,
        region: Option<&Expr>,
        off: &Expr,
        data: &Expr,
        mask: &Expr,
    ) {
        let (word, a0) = self.split(m, "wr", off);
        // Lane l takes byte (l - a0) mod 8: the data rotated up by a0 lanes.
        let rot = m.net(
            &format!("{}_wr_data", self.name),
            cat([data.clone(), data.clone()])
                .shr_by(lit(7, 64) - cat([a0.clone(), lit(3, 0)]).zext(7))
                .slice(63, 0),
        );
        let en = m.net(
            &format!("{}_wr_en", self.name),
            cat([mask.clone(), mask.clone()])
                .shr_by(lit(4, 8) - a0.zext(4))
                .slice(7, 0),
        );
        m.comment(en, "the mask rotated as the data: lane l's write enable");
        for (l, mem) in self.mems.iter().enumerate() {
            let l = l as u32;
            m.mem_write(
                *mem,
                en.bit(l),
                self.addr(region, &word, &a0, l),
                rot.slice(8 * l + 7, 8 * l),
            );
        }
    }

    /// When `en`, reads the eight bytes from `off`; the value returned holds them the cycle
    /// after (byte `i`, at `off + i`, in bits `8i+7:8i`) and keeps them until the next read.
    /// One read port per buffer.
    pub fn read(
        &mut self,
        m: &mut ModuleBuilder,
        en: &Expr,
        region: Option<&Expr>,
        off: &Expr,
    ) -> Expr {
        assert!(!self.read_made, "{}: one read port", self.name);
        self.read_made = true;
        let (word, a0) = self.split(m, "rd", off);
        let rot = m.reg(&format!("{}_rd_first", self.name), 3, 0);
        m.comment(rot.q, "the lane of the first byte read");
        m.assign(rot.d, mux(en.clone(), a0.clone(), rot.q.ex()));
        let words: Vec<Expr> = (0..8u32)
            .map(|l| {
                m.mem_read(
                    self.mems[l as usize],
                    en.clone(),
                    self.addr(region, &word, &a0, l),
                )
                .ex()
            })
            .collect();
        let all = cat(words.into_iter().rev());
        // Byte i comes from lane (rot + i) mod 8: the lanes rotated down by rot.
        let data = m.net(
            &format!("{}_rd_data", self.name),
            cat([all.clone(), all])
                .shr_by(cat([rot.q.ex(), lit(3, 0)]))
                .slice(63, 0),
        );
        m.comment(data, "the bytes read, the first in 7:0");
        data.ex()
    }
}
