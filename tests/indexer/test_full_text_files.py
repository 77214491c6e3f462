"""Which reader an uploaded file goes to, and the caps each reader keeps whatever the upload's cap is."""

from __future__ import annotations

import pytest

from indexer.full_text import FullTextError
from indexer.full_text_files import read_full_text
from indexer.jats import MAX_JATS_BYTES


def test_a_jats_file_past_20_mib_is_refused_even_under_a_larger_upload_cap() -> None:
    padding = b" " * (MAX_JATS_BYTES + 1)
    xml = b'<?xml version="1.0"?><article><front/>' + padding + b"</article>"

    with pytest.raises(FullTextError, match="a JATS article may be at most 20,971,520 bytes"):
        read_full_text(xml, max_bytes=50 * 1024 * 1024, max_pages=200, max_seconds=45.0)


def test_a_lower_upload_cap_still_wins_for_jats() -> None:
    xml = b'<?xml version="1.0"?><article>' + b" " * 2048 + b"</article>"

    with pytest.raises(FullTextError, match="at most 1,024 bytes"):
        read_full_text(xml, max_bytes=1024, max_pages=200, max_seconds=45.0)
