#!/bin/sh
# tests/calbin/readelf.sh FIXTURE — the fixture's ELF files read by a real
# program (seed §5.2: "ELF 可由 readelf -h 解析，动态 SO 可由 readelf -d 检查
# 依赖"): the CCU programs are RISC-V EXEC, the *_riscv.so RISC-V DYN with
# its DT_NEEDED, the *_x86.so (built by the compiler) x86-64 DYN.
set -eu
fixture=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkg=$("$fixture" "$tmp/p" --small)
pre=$(ls -d "$pkg"/*_prefill_0)
fail() { echo "FAIL: $*" >&2; exit 1; }
for f in "$pkg"/*_prefill_0/ccu*.elf "$pkg"/*_decode_1/ccu*.elf; do
    h=$(readelf -h "$f") || fail "readelf -h $f"
    echo "$h" | grep -q 'Class:.*ELF64' || fail "$f: class"
    echo "$h" | grep -q 'Type:.*EXEC' || fail "$f: type"
    echo "$h" | grep -q 'Machine:.*RISC-V' || fail "$f: machine"
done
n=$(ls "$pkg"/*_prefill_0/ccu*.elf "$pkg"/*_decode_1/ccu*.elf | wc -l)
[ "$n" = 8 ] || fail "$n CCU ELFs, not 8"
rv=$pre/libcalc_cpu_kernels_riscv.so
readelf -h "$rv" | grep -q 'Type:.*DYN' || fail "riscv so type"
readelf -h "$rv" | grep -q 'Machine:.*RISC-V' || fail "riscv so machine"
d=$(readelf -d "$rv") || fail "readelf -d riscv so"
echo "$d" | grep -q 'NEEDED.*\[libc.so.6\]' || fail "riscv so: DT_NEEDED libc.so.6"
echo "$d" | grep -q 'NEEDED.*\[libcalc_rt.so\]' || fail "riscv so: DT_NEEDED libcalc_rt.so"
echo "$d" | grep -q 'SONAME.*\[libcalc_cpu_kernels_riscv.so\]' || fail "riscv so: SONAME"
x86=$pre/libcalc_cpu_kernels_x86.so
readelf -h "$x86" | grep -q 'Machine:.*X86-64' || fail "x86 so machine"
readelf -h "$x86" | grep -q 'Type:.*DYN' || fail "x86 so type"
readelf -d "$x86" | grep -q 'NEEDED' || fail "x86 so: no DT_NEEDED"
# The hostile ones: what readelf says is what the variant claims.
bad=$("$fixture" "$tmp/b" --small --variant elf_machine)
readelf -h "$bad"/*_decode_1/ccu0_chip0.elf | grep -q 'Machine:.*X86-64' || fail "elf_machine"
echo "ok: 8 CCU ELFs RISC-V EXEC, riscv .so DYN with 2 DT_NEEDED, x86-64 .so DYN"
