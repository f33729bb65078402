"""Write the stored pictures tests/test_svg.py compares against: each SVG of
its ``pictures()`` rendered by resvg-py, as PNG.  Run from the repository
root after a deliberate change to the drawings, then look at the pictures:

    python tests/data/make_svg_pictures.py
"""

import sys
from pathlib import Path

from PIL import Image

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

import test_svg  # noqa: E402

for name, svg in test_svg.pictures().items():
    Image.fromarray(test_svg.rendered(svg)).save(HERE / f"svg_{name}.png")
    print(HERE / f"svg_{name}.png")
