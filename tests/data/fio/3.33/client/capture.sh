#!/bin/bash
# Re-captures the client/server golden files in this directory (see README.md). Needs fio 3.33.
# Starts two fio servers on loopback (127.0.0.2 and 127.0.0.3, ports 28765/28766) and stops them by process group.
set -eu
cd "$(dirname "$0")"
# each server leads a process group of its own (setsid), so killing the group also kills the job process it forks
setsid fio --server=ip:127.0.0.2,28765 >/dev/null 2>&1 & A=$!
setsid fio --server=ip:127.0.0.3,28766 >/dev/null 2>&1 & B=$!
trap 'kill -- -$A -$B 2>/dev/null || true' EXIT
sleep 1
fio --output-format=json+ --client=ip:127.0.0.2,28765 jobs/host0.fio --client=ip:127.0.0.3,28766 jobs/host1.fio \
    > two-hosts.json
# the second server is killed 2 s into a 4-s run: the client reports it and keeps the first host's results
( sleep 2; kill -9 -- -$B ) &
fio --output-format=json+ --client=ip:127.0.0.2,28765 jobs/host0-long.fio \
    --client=ip:127.0.0.3,28766 jobs/host1-long.fio > host-killed.txt || true
# a server that does not exist: fio says so on stderr, runs the other host and exits 0
fio --output-format=json+ --client=ip:127.0.0.2,28765 jobs/host0.fio --client=ip:127.0.0.3,28799 jobs/host1.fio \
    > unreachable.txt 2> unreachable.stderr
