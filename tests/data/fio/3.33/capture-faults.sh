#!/bin/sh
# Re-captures the verify and I/O-error golden files (stdout as .json, stderr as .stderr) from real fio runs.
# Needs fio 3.33 built with libnbd and nbdkit 1.32 (Debian 12: apt-get install fio nbdkit). See README.md.
set -eu
cd "$(dirname "$0")"
G=/tmp/ssdlab-golden
mkdir -p $G
# flip one byte: file offset
flip() { python3 -c "import sys; f=open(sys.argv[1],'r+b'); o=int(sys.argv[2]); f.seek(o); b=f.read(1); f.seek(o); f.write(bytes([b[0]^0xff]))" "$1" "$2"; }
# plant 5 corruptions in a 4 MiB file of 4 KiB blocks: data bytes of blocks 3 and 10, the header's offset
# field (bytes 16-23) of block 50, its length field (bytes 4-7) of block 200, its magic (bytes 0-1) of block 300
plant() {
    flip "$1" $((4096 * 3 + 100)); flip "$1" $((4096 * 10 + 2000)); flip "$1" $((4096 * 50 + 19))
    flip "$1" $((4096 * 200 + 5)); flip "$1" $((4096 * 300))
}
for sum in crc32c sha256; do
    rm -f $G/verify.dat
    fio --output-format=json jobs/verify-write-$sum.fio > /dev/null
    plant $G/verify.dat
    fio --output-format=json+ jobs/verify-check-$sum.fio > verify-check-$sum.json 2> verify-check-$sum.stderr
done
rm -f $G/verify.dat
fio --output-format=json jobs/verify-write-crc32c.fio > /dev/null
plant $G/verify.dat
fio --output-format=json+ jobs/verify-check-crc32c-stop.fio > verify-check-crc32c-stop.json \
    2> verify-check-crc32c-stop.stderr || true
rm -f $G/verify.dat
# nbdkit memory disk with bad sectors (ddrescue map) for reads
cat > $G/bad.map <<MAP
0x00000000     +               1
0x00000000  0x00100000  +
0x00100000  0x00001000  -
0x00101000  0x00100000  +
0x00201000  0x00002000  -
0x00203000  0x001FD000  +
MAP
rm -f $G/nbd.sock
nbdkit --foreground --exit-with-parent --unix $G/nbd.sock --filter=ddrescue memory size=4M \
    ddrescue-mapfile=$G/bad.map 2>/dev/null & pid=$!
sleep 1
fio --output-format=json+ jobs/nbd-read-errors.fio > nbd-read-errors.json 2> nbd-read-errors.stderr || true
kill $pid; wait $pid 2>/dev/null || true
# nbdkit memory disk that refuses writes changing 3 MiB .. 3 MiB + 4 KiB
rm -f $G/nbd.sock
nbdkit --foreground --exit-with-parent --unix $G/nbd.sock --filter=protect memory size=4M \
    protect=0x300000-0x300fff 2>/dev/null & pid=$!
sleep 1
fio --output-format=json+ jobs/nbd-write-eperm.fio > nbd-write-eperm.json 2> nbd-write-eperm.stderr || true
kill $pid; wait $pid 2>/dev/null || true
rm -rf $G
