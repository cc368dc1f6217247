"""fio's status output read from its pipe in chunks (status.stream_documents) gives exactly the documents that
splitting it line by line gives (status.documents), however the pipe cuts it."""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ssdlab.fio.status import documents, stream_documents


def _through_pipe(data: bytes, cuts: list[int], chunk: int) -> list[tuple[str, dict[str, object]]]:
    r, w = os.pipe()

    def write() -> None:
        at = 0
        for cut in [*cuts, len(data)]:
            os.write(w, data[at:cut])
            at = cut
        os.close(w)

    t = threading.Thread(target=write)
    t.start()
    try:
        return list(stream_documents(r, chunk))
    finally:
        t.join()
        os.close(r)


@pytest.mark.parametrize("seed", range(6))
def test_chunks_give_the_documents_lines_give(golden: Callable[[str], Path], seed: int) -> None:
    text = golden("file-randread-status.json").read_text(encoding="utf-8")
    text = "fio: note before\n" + text + "fio: a note between\n" + text.replace("\n}\n", "\n}", 1) + \
        "\n{ not json\n}\n" + "é{\"name\": \"µ\"}\n" + text.rstrip("\n")  # the last '}' without a newline
    want = list(documents(text.splitlines(keepends=True)))
    assert len(want) >= 6
    data = text.encode()
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(data)), 40))  # some inside multi-byte characters
    got = _through_pipe(data, cuts, chunk=rng.choice([7, 512, 1 << 16]))
    assert [d for _, d in got] == [d for _, d in want]
    assert [t.rstrip("\n") for t, _ in got] == [t.rstrip("\n") for t, _ in want]
