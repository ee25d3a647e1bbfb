//! Parameters of the DMA engine, from the chip configuration.

/// Widths and depths of the DMA engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DmaParams {
    /// AXI4 and stream data width in bits: 64, 128, 256 or 512.
    pub data_width: u32,
    /// Transfer tag width: up to `2^tag_width` transfers in flight.
    pub tag_width: u32,
    /// Width of a length in bytes: the largest transfer (MDTS) is `2^len_width - 1` bytes.
    pub len_width: u32,
    /// AXI4 read bursts the mover keeps in flight.
    pub max_reads: u32,
    /// AXI4 ID width of the engine's master port.
    pub id_width: u32,
}

impl DmaParams {
    /// Stream/AXI bytes per beat.
    pub fn bytes(&self) -> u32 {
        self.data_width / 8
    }

    /// A parameter suffix for module names: `_w64_t3_l21`.
    pub fn suffix(&self) -> String {
        format!(
            "_w{}_t{}_l{}",
            self.data_width, self.tag_width, self.len_width
        )
    }
}
