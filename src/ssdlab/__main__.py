"""`python -m ssdlab ...` runs the same command line as the `ssdlab` console script."""

from ssdlab.cli import main

raise SystemExit(main())
