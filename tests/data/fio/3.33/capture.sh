#!/bin/sh
# Re-captures every golden file in this directory from real fio runs (see README.md). Needs fio 3.33.
set -eu
cd "$(dirname "$0")"
mkdir -p /tmp/ssdlab-golden
# lay out the 32 MiB test file with real data first, so reads read blocks, not holes
dd if=/dev/urandom of=/tmp/ssdlab-golden/testfile bs=1M count=32 status=none
fio --output-format=json+ jobs/null-randrw-2jobs.fio > null-randrw-2jobs.json
fio --output-format=json+ jobs/file-randread-2jobs-group.fio > file-randread-2jobs-group.json
fio --output-format=json+ jobs/file-randwrite-2jobs-group.fio > file-randwrite-2jobs-group.json
fio --output-format=json+ jobs/file-seqread-128k.fio > file-seqread-128k.json
fio --output-format=json+ --status-interval=1 jobs/file-randread-status.fio > file-randread-status.json
fio --output-format=json jobs/file-randrw-plain.fio > file-randrw-plain.json
fio --output-format=json+ --status-interval=500ms jobs/file-randwrite-series.fio > file-randwrite-series.json
rm -f /tmp/ssdlab-golden/testfile
rmdir /tmp/ssdlab-golden 2>/dev/null || true
