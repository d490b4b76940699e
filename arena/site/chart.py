"""A bot's rating history as an SVG line chart: numbers only (no text from outside goes in), so the
page can include it as it is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

WIDTH: Final = 600
HEIGHT: Final = 200
_MARGIN: Final = 36


def rating_chart(ratings: Sequence[float]) -> str:
    """An SVG chart of `ratings` in order (the first is the rating before the first set), scaled to
    fit, with the lowest and highest rating marked; an empty chart says there is no history."""
    if len(ratings) < 2:
        return (
            f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="no rating history">'
            f'<text x="{WIDTH // 2}" y="{HEIGHT // 2}" text-anchor="middle">no rated sets yet</text></svg>'
        )
    low, high = min(ratings), max(ratings)
    span = max(high - low, 1.0)
    step = (WIDTH - 2 * _MARGIN) / (len(ratings) - 1)

    def y(value: float) -> float:
        return HEIGHT - _MARGIN - (value - low) / span * (HEIGHT - 2 * _MARGIN)

    points = " ".join(f"{_MARGIN + index * step:.1f},{y(value):.1f}" for index, value in enumerate(ratings))
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="rating from {ratings[0]:.0f} to {ratings[-1]:.0f} over {len(ratings) - 1} sets">'
        f'<line x1="{_MARGIN}" y1="{y(high):.1f}" x2="{WIDTH - _MARGIN}" y2="{y(high):.1f}" class="grid"/>'
        f'<line x1="{_MARGIN}" y1="{y(low):.1f}" x2="{WIDTH - _MARGIN}" y2="{y(low):.1f}" class="grid"/>'
        f'<text x="2" y="{y(high) + 4:.1f}">{high:.0f}</text>'
        f'<text x="2" y="{y(low) + 4:.1f}">{low:.0f}</text>'
        f'<polyline points="{points}" fill="none" class="line"/></svg>'
    )
