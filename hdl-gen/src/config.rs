//! The chip configuration: a TOML file, parsed strictly and checked against hardware and NVMe
//! limits before anything is generated.

use hdl_builder::ResetStyle;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// A configuration that cannot be used, with the file, the key and what is allowed.
#[derive(Debug)]
pub struct ConfigError {
    /// The configuration file.
    pub file: PathBuf,
    /// The dotted key at fault (`nvme.max_queue_depth`), or empty when the file is unreadable.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}: {}: {}", self.file.display(), self.key, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Reset style as written in the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reset {
    /// Asynchronous assert, active low (`rst_ni`); the default.
    AsyncLow,
    /// Asynchronous assert, active high (`rst_i`).
    AsyncHigh,
    /// Synchronous, active low (`rst_ni`).
    SyncLow,
    /// Synchronous, active high (`rst_i`).
    SyncHigh,
}

impl From<Reset> for ResetStyle {
    fn from(r: Reset) -> ResetStyle {
        match r {
            Reset::AsyncLow => ResetStyle::AsyncLow,
            Reset::AsyncHigh => ResetStyle::AsyncHigh,
            Reset::SyncLow => ResetStyle::SyncLow,
            Reset::SyncHigh => ResetStyle::SyncHigh,
        }
    }
}

/// `[chip]`: naming and chip-wide conventions.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// Design name: names the file list (`<name>.f`) and the FuseSoC core (`<name>.core`).
    pub name: String,
    /// Reset style of every register in the chip.
    pub reset: Reset,
    /// The fabric transports the chip top holds: `roce`, `nvme_tcp`, or both.
    pub transports: Vec<Transport>,
    /// The transport whose channels the routing table binds the I/O queues to after reset
    /// (SQ y to channel y - 1); one of `transports`.
    pub default_transport: Transport,
}

/// A fabric transport of the chip top.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// NVMe over RDMA on RoCEv2 (`[roce]`).
    Roce,
    /// NVMe/TCP (`[nvme_tcp]`).
    NvmeTcp,
}

impl Transport {
    /// The name used in the configuration and in port and register names.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Roce => "roce",
            Transport::NvmeTcp => "nvme_tcp",
        }
    }
}

/// `[nvme]`: the NVMe controller the host sees.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nvme {
    /// I/O submission/completion queue pairs, 1 to 65535.
    pub io_queue_pairs: u32,
    /// Largest queue size in entries (CAP.MQES + 1): a power of two, 2 to 65536.
    pub max_queue_depth: u32,
    /// CAP.DSTRD: doorbells are `4 << doorbell_stride` bytes apart, 0 to 15.
    pub doorbell_stride: u32,
    /// MSI-X vectors of the front end (interrupt coalescing state per vector), 1 to 256.
    pub interrupt_vectors: u32,
    /// Largest number of SQEs fetched in one AXI burst (doorbell batching), 1 to 64, and at
    /// most 256 beats of `dma.data_width`.
    pub fetch_burst: u32,
    /// SQEs the fetch buffer holds (bounds the SQ reads in flight), fetch_burst to 256.
    pub fetch_slots: u32,
}

/// `[csr]`: the control and status register windows of the chip's blocks.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Csr {
    /// Address bits of each block's CSR window (window = 2^n bytes), 6 to 24.
    pub addr_width: u32,
}

/// `[stdlib]`: the standard-block instances emitted for verification and reuse.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stdlib {
    /// Data width of the emitted skid buffer, 1 to 1024 bits.
    pub skid_buffer_width: u32,
    /// Counter width of the emitted interval timer, 2 to 64 bits.
    pub interval_timer_width: u32,
    /// Data width of the emitted CRC-32 and CRC-32C blocks: a multiple of 8 from 8 to 512 bits.
    pub crc_data_width: u32,
    /// Width of a token bucket request's cost in whole tokens, 1 to 64 bits.
    pub token_bucket_cost_width: u32,
    /// Width of a token bucket's capacity in whole tokens, 1 to 64 bits.
    pub token_bucket_token_bits: u32,
    /// Fraction bits of a token bucket's rate (tokens per cycle), 0 to 32.
    pub token_bucket_frac_bits: u32,
    /// Word width of the emitted FIFOs (standard and first-word-fall-through), 1 to 1024 bits.
    pub fifo_width: u32,
    /// Depth of the emitted FIFOs in words, 2 to 65536 (any depth, not only powers of two).
    pub fifo_depth: u32,
    /// Requesters of the emitted round-robin and weighted round-robin arbiters, 1 to 64.
    pub arbiter_requesters: u32,
    /// Weight width of the emitted weighted round-robin arbiter, 1 to 32 bits.
    pub arbiter_weight_width: u32,
}

/// `[dma]`: the DMA engine (descriptor walker and mover).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dma {
    /// AXI4 and stream data width in bits: 64, 128, 256 or 512.
    pub data_width: u32,
    /// Transfer tag width, 1 to 8 bits.
    pub tag_width: u32,
    /// Width of a transfer length in bytes, 14 to 32: transfers up to 2^len_width - 1 bytes, so
    /// MDTS is 2^(len_width - 1) bytes (`nvme::mdts_for_len_width`).
    pub len_width: u32,
    /// AXI4 read bursts the mover keeps in flight, 1 to 32.
    pub max_reads: u32,
    /// AXI4 ID width of the engine's master port, 2 to 8 bits.
    pub id_width: u32,
}

/// `[nvme_tcp]`: the NVMe/TCP protocol engine.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvmeTcp {
    /// Byte-stream width in bits: 64, 128 or 256.
    pub data_width: u32,
    /// Connections (one per I/O queue pair), 2 to 16.
    pub connections: u32,
    /// Commands in flight per connection, 1 to 64.
    pub outstanding: u32,
    /// Whether header and data digests may be negotiated.
    pub digests: bool,
    /// Bytes of C2HData payload each connection holds (a power of two, 2 beats to 65536): with
    /// data digests, a C2HData is held whole until its digest is checked, so it may carry at
    /// most this many bytes. Either way a payload goes to host memory in moves of half this,
    /// each issued once held whole.
    pub c2h_hold_bytes: u32,
    /// Largest write whose data goes in the CapsuleCmd (in-capsule data), 0 (never) to 65536,
    /// a multiple of 16: the target must accept it (IOCCSZ * 16 - 64 bytes or more).
    pub in_capsule_bytes: u32,
}

/// `[roce]`: the RoCEv2 transport engine (NVMe over RDMA).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roce {
    /// Ethernet stream width in bits: 64.
    pub data_width: u32,
    /// Queue pairs, 1 to 8 (SQ id q+1 on QP q).
    pub qps: u32,
    /// Commands in flight per queue pair, 1 to 16.
    pub outstanding: u32,
    /// Path MTU after reset, and the largest a QP's CSR may select, in bytes: 256, 512, 1024,
    /// 2048 or 4096. It sizes the RDMA WRITE payload buffer.
    pub mtu: u32,
    /// In-capsule data: a Write of at most this many bytes whose capsule (64-byte SQE and the
    /// data) fits one SEND Only at its QP's MTU carries its data in the capsule; 0: never.
    /// At most the target's IOCCSZ * 16 - 64; a multiple of 16, up to 65536.
    pub in_capsule_bytes: u32,
}

/// `[tcp]`: the TCP/IP engine under the NVMe/TCP engine (its stream width and connection count
/// are the NVMe/TCP engine's).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tcp {
    /// Transmit buffer per connection in bytes (unacknowledged bytes wait there): a power of
    /// two, 1024 to 65536.
    pub tx_buffer_bytes: u32,
    /// Receive buffer per connection in bytes (the window advertised is its free space): a
    /// power of two, 1024 to 65536.
    pub rx_buffer_bytes: u32,
    /// Entries of the ARP cache, 2 to 16.
    pub arp_entries: u32,
    /// Largest ICMP echo request answered (ICMP header and data), bytes: a power of two, 64 to
    /// 2048.
    pub echo_bytes: u32,
}

/// `[qos]`: the QoS arbiter and namespace isolation block.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Qos {
    /// I/O submission queues the block serves (SQ ids 1 to `queues`), 2 to 4096 (per-queue state in RAMs).
    pub queues: u32,
    /// Namespaces the block polices (NSIDs 1 to `namespaces`), 1 to 64.
    pub namespaces: u32,
    /// Entries of the grant table, 1 to 64.
    pub grants: u32,
    /// Commands buffered per queue: 2, 4, 8 or 16.
    pub queue_depth: u32,
    /// Width of each counter, 16 to 32 bits (counters wrap).
    pub counter_width: u32,
    /// The chip clock in MHz, 1 to 2000: only for reports (`testbench bench` converts rates
    /// per cycle to bytes per second with it); the hardware counts cycles.
    pub clock_mhz: u32,
}

/// A whole chip configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Chip-wide settings.
    pub chip: Chip,
    /// NVMe controller parameters.
    pub nvme: Nvme,
    /// CSR windows.
    pub csr: Csr,
    /// Standard-block instances.
    pub stdlib: Stdlib,
    /// The DMA engine.
    pub dma: Dma,
    /// The NVMe/TCP engine.
    pub nvme_tcp: NvmeTcp,
    /// The TCP/IP engine.
    pub tcp: Tcp,
    /// The QoS arbiter.
    pub qos: Qos,
    /// The RoCEv2 engine.
    pub roce: Roce,
}

fn range(file: &Path, key: &str, v: u32, lo: u32, hi: u32, why: &str) -> Result<(), ConfigError> {
    if v < lo || v > hi {
        return Err(ConfigError {
            file: file.to_path_buf(),
            key: key.to_string(),
            message: format!("{v} is out of range; allowed {lo} to {hi}{why}"),
        });
    }
    Ok(())
}

impl Config {
    /// Reads and checks a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            key: String::new(),
            message: format!("cannot read the configuration: {e}"),
        })?;
        Config::parse(path, &text)
    }

    /// Parses and checks configuration text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let cfg: Config = toml::from_str(text).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            key: e.span().map(|s| key_at(text, s.start)).unwrap_or_default(),
            message: e.to_string().trim_end().to_string(),
        })?;
        cfg.validate(path)?;
        Ok(cfg)
    }

    /// Checks every value against what the hardware and the NVMe specification allow.
    pub fn validate(&self, file: &Path) -> Result<(), ConfigError> {
        let name = &self.chip.name;
        let legal = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !legal {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "chip.name".into(),
                message: format!(
                    "`{name}` is not a usable name; use lower_snake_case starting with a letter"
                ),
            });
        }
        let t = &self.chip.transports;
        let mut sorted = t.clone();
        sorted.sort();
        sorted.dedup();
        if t.is_empty() || sorted.len() != t.len() {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "chip.transports".into(),
                message: format!(
                    "{t:?} is not allowed; name each transport the chip holds once: [\"roce\"], [\"nvme_tcp\"] or [\"roce\", \"nvme_tcp\"]"
                ),
            });
        }
        if !t.contains(&self.chip.default_transport) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "chip.default_transport".into(),
                message: format!(
                    "`{}` is not among chip.transports; the default must be a transport the chip holds",
                    self.chip.default_transport.name()
                ),
            });
        }
        let n = &self.nvme;
        range(
            file,
            "nvme.io_queue_pairs",
            n.io_queue_pairs,
            1,
            65535,
            " (NVMe queue identifiers are 16 bits and queue 0 is the admin queue)",
        )?;
        range(
            file,
            "nvme.max_queue_depth",
            n.max_queue_depth,
            2,
            65536,
            " (CAP.MQES is 0's based and 16 bits: the NVMe maximum is 65536 entries)",
        )?;
        if !n.max_queue_depth.is_power_of_two() {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "nvme.max_queue_depth".into(),
                message: format!(
                    "{} is not a power of two; allowed 2, 4, 8, ... 65536",
                    n.max_queue_depth
                ),
            });
        }
        range(
            file,
            "nvme.doorbell_stride",
            n.doorbell_stride,
            0,
            15,
            " (CAP.DSTRD is 4 bits)",
        )?;
        range(
            file,
            "nvme.interrupt_vectors",
            n.interrupt_vectors,
            1,
            256,
            "",
        )?;
        let beats = 512 / self.dma.data_width.clamp(64, 512);
        range(
            file,
            "nvme.fetch_burst",
            n.fetch_burst,
            1,
            (256 / beats).min(64),
            " (one AXI burst carries at most 256 beats and never crosses 4 KiB: 64 SQEs)",
        )?;
        range(
            file,
            "nvme.fetch_slots",
            n.fetch_slots,
            n.fetch_burst.max(2),
            256,
            " (at least fetch_burst)",
        )?;
        range(file, "csr.addr_width", self.csr.addr_width, 6, 24, "")?;
        range(
            file,
            "stdlib.skid_buffer_width",
            self.stdlib.skid_buffer_width,
            1,
            1024,
            "",
        )?;
        range(
            file,
            "stdlib.interval_timer_width",
            self.stdlib.interval_timer_width,
            2,
            64,
            "",
        )?;
        let st = &self.stdlib;
        range(file, "stdlib.crc_data_width", st.crc_data_width, 8, 512, "")?;
        if !st.crc_data_width.is_multiple_of(8) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "stdlib.crc_data_width".into(),
                message: format!(
                    "{} is not a whole number of bytes; allowed 8, 16, 24, ... 512",
                    st.crc_data_width
                ),
            });
        }
        range(
            file,
            "stdlib.token_bucket_cost_width",
            st.token_bucket_cost_width,
            1,
            64,
            "",
        )?;
        range(
            file,
            "stdlib.token_bucket_token_bits",
            st.token_bucket_token_bits,
            1,
            64,
            "",
        )?;
        range(
            file,
            "stdlib.token_bucket_frac_bits",
            st.token_bucket_frac_bits,
            0,
            32,
            "",
        )?;
        range(file, "stdlib.fifo_width", st.fifo_width, 1, 1024, "")?;
        range(file, "stdlib.fifo_depth", st.fifo_depth, 2, 65536, "")?;
        range(
            file,
            "stdlib.arbiter_requesters",
            st.arbiter_requesters,
            1,
            64,
            "",
        )?;
        range(
            file,
            "stdlib.arbiter_weight_width",
            st.arbiter_weight_width,
            1,
            32,
            "",
        )?;
        let dma = &self.dma;
        if ![64, 128, 256, 512].contains(&dma.data_width) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "dma.data_width".into(),
                message: format!("{} is not allowed; use 64, 128, 256 or 512", dma.data_width),
            });
        }
        range(file, "dma.tag_width", dma.tag_width, 1, 8, "")?;
        range(
            file,
            "dma.len_width",
            dma.len_width,
            14,
            32,
            " (the largest transfer is 2^len_width - 1 bytes; the front end reports MDTS, at \
             least 8 KiB, which 14 bits reach)",
        )?;
        range(file, "dma.max_reads", dma.max_reads, 1, 32, "")?;
        range(file, "dma.id_width", dma.id_width, 2, 8, "")?;
        let t = &self.nvme_tcp;
        if ![64, 128, 256].contains(&t.data_width) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "nvme_tcp.data_width".into(),
                message: format!("{} is not allowed; use 64, 128 or 256", t.data_width),
            });
        }
        range(file, "nvme_tcp.connections", t.connections, 2, 16, "")?;
        range(file, "nvme_tcp.outstanding", t.outstanding, 1, 64, "")?;
        if !t.c2h_hold_bytes.is_power_of_two()
            || t.c2h_hold_bytes < t.data_width / 4
            || t.c2h_hold_bytes > 65536
        {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "nvme_tcp.c2h_hold_bytes".into(),
                message: format!(
                    "{} is not allowed; use a power of two from two stream beats ({} bytes) to 65536",
                    t.c2h_hold_bytes,
                    t.data_width / 4
                ),
            });
        }
        if t.in_capsule_bytes > 65536 || !t.in_capsule_bytes.is_multiple_of(16) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "nvme_tcp.in_capsule_bytes".into(),
                message: format!(
                    "{} is not allowed; use 0 (no in-capsule data) to 65536, a multiple of 16 (IOCCSZ is in 16-byte units)",
                    t.in_capsule_bytes
                ),
            });
        }
        let tc = &self.tcp;
        for (key, v) in [
            ("tcp.tx_buffer_bytes", tc.tx_buffer_bytes),
            ("tcp.rx_buffer_bytes", tc.rx_buffer_bytes),
        ] {
            if !v.is_power_of_two() || !(1024..=65536).contains(&v) {
                return Err(ConfigError {
                    file: file.to_path_buf(),
                    key: key.into(),
                    message: format!(
                        "{v} is not allowed; use a power of two from 1024 to 65536 (a buffer holds at least a segment)"
                    ),
                });
            }
        }
        range(
            file,
            "tcp.arp_entries",
            tc.arp_entries,
            2,
            16,
            " (the cache is searched in one cycle)",
        )?;
        if !tc.echo_bytes.is_power_of_two() || !(64..=2048).contains(&tc.echo_bytes) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "tcp.echo_bytes".into(),
                message: format!(
                    "{} is not allowed; use a power of two from 64 (a default ping) to 2048",
                    tc.echo_bytes
                ),
            });
        }
        let q = &self.qos;
        range(
            file,
            "qos.queues",
            q.queues,
            2,
            4096,
            " (per-queue state is in RAMs; see hdl-gen/src/qos/mod.rs, Structure)",
        )?;
        range(file, "qos.namespaces", q.namespaces, 1, 64, "")?;
        range(file, "qos.grants", q.grants, 1, 64, "")?;
        if ![2, 4, 8, 16].contains(&q.queue_depth) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "qos.queue_depth".into(),
                message: format!("{} is not allowed; use 2, 4, 8 or 16", q.queue_depth),
            });
        }
        range(file, "qos.counter_width", q.counter_width, 16, 32, "")?;
        range(file, "qos.clock_mhz", q.clock_mhz, 1, 2000, "")?;
        let r = &self.roce;
        if r.data_width != 64 {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "roce.data_width".into(),
                message: format!(
                    "{} is not allowed; use 64 (wider streams come with the RDMA data path)",
                    r.data_width
                ),
            });
        }
        range(
            file,
            "roce.qps",
            r.qps,
            1,
            8,
            " (per-QP state is in flip-flops)",
        )?;
        range(file, "roce.outstanding", r.outstanding, 1, 16, "")?;
        if ![256, 512, 1024, 2048, 4096].contains(&r.mtu) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "roce.mtu".into(),
                message: format!(
                    "{} is not allowed; use 256, 512, 1024, 2048 or 4096 (the InfiniBand path MTUs)",
                    r.mtu
                ),
            });
        }
        if r.in_capsule_bytes > 65536 || !r.in_capsule_bytes.is_multiple_of(16) {
            return Err(ConfigError {
                file: file.to_path_buf(),
                key: "roce.in_capsule_bytes".into(),
                message: format!(
                    "{} is not allowed; use a multiple of 16 from 0 to 65536 (the target's IOCCSZ * 16 - 64 at most)",
                    r.in_capsule_bytes
                ),
            });
        }
        Ok(())
    }

    /// A 64-bit hash of the configuration's values (not its formatting or comments).
    pub fn hash(&self) -> u64 {
        let canonical = toml::to_string(self).unwrap_or_default();
        // FNV-1a: small, stable across platforms and releases.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in canonical.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }
}

/// The dotted key at byte `offset` of a TOML text: the last `[table]` header before it, then
/// the key on that line.
fn key_at(text: &str, offset: usize) -> String {
    let before = &text[..offset.min(text.len())];
    let table = before
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix('[')?.strip_suffix(']').map(str::trim)
        })
        .next_back()
        .unwrap_or("");
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].lines().next().unwrap_or("");
    let key = line.split('=').next().unwrap_or("").trim();
    match (table.is_empty(), key.is_empty() || key.starts_with('[')) {
        (_, true) => table.to_string(),
        (true, false) => key.to_string(),
        (false, false) => format!("{table}.{key}"),
    }
}
