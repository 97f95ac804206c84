"""``NO_COLOR``: greys that stay readable, and failures that stand out without colour.

Textual draws a ``NO_COLOR`` app through its ``Monochrome`` filter: each colour becomes the grey of its
luminance. Red has little (a failure's ``bold red`` became grey 237 on the panel's 234: grey on grey, in a
real terminal nothing could be read), so a grey too close to the grey behind it is moved to a light grey (a
dark one on a light background). And what colour said alone now says itself: red text (a failure: ``FAILED``,
the exception, ``NOT recovered``, the run's ``failed`` status) is bold, and bold red is reversed as well.
"""

from __future__ import annotations

import colorsys
from functools import lru_cache

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter, Monochrome, NoColor, monochrome_style

#: the least difference of brightness (0..1) between a text's grey and its background's
MIN_CONTRAST = 0.4
LIGHT = Color(224, 224, 224)
DARK = Color(32, 32, 32)
_BOLD = Style(bold=True)
_BOLD_REVERSE = Style(bold=True, reverse=True)


def _rgb(color: RichColor) -> tuple[int, int, int]:
    # a terminal's own colour (no triplet): a default rgb
    r, g, b = color.triplet if color.triplet is not None else color.get_truecolor()
    return r, g, b


def is_red(color: RichColor) -> bool:
    """A failure's colour: red or crimson, whatever the theme makes of it (``#ba3c5b``, ANSI red ``#f4005f``),
    not orange (a warning: ``#ffa62b``) nor magenta."""
    if color.is_default:
        return False
    r, g, b = (v / 255 for v in _rgb(color))
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    return (h <= 20 / 360 or h >= 320 / 360) and s >= 0.4 and v >= 0.35


def emphasis(style: Style) -> Style | None:
    """What stands in for red without colour: bold; bold red is also reversed."""
    if style.color is None or not is_red(style.color):
        return None
    return _BOLD_REVERSE if style.bold else _BOLD


#: characters drawn for their shape, not read: borders, tree guides, scrollbars, blank cells (their grey is
#: the look the theme chose; made light, a scrollbar's track became a white bar)
_DRAWN = frozenset(" \u00a0") | frozenset(chr(c) for c in range(0x2500, 0x25A0))


@lru_cache(4096)
def readable_style(style: Style, background: Color, greys: bool = True) -> Style:
    """``style`` in greys (``greys``; else the terminal's default colours) that can be read on
    ``background`` (the widget's, where the style has none), failures emphasised."""
    extra = emphasis(style)
    if not greys:
        out = style + NoColor.DEFAULT_COLORS
        return out + extra if extra is not None else out
    mono = monochrome_style(style)
    if mono.color is not None and not mono.color.is_default:
        fg = Color.from_rich_color(mono.color)
        bg = Color.from_rich_color(mono.bgcolor) if mono.bgcolor is not None and not mono.bgcolor.is_default \
            else background.monochrome
        if abs(fg.brightness - bg.brightness) < MIN_CONTRAST:
            fg = LIGHT if bg.brightness < 0.5 else DARK
            mono = mono + Style(color=fg.rich_color)
    return mono + extra if extra is not None else mono


class ReadableNoColor(LineFilter):
    """Textual's ``NO_COLOR`` filter (``Monochrome``, or ``NoColor`` on a terminal's own ANSI colours) with
    readable greys and emphasised failures (:func:`readable_style`)."""

    def __init__(self, greys: bool = True, enabled: bool = True) -> None:
        super().__init__(enabled)
        self.greys = greys

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        greys = self.greys
        drawn = _DRAWN
        return [Segment(text, None if style is None else
                        monochrome_style(style) if greys and drawn.issuperset(text) else
                        readable_style(style, background, greys), None)
                for text, style, _ in segments]


def use_readable_no_color(filters: list[LineFilter]) -> None:
    """Swap Textual's ``NO_COLOR`` filter in ``filters`` (an app's ``_filters``) for :class:`ReadableNoColor`."""
    for i, f in enumerate(filters):
        if isinstance(f, Monochrome):
            filters[i] = ReadableNoColor(greys=True, enabled=f.enabled)
        elif isinstance(f, NoColor):
            filters[i] = ReadableNoColor(greys=False, enabled=f.enabled)
