"""Running a run: target strings, the set-up of a request, the pre-flight check, the loop over points (resume,
the hosts' ceiling), ETAs, live progress and the host-CPU check."""
