#!/usr/bin/env bash
# Run the gpu suites on a Hopper machine (the differential fuzzer of every kernel among them), then the copy, kernel
# and map suites under compute-sanitizer (memcheck, racecheck, synccheck; fewer configurations there, they are slow),
# then the bank model against ncu, and print a summary last: every step's exit status, then the steps that failed.
# Exits 1 when any step failed (a test that failed, a tool that could not run, a calibration that disagreed), 2 when a
# binary a step runs is not in BUILD_DIR (named, before any step), else 0.
#   tests/run-gpu.sh BUILD_DIR [LOG_DIR]
# TMA_TEST_SEED replays a seed; TMA_FUZZ_PROBLEMS sets the fuzzer's problems per kernel.
# BUILD_DIR was configured with nvcc present (cmake -B build; kernels are built for sm_90a).
# Where Criterion is not installed, put its runtime beside the checkout (../shared/gpu/README.md) and
# export LD_LIBRARY_PATH=$PWD/.device/crit first.
set -uo pipefail
build=${1:?usage: tests/run-gpu.sh BUILD_DIR [LOG_DIR]}
logs=${2:-$build/gpu-logs}
# Every binary a step runs, checked before the first step (a whole run takes minutes of a lent machine): a build
# folder copied without one of them fails that step only, long after the start.
needed=(tests/test_gpu_driver tests/test_gpu_copies tests/test_gpu_interleave tests/test_gpu_tile_plan
        tests/wgmma_probe tests/test_gpu_bulk tests/test_gpu_im2col tests/im2col_probe tests/test_gpu_tensormap
        tests/test_gpu_transpose tests/test_gpu_gemm tests/test_gpu_grouped tests/test_gpu_conv tests/test_gpu_permute
        tests/test_gpu_fuzz tools/tma-layout tools/tma-bank-probe tools/tma-dram-patterns)
missing=()
for f in "${needed[@]}"; do
    [ -x "$build/$f" ] || missing+=("$build/$f")
done
if [ "${#missing[@]}" -gt 0 ]; then
    printf 'run-gpu: not in %s (build them there, or copy them with the rest):\n' "$build"
    printf '  %s\n' "${missing[@]}"
    exit 2
fi
mkdir -p "$logs"
summary=()
failed=()
run() { # name, then the command
    local name=$1; shift
    local start=$SECONDS
    "$@" >"$logs/$name.log" 2>&1
    local rc=$?
    summary+=("$(printf '%-28s rc=%-3d %4ds  %s' "$name" "$rc" $((SECONDS - start)) "$(grep -E 'Synthesis|ERROR SUMMARY' "$logs/$name.log" | tail -n 1)")")
    [ "$rc" -eq 0 ] || failed+=("$name (rc $rc, $logs/$name.log)")
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee "$logs/gpu.txt"
run gpu_driver "$build/tests/test_gpu_driver" --verbose=1 --jobs=1
run gpu_copies "$build/tests/test_gpu_copies" --verbose=1 --jobs=1
run gpu_interleave "$build/tests/test_gpu_interleave" --verbose=1 --jobs=1
run gpu_tile_plan "$build/tests/test_gpu_tile_plan" --verbose=1 --jobs=1
run wgmma_probe "$build/tests/wgmma_probe" "${TMA_TEST_SEED:-1}" # descriptors at any row of a tile (docs/HARDWARE.md)
run gpu_bulk "$build/tests/test_gpu_bulk" --verbose=1 --jobs=1
run gpu_im2col "$build/tests/test_gpu_im2col" --verbose=1 --jobs=1
run gpu_tensormap "$build/tests/test_gpu_tensormap" --verbose=1 --jobs=1
run gpu_transpose "$build/tests/test_gpu_transpose" --verbose=1 --jobs=1
run gpu_gemm "$build/tests/test_gpu_gemm" --verbose=1 --jobs=1
run gpu_grouped "$build/tests/test_gpu_grouped" --verbose=1 --jobs=1
run gpu_conv "$build/tests/test_gpu_conv" --verbose=1 --jobs=1
run gpu_permute "$build/tests/test_gpu_permute" --verbose=1 --jobs=1
run gpu_fuzz "$build/tests/test_gpu_fuzz" --verbose=1 --jobs=1
for tool in memcheck racecheck synccheck; do
    run "sanitizer_$tool" env TMA_GPU_CONFIGS=${SANITIZER_CONFIGS:-40} \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_copies" --jobs=1 --filter='gpu_copies/[lrs]*'
    run "sanitizer_${tool}_tile_plan" env TMA_GPU_CONFIGS=${SANITIZER_CONFIGS:-40} \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_tile_plan" --jobs=1 --filter='gpu_tile_plan/[br]*'
    run "sanitizer_${tool}_bulk" env TMA_GPU_CONFIGS=2 \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_bulk" --jobs=1 --filter='gpu_bulk/[lsrm]*'
    run "sanitizer_${tool}_im2col" env TMA_GPU_CONFIGS=${SANITIZER_CONFIGS:-40} \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_im2col" --jobs=1 --filter='gpu_im2col/loads*'
    run "sanitizer_${tool}_interleave" env TMA_GPU_CONFIGS=${SANITIZER_CONFIGS:-40} \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_interleave" --jobs=1
    run "sanitizer_${tool}_gemm" env TMA_GPU_CONFIGS=4 \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_gemm" --jobs=1 --filter='gpu_gemm/ragged*'
    run "sanitizer_${tool}_grouped" env TMA_GPU_CONFIGS=4 \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_grouped" --jobs=1 --filter='gpu_grouped/[rbe]*'
    run "sanitizer_${tool}_conv" env TMA_GPU_CONFIGS=4 \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_conv" --jobs=1 --filter='gpu_conv/[fph]*'
    run "sanitizer_${tool}_permute" \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_permute" --jobs=1 --filter='gpu_permute/s*'
    run "sanitizer_${tool}_tensormap" env TMA_GPU_CONFIGS=${SANITIZER_CONFIGS:-40} \
        compute-sanitizer --tool "$tool" --error-exitcode 99 --target-processes all \
        "$build/tests/test_gpu_tensormap" --jobs=1 --filter='gpu_tensormap/[ls]*'
done
# the traffic tool's patterns under memcheck: src rows at 2-byte phases (class maps, TMA stores), then dst rows there
# (TMA loads, thread stores of partial rows)
run sanitizer_memcheck_dram_patterns bash -c 'for pitch in "--src-pitch 2066" "--dst-pitch 2050"; do
    compute-sanitizer --tool memcheck --error-exitcode 99 "$1" --rows 1024 --cols 1024 $pitch --reps 1 --rounds 1 ||
        exit $?; done' _ "$build/tools/tma-dram-patterns"
run bank_calibration "$(dirname "$0")/calibrate-banks.sh" "$build" "$build/bank-logs"
grep -hE 'gpu_fuzz|resnet_1x1_race|seed|loads:|im2col|interleaved loads|INTERLEAVE_32B box|stores:|reduce-stores:|checker vs driver|stricter|checked mode|INTERLEAVE|device-built|fences:|device check|tf32 map|mod 128|grouped GEMM|bad group|big tiles|bulk|multicast|permutations' "$logs"/gpu_*.log
cat "$logs/bank_calibration.log"
printf '%s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'run-gpu: %d of %d steps FAILED:\n' "${#failed[@]}" "${#summary[@]}"
    printf '  %s\n' "${failed[@]}"
    exit 1
fi
printf 'run-gpu: all %d steps passed\n' "${#summary[@]}"
