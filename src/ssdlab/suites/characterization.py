"""The characterization suites reviewers use, registered from their data files (suites/data/*.toml).

sweep-bs, sweep-qd, stability, lat-curve, iorate-curve, app-oracle/app-sql/app-vdi/app-vsi,
iometer-fileserver/webserver/database/workstation and the P5430 review's preconditioned iorate curves are
all TomlSuite instances; `ssdlab run FILE.toml` builds a user suite the same way. Their report sections live
in ssdlab.report.characterization.
"""

from __future__ import annotations

from ssdlab.suites.base import register
from ssdlab.suites.toml_suite import TomlSuite, builtin_files, load_toml_text


def builtin_suites() -> list[TomlSuite]:
    """Every built-in characterization suite, parsed from the packaged TOML files."""
    return [load_toml_text(text, f"suites/data/{name}") for name, text in builtin_files()]


for _suite in builtin_suites():
    register(_suite)
