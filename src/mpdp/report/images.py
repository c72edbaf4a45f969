"""Figures embedded in the report: a 64-colour copy of each PNG, as lossless WebP.

The figure files (``reports/figures/*.png|pdf``) stay as drawn; only the copy inside the
report is made smaller, so that the full-config report stays well under 10 MB (docs/report.md):

* the PNG's own pixels (no resampling: it would blur text and, by adding grey levels, make the
  file larger, not smaller);
* at most :data:`COLOURS` colours, chosen to cover every colour of the figure (Pillow's
  maximum-coverage quantiser, no dithering): a line plot has a few colours and the grey levels
  of anti-aliased text, and no colour moves by more than a few levels per channel (a median cut
  weights colours by area and turns thin lines of a rare colour into another one);
* WebP, lossless, so no compression artefact touches lines or text.

On the smoke figures this is 4–5 times smaller than the PNG.

Deterministic: the same PNG gives the same bytes (no metadata, fixed encoder settings).
"""

from __future__ import annotations

import base64
import io

from PIL import Image

#: colours of the embedded copy
COLOURS = 64
#: WebP encoder effort (0–6): 2 is within 1 % of 6 in size and several times faster
EFFORT = 2


def compress(png: bytes) -> bytes:
    """The WebP bytes embedded for the PNG ``png`` (see the module docstring)."""
    with Image.open(io.BytesIO(png)) as source:
        rgba = source.convert("RGBA")
    image = Image.new("RGB", rgba.size, "white")
    image.paste(rgba, mask=rgba.getchannel("A"))  # transparent pixels on white, as on paper
    image = image.quantize(COLOURS, method=Image.Quantize.MAXCOVERAGE, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.convert("RGB").save(out, format="WEBP", lossless=True, quality=100, method=EFFORT)
    return out.getvalue()


def data_uri(png: bytes) -> str:
    """``data:image/webp;base64,…`` of :func:`compress`."""
    return "data:image/webp;base64," + base64.b64encode(compress(png)).decode("ascii")
