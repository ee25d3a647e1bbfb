#!/usr/bin/env bash
# Installs the system packages the project needs, from Debian's archive. As root it installs
# what is missing; otherwise it stops and names the packages to install.
set -euo pipefail

# python3-venv and libpython3-dev (for the shared libpython cocotb embeds): the cocotb side of
# `testbench bench --suite harness`, which makes its own venv under target/.
# tshark: ci/tshark_check.sh and ci/roce_check.sh (Wireshark's NVMe/TCP and RoCEv2 dissectors
# check the regressions' pcaps; roce_check.sh also makes target/roce-venv with scapy); its
# debconf question (non-root capture) is preseeded so the install never prompts.
# fio and libnbd-bin: ci/nbd_check.sh has unmodified NBD clients use `testbench nbd` (fio's
# nbd engine, which Debian's fio is built with, and nbdinfo and nbdcopy from libnbd-bin).
# iproute2: `testbench tcp-linux` (ci/tcp_linux_check.sh) makes its namespace with `ip`.
# lcov: genhtml, for `testbench coverage`'s HTML report (ci/nightly.sh).
packages=(verilator yosys g++ make zlib1g-dev python3-venv libpython3-dev tshark fio libnbd-bin iproute2 lcov)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    echo "ci/setup.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    echo 'wireshark-common wireshark-common/install-setuid boolean false' | debconf-set-selections
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "ci/setup.sh: missing Debian packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install ${missing[*]}" >&2
    exit 2
  fi
fi
command -v cargo >/dev/null || { echo "ci/setup.sh: cargo not found; install Rust (rustup)" >&2; exit 2; }
