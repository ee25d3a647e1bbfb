//! Golden model of the frame mux (`hdl-gen/src/chip/frame_mux.rs`, contract in
//! `hdl-gen/src/chip/mod.rs`, "The frame mux"): which engine a frame from the wire belongs to,
//! and what each side of the mux may deliver.

use std::collections::VecDeque;

/// The engine a frame from the wire is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    Roce,
    Tcp,
}

/// RoCEv2 (RoCE Annex A17): IPv4 (EtherType 0800h) without options (version 4, IHL 5), UDP
/// (protocol 17), destination port 4791. Everything else (ARP, ICMP, TCP, IPv4 with options,
/// other EtherTypes, frames too short to tell) is the TCP/IP engine's.
pub fn classify(f: &[u8]) -> Engine {
    let roce = f.len() >= 38
        && f[12..14] == [0x08, 0x00]
        && f[14] == 0x45
        && f[23] == 17
        && u16::from_be_bytes([f[36], f[37]]) == 4791;
    if roce {
        Engine::Roce
    } else {
        Engine::Tcp
    }
}

/// What the mux owes: ingress frames per engine in arrival order (a frame for an engine not
/// held is dropped and counted), egress frames per engine in their order, each leaving whole.
#[derive(Debug, Default)]
pub struct FrameMux {
    pub roce: bool,
    pub tcp: bool,
    to_engine: [VecDeque<Vec<u8>>; 2],
    from_engine: [VecDeque<Vec<u8>>; 2],
    /// Frames for an engine not held.
    pub dropped: u64,
}

fn ix(e: Engine) -> usize {
    match e {
        Engine::Roce => 0,
        Engine::Tcp => 1,
    }
}

impl FrameMux {
    /// A mux holding the engines named.
    pub fn new(roce: bool, tcp: bool) -> FrameMux {
        FrameMux {
            roce,
            tcp,
            ..FrameMux::default()
        }
    }

    /// The wire delivered frame `f` to the mux.
    pub fn from_wire(&mut self, f: &[u8]) {
        let e = classify(f);
        let held = match e {
            Engine::Roce => self.roce,
            Engine::Tcp => self.tcp,
        };
        if held {
            self.to_engine[ix(e)].push_back(f.to_vec());
        } else {
            self.dropped += 1;
        }
    }

    /// Engine `e` got frame `f`: the oldest frame owed to it.
    pub fn to_engine(&mut self, e: Engine, f: &[u8]) -> Result<(), String> {
        match self.to_engine[ix(e)].pop_front() {
            Some(w) if w == f => Ok(()),
            Some(w) => Err(format!(
                "{e:?} engine got a frame of {} bytes {:02x?}, expected {} bytes {:02x?}",
                f.len(),
                &f[..f.len().min(40)],
                w.len(),
                &w[..w.len().min(40)]
            )),
            None => Err(format!(
                "{e:?} engine got a frame of {} bytes {:02x?} ({:?}), none was owed to it",
                f.len(),
                &f[..f.len().min(40)],
                classify(f)
            )),
        }
    }

    /// Engine `e` handed frame `f` to the mux.
    pub fn from_engine(&mut self, e: Engine, f: &[u8]) {
        self.from_engine[ix(e)].push_back(f.to_vec());
    }

    /// The wire got frame `f`: the oldest frame of one engine, whole (an interleaved frame
    /// matches neither). Returns that engine.
    pub fn to_wire(&mut self, f: &[u8]) -> Result<Engine, String> {
        for e in [Engine::Roce, Engine::Tcp] {
            if self.from_engine[ix(e)].front().is_some_and(|w| w == f) {
                self.from_engine[ix(e)].pop_front();
                return Ok(e);
            }
        }
        Err(format!(
            "the wire got a frame of {} bytes {:02x?}, the oldest frame of neither engine (heads: RoCE {:?} bytes, TCP {:?} bytes)",
            f.len(),
            &f[..f.len().min(40)],
            self.from_engine[0].front().map(Vec::len),
            self.from_engine[1].front().map(Vec::len)
        ))
    }

    /// Frames owed, both ways.
    pub fn owed(&self) -> usize {
        self.to_engine
            .iter()
            .chain(&self.from_engine)
            .map(VecDeque::len)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roce_needs_every_field() {
        let mut f = vec![0u8; 60];
        f[12] = 0x08;
        f[14] = 0x45;
        f[23] = 17;
        f[36..38].copy_from_slice(&4791u16.to_be_bytes());
        assert_eq!(classify(&f), Engine::Roce);
        assert_eq!(classify(&f[..37]), Engine::Tcp);
        for (at, v) in [(12, 0x86), (14, 0x46), (23, 6), (37, 0xb8)] {
            let mut g = f.clone();
            g[at] = v;
            assert_eq!(classify(&g), Engine::Tcp, "byte {at} = {v:#x}");
        }
    }
}
