//! Golden model of the parallel CRC block (hdl-gen `blocks::crc`): a bit-at-a-time reference CRC
//! for any algorithm in Williams' model (the reveng catalogue's terms), and the block's beat rule.
//!
//! The testbench does not depend on hdl-gen, so the algorithm's numbers are repeated here; the
//! check values in the tests tie both sides to the published values.

/// A CRC algorithm: width, polynomial, initial value, bit order and final XOR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrcSpec {
    /// CRC width in bits, 1 to 64.
    pub width: u32,
    /// Generator polynomial without its x^width term, most significant bit first.
    pub poly: u64,
    /// Register value before the first bit (unreflected).
    pub init: u64,
    /// Bytes enter least significant bit first.
    pub reflect_in: bool,
    /// The final register is bit-reversed before `xor_out`.
    pub reflect_out: bool,
    /// XORed into the final value.
    pub xor_out: u64,
}

/// CRC-32 (Ethernet FCS, RoCEv2 ICRC): check value `cbf43926`.
pub const CRC32: CrcSpec = CrcSpec {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0xffff_ffff,
    reflect_in: true,
    reflect_out: true,
    xor_out: 0xffff_ffff,
};

/// CRC-32C (Castagnoli; NVMe/TCP digests): check value `e3069283`.
pub const CRC32C: CrcSpec = CrcSpec {
    width: 32,
    poly: 0x1edc_6f41,
    init: 0xffff_ffff,
    reflect_in: true,
    reflect_out: true,
    xor_out: 0xffff_ffff,
};

impl CrcSpec {
    fn mask(&self) -> u64 {
        u64::MAX >> (64 - self.width)
    }

    /// The CRC of `data`.
    pub fn checksum(&self, data: &[u8]) -> u64 {
        let mut crc = self.start();
        crc.update(data);
        crc.value()
    }

    /// A running CRC over an empty message.
    pub fn start(&self) -> Crc {
        assert!(
            (1..=64).contains(&self.width),
            "CRC width {} is not 1 to 64",
            self.width
        );
        Crc {
            spec: *self,
            lfsr: self.init & self.mask(),
        }
    }
}

/// A CRC being computed: add bytes, read the finished value at any point.
#[derive(Clone, Debug)]
pub struct Crc {
    spec: CrcSpec,
    /// The unreflected shift register, most significant bit shifted out first.
    lfsr: u64,
}

impl Crc {
    /// Adds `data`, byte 0 first.
    pub fn update(&mut self, data: &[u8]) {
        let s = &self.spec;
        for &byte in data {
            for step in 0..8 {
                let bit = if s.reflect_in {
                    (byte >> step) & 1
                } else {
                    (byte >> (7 - step)) & 1
                };
                let feedback = ((self.lfsr >> (s.width - 1)) & 1) ^ u64::from(bit);
                self.lfsr = (self.lfsr << 1) & s.mask();
                if feedback == 1 {
                    self.lfsr ^= s.poly;
                }
            }
        }
    }

    /// The finished CRC of every byte added so far.
    pub fn value(&self) -> u64 {
        let s = &self.spec;
        let r = if s.reflect_out {
            self.lfsr.reverse_bits() >> (64 - s.width)
        } else {
            self.lfsr
        };
        r ^ s.xor_out
    }

    /// The block's running register (`crc_q`): the finished value before `xor_out`. For CRC-32
    /// this is Linux `crc32_le`'s running value.
    pub fn register(&self) -> u64 {
        self.value() ^ self.spec.xor_out
    }
}

/// How many bytes a beat with byte enables `keep` adds, in a block of `lanes` bytes per beat:
/// `keep` must be a contiguous run of ones from bit 0; anything else (zero included) adds none.
pub fn keep_bytes(keep: u64, lanes: u32) -> usize {
    let lanes_mask = if lanes >= 64 {
        u64::MAX
    } else {
        (1u64 << lanes) - 1
    };
    let keep = keep & lanes_mask;
    if keep != 0 && keep & keep.wrapping_add(1) == 0 {
        keep.count_ones() as usize
    } else {
        0
    }
}

/// The CRC block as its ports see it, one [`CrcBlock::beat`] per clock cycle.
#[derive(Clone, Debug)]
pub struct CrcBlock {
    spec: CrcSpec,
    lanes: u32,
    running: Crc,
}

impl CrcBlock {
    /// The block after reset, with `lanes` bytes per beat: `crc_o` is the CRC of no bytes.
    pub fn new(spec: CrcSpec, lanes: u32) -> CrcBlock {
        CrcBlock {
            spec,
            lanes,
            running: spec.start(),
        }
    }

    /// What `crc_o` shows now: the CRC of every byte added since the last start.
    pub fn crc(&self) -> u64 {
        self.running.value()
    }

    /// One clock edge with these inputs: `start` restarts before the beat, then, on `valid`,
    /// the first [`keep_bytes`] bytes of `data` (byte 0 = `data_i[7:0]`) are added.
    pub fn beat(&mut self, start: bool, valid: bool, data: &[u8], keep: u64) {
        if start {
            self.running = self.spec.start();
        }
        if valid {
            let n = keep_bytes(keep, self.lanes).min(data.len());
            self.running.update(&data[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn check_values() {
        assert_eq!(CRC32.checksum(CHECK), 0xcbf4_3926);
        assert_eq!(CRC32C.checksum(CHECK), 0xe306_9283);
        assert_eq!(CRC32C.checksum(&[0; 32]), 0x8a91_36aa);
        // RFC 3720 B.4, the other vectors.
        assert_eq!(CRC32C.checksum(&[0xff; 32]), 0x62a8_ab43);
        let ascending: Vec<u8> = (0..32).collect();
        assert_eq!(CRC32C.checksum(&ascending), 0x46dd_794e);
    }

    #[test]
    fn other_catalogue_algorithms() {
        let spec = |width, poly, init, refl, xor_out| CrcSpec {
            width,
            poly,
            init,
            reflect_in: refl,
            reflect_out: refl,
            xor_out,
        };
        // (spec, reveng check value)
        let cases = [
            (spec(16, 0x8005, 0, true, 0), 0xbb3d),       // CRC-16/ARC
            (spec(16, 0x1021, 0xffff, false, 0), 0x29b1), // CRC-16/IBM-3740
            (spec(16, 0x1021, 0, false, 0), 0x31c3),      // CRC-16/XMODEM
            (spec(5, 0x05, 0x1f, true, 0x1f), 0x19),      // CRC-5/USB
            (spec(8, 0x07, 0, false, 0), 0xf4),           // CRC-8/SMBUS
            (
                spec(32, 0x04c1_1db7, u64::from(u32::MAX), false, 0),
                0x0376_e6e7,
            ), // CRC-32/MPEG-2
            (
                spec(64, 0x42f0_e1eb_a9ea_3693, u64::MAX, true, u64::MAX),
                0x995d_c9bb_df19_39fa,
            ), // CRC-64/XZ
        ];
        for (s, check) in cases {
            assert_eq!(s.checksum(CHECK), check, "{s:?}");
        }
    }

    #[test]
    fn running_value_is_the_crc_of_the_prefix() {
        let mut c = CRC32.start();
        assert_eq!(c.value(), 0);
        c.update(b"1234");
        c.update(b"56789");
        assert_eq!(c.value(), 0xcbf4_3926);
        assert_eq!(c.register(), 0xcbf4_3926 ^ 0xffff_ffff);
        // The RoCEv2 ICRC seed: the register after 8 bytes of ff, as Linux starts it.
        let mut icrc = CRC32.start();
        icrc.update(&[0xff; 8]);
        assert_eq!(icrc.register(), 0xdebb_20e3);
    }

    #[test]
    fn keep_rule() {
        assert_eq!(keep_bytes(0b0000_0001, 8), 1);
        assert_eq!(keep_bytes(0b0111_1111, 8), 7);
        assert_eq!(keep_bytes(0xff, 8), 8);
        assert_eq!(keep_bytes(0, 8), 0);
        assert_eq!(keep_bytes(0b0000_0110, 8), 0, "does not start at byte 0");
        assert_eq!(keep_bytes(0b0000_0101, 8), 0, "a hole");
        assert_eq!(keep_bytes(u64::MAX, 64), 64);
        assert_eq!(keep_bytes(0xffff, 16), 16);
    }

    #[test]
    fn block_in_beats_with_keep() {
        for lanes in [1u32, 4, 8, 16] {
            let mut b = CrcBlock::new(CRC32C, lanes);
            for (i, chunk) in CHECK.chunks(lanes as usize).enumerate() {
                let mut beat = vec![0xa5; lanes as usize];
                beat[..chunk.len()].copy_from_slice(chunk);
                let keep = (1u64 << chunk.len()) - 1;
                // A beat that is not valid, or has a hole in keep, changes nothing.
                b.beat(false, false, &beat, keep);
                b.beat(false, true, &beat, 0b10);
                b.beat(i == 0, true, &beat, keep);
            }
            assert_eq!(b.crc(), 0xe306_9283, "{lanes} lanes");
            b.beat(true, false, &[], 0);
            assert_eq!(b.crc(), 0, "start alone clears");
        }
    }
}
