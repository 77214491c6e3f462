"""The contrast formula the browser tests rely on gives WCAG's published reference values."""

from __future__ import annotations

import pytest

from tests.e2e.contrast import contrast_ratio


def test_black_on_white_is_21_to_1() -> None:
    assert contrast_ratio("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)


def test_the_aa_boundary_grey_is_just_above_4_5() -> None:
    # #767676 on white is the lightest grey that passes AA for normal text (4.54:1).
    assert contrast_ratio("rgb(118, 118, 118)", "rgba(255, 255, 255, 1)") == pytest.approx(4.54, abs=0.01)
    assert contrast_ratio("rgb(119, 119, 119)", "rgb(255, 255, 255)") < 4.5


def test_it_refuses_colours_it_cannot_read() -> None:
    with pytest.raises(ValueError, match="not an rgb"):
        contrast_ratio("#fff", "rgb(0, 0, 0)")
