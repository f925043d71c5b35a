"""Chinese text in matplotlib figures: a fallback, glyph by glyph, to a CJK font that is installed.

matplotlib (3.6 and later) falls back along the families listed in ``font.family``; a generic
family such as ``sans-serif`` stands for one font only.  :func:`use_chinese_fonts` keeps the
current font first (so Latin text and digits look as in the English course) and appends the CJK
fonts found on this machine, so naming a missing one never prints a warning.  Without any, it
says once how to get one (Chinese labels then show as boxes).
"""
from __future__ import annotations

import warnings

CJK_FAMILIES = ("WenQuanYi Micro Hei", "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "PingFang SC",
                "Microsoft YaHei", "SimHei", "Heiti SC", "Arial Unicode MS")


def installed_cjk_families() -> list[str]:
    from matplotlib import font_manager
    installed = {font.name for font in font_manager.fontManager.ttflist}
    return [family for family in CJK_FAMILIES if family in installed]


def use_chinese_fonts() -> list[str]:
    """Append the installed CJK fonts to matplotlib's ``font.family``; return the families now used."""
    import matplotlib
    found = installed_cjk_families()
    if not found:
        warnings.warn("no Chinese font found for the figures (their Chinese labels will show as boxes); install one, "
                      "e.g. Debian/Ubuntu: apt install fonts-wqy-microhei, or Noto Sans CJK SC", stacklevel=2)
    current = [family for family in matplotlib.rcParams["font.family"] if family not in found]
    if current == ["sans-serif"]:
        current = matplotlib.rcParams["font.sans-serif"][:1]
    matplotlib.rcParams["font.family"] = current + found
    return current + found
