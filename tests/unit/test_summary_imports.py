"""`ssdlab run --no-report` prints its terminal summary without loading the chart library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_run_without_report_prints_its_summary_without_loading_matplotlib(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = ("import sys, io, contextlib\n"
            "from ssdlab import cli\n"
            "text = io.StringIO()\n"
            "with contextlib.redirect_stdout(text), contextlib.suppress(SystemExit):\n"
            "    cli.main(['run', 'quick', '--target', 'sim:tlc-4k?capacity=64MiB', '--runtime', '0.1', '--out',"
            f" {str(out)!r}, '--no-report'], env=cli.Env(stdout=text, stderr=text))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'jinja2')))\n"
            "print(text.getvalue())\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    loaded, _, summary = res.stdout.partition("\n")
    assert loaded == "[]", loaded
    assert "SEQ1M" in summary or "RND4K" in summary, summary  # the summary table was printed
    assert (out / "run.json").is_file()
    assert not (out / "report.html").exists()
