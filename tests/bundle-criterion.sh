#!/usr/bin/env bash
# Put Criterion's runtime (libcriterion.so.3 and the libraries it needs beyond the C library) into DIR, so that
# test binaries built here run on a GPU machine that has no Criterion:
#   tests/bundle-criterion.sh .device/crit
#   ... there: LD_LIBRARY_PATH=$PWD/.device/crit tests/run-gpu.sh build
set -euo pipefail
dir=${1:?usage: tests/bundle-criterion.sh DIR}
criterion=$(ldconfig -p | awk '$1 == "libcriterion.so.3" {print $NF; exit}')
if [ -z "$criterion" ]; then
    echo "bundle-criterion: libcriterion.so.3 is not installed here (apt-get install libcriterion-dev)" >&2
    exit 1
fi
mkdir -p "$dir"
cp -L "$criterion" "$dir/"
# Its dependencies, except those every Linux system has (the C runtime and the dynamic loader).
ldd "$criterion" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libgcc_s)\.so|/ld-linux' |
    while read -r lib; do cp -L "$lib" "$dir/"; done
echo "bundle-criterion: $(ls "$dir" | wc -l) libraries ($(du -sh "$dir" | cut -f1)) in $dir"
