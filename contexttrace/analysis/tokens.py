"""Spec 001's token estimates of content: characters, and images by their size.

A trace records exact token counts per model call only; what one piece of content (a tool result, a
tool input) costs in tokens is estimated by spec 001's rule (characters / 4; an image w·h / 750, or
1,500 when its size is unknown). Every such figure is printed with ≈.
"""

from __future__ import annotations

#: Characters per token for the ≈ size of text (spec 001: chars / 4).
CHARS_PER_TOKEN = 4
#: Pixels per token of an image whose size is known (spec 001: w·h / 750).
PIXELS_PER_TOKEN = 750
#: Tokens of an image whose size the reader could not read (spec 001).
UNSIZED_IMAGE_TOKENS = 1_500


def result_tokens(chars: int | None, images: int | None, pixels: int | None, sized: int | None) -> int:
    """≈ tokens a result put into the context: chars // 4, plus pixels // 750 for the images whose size is
    known and 1,500 for each other image (spec 001).

    >>> result_tokens(4000, 0, 0, 0), result_tokens(0, 2, 750 * 100, 1)
    (1000, 1600)
    """
    n_images, n_sized = images or 0, min(sized or 0, images or 0)
    image_tokens = (pixels or 0) // PIXELS_PER_TOKEN + (n_images - n_sized) * UNSIZED_IMAGE_TOKENS
    return (chars or 0) // CHARS_PER_TOKEN + image_tokens
