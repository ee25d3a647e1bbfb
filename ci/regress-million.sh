#!/usr/bin/env bash
# 10^6 NVMe commands, each completed and its CQE checked by the host's golden model (the
# `commands` that `testbench regress` counts and writes into its JUnit report), in two plans:
#
#   nvme  the NVMe front end's suite (nvme_queues, nvme_arbitration, nvme_coalescing: queues
#         created and deleted, every arbitration class, coalescing, faulty doorbells, resets)
#         on its own top: 5600 cases, 1,114,837 commands with the default seed (199 a case);
#   chip  the whole chip top end to end (the chip property: the host's queues through the
#         front end, QoS and the routing table to the NVMe/RDMA and NVMe/TCP target models,
#         with resets, faulty doorbells, dying and hostile targets): 45000 cases, about
#         1.06 M commands (23.6 a case over 4956 commands in 210 cases).
#
# Each plan alone reaches 10^6 with a margin (6 to 11 %: the count per case depends on the
# seed, and the nightly runs draw a new seed). It fans out: SHARD=K SHARDS=M runs shard K of M
# of each plan (`regress --shard K/M`: a contiguous block of its cases and every M-th saved
# regression), so M machines, GitHub Actions jobs or Slurm array tasks (ci/slurm-regress.sbatch) run the
# whole between them; ci/junit_summary.py merges their JUnit files and checks the total.
#
#   bash ci/regress-million.sh                          # both plans here, then the check
#   PLAN=nvme bash ci/regress-million.sh                # the front end only (what ci/nightly.sh runs)
#   SHARD=3 SHARDS=24 bash ci/regress-million.sh        # one shard of 24; merge the JUnit files after
#
# PLAN (default "nvme chip"), SHARD/SHARDS (default 1/1), SEED (default regress's 0x5eed; the
# nightly workflow passes the date, Slurm the array's job id), JOBS (worker threads; default the
# CPUs), JUNIT_DIR (default target/junit/million), REGRESSIONS (where failing seeds are saved;
# default the suites' committed files). Builds the release testbench first unless NO_BUILD=1
# (parallel shards on one file system: build once, then NO_BUILD=1).
#
# Wall time per 10^4 commands, one worker thread, on the 2-core development machine with other
# builds running (load 7-8, so upper bounds; CPU time in brackets): nvme 2.4 s (0.85 s), the
# whole plan in 271 s; chip 165 s (81 s), the whole plan about 4.9 hours on one thread there
# (2.4 hours of CPU): for a fan-out, not one machine (docs/testbench.md, "Fanning out").
set -euo pipefail
cd "$(dirname "$0")/.."
PLAN=${PLAN:-nvme chip}
export SHARD=${SHARD:-1} SHARDS=${SHARDS:-1}
export JUNIT_DIR=${JUNIT_DIR:-target/junit/million}
export TAG=million
step() { echo "== [$(date -u +%H:%M:%S), ${SECONDS}s] $*" >&2; }
if [ "${NO_BUILD:-0}" != 1 ]; then
  step "cargo build --release -p testbench"
  cargo build -q --release -p testbench
fi
rc=0
reports=()
for p in $PLAN; do
  case "$p" in
    nvme) step "10^6 commands, plan nvme: shard $SHARD/$SHARDS of 5600 cases"
          SUITE=nvme CASES=5600 bash ci/regress-shard.sh || rc=1
          reports+=("$JUNIT_DIR/junit-nvme-$TAG-${SHARD}of$SHARDS.xml") ;;
    chip) step "10^6 commands, plan chip: shard $SHARD/$SHARDS of 45000 cases of the chip property"
          SUITE=chip PROPERTY=chip CASES=45000 bash ci/regress-shard.sh || rc=1
          reports+=("$JUNIT_DIR/junit-chip-chip-$TAG-${SHARD}of$SHARDS.xml") ;;
    *) echo "regress-million: no plan \`$p\` (nvme, chip)" >&2; exit 2 ;;
  esac
done
# A shard cannot know the others' counts: with SHARDS > 1 the merge of every shard's report
# checks them (ci/junit_summary.py --min-commands 1000000, as the nightly workflow does).
if [ "$SHARDS" = 1 ]; then
  step "every case passed and each plan completed at least 10^6 commands"
  python3 ci/junit_summary.py "${reports[@]}" --min-commands 1000000 || rc=1
fi
exit "$rc"
