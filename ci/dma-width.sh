#!/usr/bin/env bash
# The DMA suite (walker, mover, engine against their golden models) on the DMA engine at
# another data width: `bash ci/dma-width.sh 128` (64, 128, 256 or 512). rtl/ holds the shipped
# configuration's 64-bit engine; this writes configs/default.toml with `[dma] data_width = W`
# to target/dma-wW.toml and runs `ci/config.sh` on it with the DMA tops swapped in (CASES
# cases, default 100; SEED as there). ci/test.sh runs the 512-bit engine with the widest
# configuration; ci/nightly.sh runs 128 and 256 here.
set -euo pipefail
cd "$(dirname "$0")/.."
w=${1:?usage: ci/dma-width.sh WIDTH (64, 128, 256 or 512)}
mkdir -p target
cfg=target/dma-w$w.toml
# Only [dma]'s data_width changes; every other section stays the shipped one.
awk -v w="$w" '
  /^\[/ { sect = $0 }
  sect == "[dma]" && /^data_width *=/ { print "data_width = " w; done = 1; next }
  { print }
  END { exit !done }
' configs/default.toml > "$cfg" || { echo "ci/dma-width.sh: no [dma] data_width in configs/default.toml" >&2; exit 2; }
dma_cases=${CASES:-100}
CASES=0 DMA_CASES=$dma_cases bash ci/config.sh "$cfg"
