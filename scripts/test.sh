#!/usr/bin/env bash
# Set-up command 2: install dependencies, build with warnings as errors, run the whole test suite,
# then build again with AddressSanitizer + UBSan and run the suite there too.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs="$(nproc)"
# ccache, where the machine has it, makes the second and later runs of this script cheap.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBINLOGCTL_WERROR=ON >/dev/null
cmake --build build-ci -j"$jobs"
ctest --test-dir build-ci -j"$jobs" --output-on-failure
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBINLOGCTL_SANITIZE=ON -DBINLOGCTL_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure
