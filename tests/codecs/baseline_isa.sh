#!/usr/bin/env bash
# Every instruction of the codec library outside codecs/avx2.c is baseline
# x86-64 (SSE2 at most): no VEX-encoded (AVX, AVX2, F16C, FMA) instruction,
# so on a CPU without AVX2 nothing but the dispatch-guarded avx2.c code could
# fault, and the dispatch (test_dispatch) never picks that.  The qemu runs
# (meson.build) show it for the code paths the tests execute; this shows it
# for all of the library's code.
#   baseline_isa.sh OBJDUMP LIBNFCODECS.a
set -euo pipefail
objdump=$1 lib=$2
out=$("$objdump" -d --no-show-raw-insn "$lib")
members=$(printf '%s\n' "$out" | grep -c 'file format' || true)
[ "$members" -ge 7 ] || { echo "baseline_isa: $lib: only $members members" >&2; exit 1; }
printf '%s\n' "$out" | awk '
  / file format / { obj = $1; sub(":$", "", obj); next }
  /^[0-9a-f]+ <.*>:$/ { fn = $2; next }
  /^ *[0-9a-f]+:\t/ {
    n++
    split($0, f, "\t"); split(f[2], w, " ")
    if (w[1] ~ /^v/ && obj !~ /avx2\.c\.o$/) { print obj " " fn ": " f[2]; bad++ }
    if (w[1] ~ /^v/ && obj ~ /avx2\.c\.o$/) vex++
  }
  END {
    if (n < 1000) { print "baseline_isa: only " n " instructions disassembled"; exit 1 }
    if (vex < 100) { print "baseline_isa: avx2.c.o has only " vex " VEX instructions"; exit 1 }
    if (bad) { print "baseline_isa: " bad " VEX instructions outside avx2.c"; exit 1 }
    print "baseline_isa: " n " instructions, " vex " VEX ones, all in avx2.c.o"
  }'
