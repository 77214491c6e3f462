"""WCAG 2.x contrast ratio between two CSS colours as the browser reports them (`rgb(r, g, b)`)."""

from __future__ import annotations

import re

AA_NORMAL_TEXT = 4.5


def _channel(value: int) -> float:
    scaled = value / 255
    return scaled / 12.92 if scaled <= 0.03928 else ((scaled + 0.055) / 1.055) ** 2.4


def relative_luminance(css_colour: str) -> float:
    match = re.match(r"rgba?\((\d+),\s*(\d+),\s*(\d+)", css_colour)
    if match is None:
        raise ValueError(f"not an rgb() colour: {css_colour!r}")
    red, green, blue = (_channel(int(part)) for part in match.groups())
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast_ratio(foreground: str, background: str) -> float:
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)
