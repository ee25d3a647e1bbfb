#!/usr/bin/env bash
# One shard of one regression, with a JUnit report: the command every fan-out runs (the GitHub
# Actions matrix in .github/workflows/regress.yml, ci/regress-million.sh, a Slurm array task
# through ci/slurm-regress.sbatch).
#
#   SUITE=chip CASES=300 SHARD=2 SHARDS=4 bash ci/regress-shard.sh
#
# SUITE (required), CASES (default 100), SHARD/SHARDS (K of M, 1-based; default 1/1), PROPERTY
# (comma-separated; default all of the suite's), X_INIT (zero|random; default zero), SEED
# (default regress's 0x5eed), JOBS (worker threads; default the CPUs), JUNIT_DIR (default
# target/junit), TAG (names the report beside the suite and properties:
# junit-<SUITE>[-<PROPERTY>][-<TAG>]-<K>of<M>.xml),
# TESTBENCH (default target/release/testbench: build it first, `cargo build --release -p
# testbench`, so parallel shards do not race to build), REGRESSIONS (the regression file
# failing seeds are saved to; default the suite's committed one, as in CI).
# Exit status: regress's (0 passed, 1 a case failed, 2 usage), or 2 when the report is missing
# or not well-formed XML.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SUITE:?SUITE=<suite> is required (testbench regress --suite)}"
CASES=${CASES:-100}
SHARD=${SHARD:-1}
SHARDS=${SHARDS:-1}
X_INIT=${X_INIT:-zero}
JUNIT_DIR=${JUNIT_DIR:-target/junit}
TESTBENCH=${TESTBENCH:-target/release/testbench}
[ -x "$TESTBENCH" ] || { echo "regress-shard: $TESTBENCH not built (cargo build --release -p testbench)" >&2; exit 2; }
prop=${PROPERTY:-}
junit="$JUNIT_DIR/junit-$SUITE${prop:+-${prop//,/+}}${TAG:+-$TAG}-${SHARD}of$SHARDS.xml"
args=(regress --suite "$SUITE" --cases "$CASES" --shard "$SHARD/$SHARDS" --x-init "$X_INIT" --junit "$junit")
[ -n "${PROPERTY:-}" ] && args+=(--property "$PROPERTY")
[ -n "${SEED:-}" ] && args+=(--seed "$SEED")
[ -n "${JOBS:-}" ] && args+=(--jobs "$JOBS")
[ -n "${REGRESSIONS:-}" ] && args+=(--regressions "$REGRESSIONS")
mkdir -p "$JUNIT_DIR"
rm -f "$junit"
echo "regress-shard: $TESTBENCH ${args[*]}" >&2
rc=0
"$TESTBENCH" "${args[@]}" || rc=$?
# A report that does not parse is a CI failure of its own (the reporters would drop it).
if [ ! -f "$junit" ] || ! python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$junit"; then
  echo "regress-shard: $junit missing or not well-formed XML" >&2
  exit 2
fi
exit "$rc"
