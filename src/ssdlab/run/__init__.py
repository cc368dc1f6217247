"""Running a run: the request, its set-up, the loop over points, executors, ETAs and live progress."""
