#!/usr/bin/env bash
# Shows that the property suites catch real bugs: each mutant of ci/mutants.txt is one
# deliberate bug in one rtl/ file, and its property must fail on it with a shrunk case and the
# path of its waveform. `testbench mutants` merges every selected mutant into mutant schemata
# copies of the files (each changed line guarded by a run-time select, TB_MUTANT), builds the
# release testbench against them once (re-verilating only the tops the selected properties
# drive), checks the schemata model passes with no mutant selected, then runs each mutant's
# properties with --fail-fast and a bounded shrink. rtl/ itself is untouched (TB_RTL_DIR);
# failing seeds go to a scratch regression file, not the committed ones. One line per mutant,
# then the score per file. Exits 1 if a mutant survives, 2 if the run could not judge.
#
# MUTANT_SUITES: only these suites' mutants (space- or comma-separated; all when empty).
# MUTANT_MATCH: only the mutants whose name contains this text. MUTANT_ONLY: these mutant
# numbers (comma-separated; `testbench mutants --list` shows them). MUTANT_SKIP: leave these
# numbers out (CI leaves the slow ones to the nightly job). CASES: cases for every
# mutant instead of the table's. Further arguments go to `testbench mutants`.
#
# It leaves target/release/testbench built against the schemata RTL (with no mutant selected
# it behaves as rtl/); the next plain release build rebuilds the testbench crate.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
[ -n "${MUTANT_SUITES:-}" ] && args+=(--suite "$MUTANT_SUITES")
[ -n "${MUTANT_MATCH:-}" ] && args+=(--match "$MUTANT_MATCH")
[ -n "${MUTANT_ONLY:-}" ] && args+=(--only "$MUTANT_ONLY")
[ -n "${MUTANT_SKIP:-}" ] && args+=(--skip "$MUTANT_SKIP")
[ -n "${CASES:-}" ] && args+=(--cases "$CASES")
# The driver is the debug binary (usually current after `cargo test`); it builds the release
# testbench against the schemata RTL itself, and runs every mutant on that build.
cargo build -q -p testbench
exec target/debug/testbench mutants "${args[@]}" "$@"
