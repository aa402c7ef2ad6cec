#!/usr/bin/env bash
# Calibrate tma-layout's 32-bank model against the hardware (needs a Hopper GPU and ncu):
# for each case, tma-layout writes the warp requests it priced (--requests), tma-bank-probe replays
# them on the GPU one launch per pattern, and ncu counts shared-memory wavefronts and bank conflicts.
# Prints model vs measured per pattern; exits 1 if any count differs.
#   tests/calibrate-banks.sh BUILD_DIR [LOG_DIR]
set -uo pipefail
build=${1:?usage: tests/calibrate-banks.sh BUILD_DIR [LOG_DIR]}
logs=${2:-$build/bank-logs}
mkdir -p "$logs"
layout=$build/tools/tma-layout
probe=$build/tools/tma-bank-probe
cases=(
  "--swizzle 128B --dtype bf16 --box 64,64"
  "--swizzle 128B --dtype f32 --box 32,32 --base 384"
  "--swizzle 64B --dtype f32 --box 16,32"
  "--swizzle 64B --dtype f32 --box 16,32 --pitch 128"
  "--swizzle 32B --dtype f32 --box 8,32 --pitch 128"
  "--swizzle none --dtype f32 --box 32,32"
  "--swizzle none --dtype f32 --box 32,32 --pitch 144"
)
# Conflicts are compared for every pattern; wavefronts for plain loads (the _op_ld counters). ldmatrix is
# not counted under _op_ld, and the all-operations totals carry a few wavefronts of other shared traffic
# (measured: 1 per ldmatrix launch, ~requests+1 per load launch), so only its conflicts are compared.
metrics=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
status=0
for i in "${!cases[@]}"; do
  c=${cases[$i]}
  # shellcheck disable=SC2086
  "$layout" $c --requests "$logs/req$i.txt" >/dev/null 2>&1 || { echo "tma-layout failed: $c"; status=1; continue; }
  "$probe" "$logs/req$i.txt" >"$logs/pred$i.txt" || { echo "probe failed: $c"; status=1; continue; }
  ncu --clock-control none --csv --metrics "$metrics" "$probe" "$logs/req$i.txt" >"$logs/ncu$i.csv" 2>"$logs/ncu$i.err" ||
    { echo "ncu failed: $c (see $logs/ncu$i.err)"; status=1; continue; }
  python3 - "$logs/pred$i.txt" "$logs/ncu$i.csv" "$c" <<'PY' || status=1
import csv, sys
pred = [l.split() for l in open(sys.argv[1]) if l.startswith("pattern")]
rows = [r for r in csv.reader(l for l in open(sys.argv[2]) if l.startswith('"'))]
head, rows = rows[0], rows[1:]
col = {name: head.index(name) for name in ("ID", "Metric Name", "Metric Value")}
launches = {}
for r in rows:
    value = r[col["Metric Value"]].replace(",", "")
    launches.setdefault(int(r[col["ID"]]), {})[r[col["Metric Name"]]] = 0.0 if value == "n/a" else float(value)
names = ["row 16B", "column 4B", "chunk column 16B", "ldmatrix x4"]
bad = 0 if len(pred) == len(launches) == 4 else 1
if bad:
    print(f"expected 4 patterns and 4 profiled launches, got {len(pred)} and {len(launches)}")
print(f"case: {sys.argv[3]}")
for (p, launch) in zip(pred, sorted(launches)):
    m = launches[launch]
    idx, op = int(p[1]), p[2]
    w_pred, c_pred = int(p[7]), int(p[11])
    if op == "ldmatrix":
        w_meas = None
        c_meas = int(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"])
        ok = c_pred == c_meas
    else:
        w_meas = int(m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"])
        c_meas = int(m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"])
        ok = w_pred == w_meas and c_pred == c_meas
    bad += not ok
    w_text = "    -" if w_meas is None else f"{w_meas:5d}"
    print(f"  {names[idx]:<18} model wavefronts {w_pred:5d} conflicts {c_pred:5d} | ncu wavefronts {w_text} "
          f"conflicts {c_meas:5d}  {'ok' if ok else 'DIFFERS'}")
sys.exit(1 if bad else 0)
PY
done
[ $status = 0 ] && echo "bank model: every predicted count equals the measured one" || echo "bank model: DIFFERENCES (above)"
exit $status
