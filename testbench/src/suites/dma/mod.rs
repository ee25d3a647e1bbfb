//! The DMA engine: the descriptor walker and the mover, each against its golden model, and the
//! engine end to end against the two composed.
//!
//! What lives here:
//!
//! - `walker.rs`, `mover.rs`: each part against its golden model
//! - `engine.rs`: the engine end to end

use crate::drivers::stream::Words;

pub mod engine;
pub mod mover;
pub mod walker;

/// The low `n` bits set (`n` up to 64): a `keep` of `n` bytes from lane 0.
pub(crate) fn low_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// One data-stream word (`data` as its 64-bit limbs, `keep`, `last`, `tag`) carrying `chunk`
/// from lane 0 of a `bytes`-wide bus.
pub(crate) fn data_word(chunk: &[u8], bytes: usize, last: bool, tag: u64) -> Vec<u64> {
    let mut padded = chunk.to_vec();
    padded.resize(bytes.div_ceil(8) * 8, 0);
    let mut w: Vec<u64> = padded
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    w.extend([low_mask(chunk.len()), last as u64, tag]);
    w
}

/// Splits data-stream words (`data` limbs, `keep`, `last`, `tag`, as [`data_word`] lays them
/// out) of a `bytes`-wide bus into transfers at `last`: (tag, bytes). Every beat must be packed
/// from lane 0, and every beat but a transfer's last full; a last beat may be empty only with
/// `empty_last` (the contract allows it: `keep` is all ones except on a last beat).
pub(crate) fn split_data(
    beats: &Words,
    bytes: usize,
    empty_last: bool,
) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let limbs = bytes.div_ceil(8);
    let mut groups = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    for (cycle, w) in beats.iter() {
        let (keep, last, tag) = (w[limbs], w[limbs + 1] != 0, w[limbs + 2]);
        let n = keep.trailing_ones() as usize;
        if keep != low_mask(n)
            || (n == 0 && !(last && empty_last))
            || n > bytes
            || (!last && n != bytes)
        {
            return Err(format!(
                "cycle {cycle}: m_data keep {keep:#x} (last {last}): not packed from lane 0"
            ));
        }
        cur.extend(w[..limbs].iter().flat_map(|l| l.to_le_bytes()).take(n));
        if last {
            groups.push((tag, std::mem::take(&mut cur)));
        }
    }
    if !cur.is_empty() {
        return Err(format!("{} m_data bytes after the last `last`", cur.len()));
    }
    Ok(groups)
}
