"""Render modes, written once for every interface: the table as text, printed, or drawn.

``"ansi"`` returns the spectator's view as text (public information only: what every
player at the table can see), ``"human"`` prints it, and ``"rgb_array"`` draws the
same text into an image (for video recorders and Stable-Baselines3's default render
mode; it needs Pillow, installed with the ``train`` extra).
"""

from __future__ import annotations

import numpy as np

from envs.core.game import require_choice

RENDER_MODES = ("ansi", "human", "rgb_array")
RENDER_FPS = 2


def check_render_mode(render_mode: str | None) -> None:
    require_choice("render_mode", render_mode, (None, *RENDER_MODES))
    if render_mode == "rgb_array":
        try:
            import PIL  # noqa: F401
        except ImportError as error:
            raise ValueError(
                "render_mode='rgb_array' draws the table with Pillow, which is not installed: "
                "pip install pillow (or the hiddenhand[train] extra)"
            ) from error


def render(text: str, render_mode: str | None) -> str | np.ndarray | None:
    """``text`` for ``"ansi"``, an RGB image of it for ``"rgb_array"``, printed for
    ``"human"``, nothing without a mode."""
    if render_mode is None:
        return None
    if render_mode == "human":
        print(text)
        return None
    if render_mode == "rgb_array":
        return text_image(text)
    return text


def text_image(text: str, margin: int = 8) -> np.ndarray:
    """``text`` drawn black on white in Pillow's built-in font, as a ``(height, width, 3)``
    uint8 array."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=14)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    left, top, right, bottom = probe.multiline_textbbox((0, 0), text, font=font)
    image = Image.new("RGB", (right + 2 * margin, bottom + 2 * margin), "white")
    ImageDraw.Draw(image).multiline_text((margin, margin), text, fill="black", font=font)
    return np.asarray(image)
