"""The built site opens from disk: each page is a file and each link between pages names one
(``operating/rest-api.html``), since a browser shows ``file://.../operating/rest-api/`` as a listing."""

from __future__ import annotations

from pathlib import Path

from mkdocs.config import load_config

ROOT = Path(__file__).resolve().parents[2]


def test_pages_are_files_and_links_name_them() -> None:
    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config["use_directory_urls"] is False
