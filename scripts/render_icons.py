"""Render the dashboard's PNG icons (192 and 512 px) and favicon from its SVG icon.

Run from the repository root after changing ``src/helix/server/static/icons/helix.svg``::

    python scripts/render_icons.py

It draws the SVG in headless Chromium through Playwright (``HELIX_TEST_CHROMIUM``
names the browser; Debian's ``/usr/bin/chromium`` by default).
"""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parents[1] / "src" / "helix" / "server" / "static" / "icons"
SIZES = {"helix-192.png": 192, "helix-512.png": 512, "favicon-32.png": 32}


def main() -> None:
    """Draw each PNG size of the SVG icon into the icons folder."""
    svg = (ICONS / "helix.svg").read_text()
    chromium = os.environ.get("HELIX_TEST_CHROMIUM", "/usr/bin/chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for name, size in SIZES.items():
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(
                "<style>html,body{margin:0;background:transparent}svg{display:block}</style>"
                + svg.replace("<svg ", f'<svg width="{size}" height="{size}" ', 1)
            )
            page.screenshot(path=str(ICONS / name), omit_background=True)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
