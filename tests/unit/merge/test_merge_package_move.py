"""A package one side moved in every import while the other side adds an import under the old
spelling (scikit-image of the fifteenth unseen set, 5 Dec 2026: ``skimage._shared`` moved to
``_skimage2._shared``, written relative or absolute). Each is a conflict now; a respelling of
the same module and one name moved to another module stay clean."""

from __future__ import annotations

import ast

from fleet.merge import Clean
from fleet.merge._merge3 import merge3
from fleet.merge._module_prefix import prefix_retired

# scikit-image 56d1ad915989, src/skimage/restoration/_denoise.py: theirs moved both relative
# ``.._shared`` imports to ``_skimage2._shared``; ours added ``.._shared.version_requirements``.
DENOISE = (
    "import numpy as np\n"
    "\n"
    "from ..util.dtype import img_as_float\n"
    "from .._shared import utils\n"
    "from .._shared.utils import _supported_float_type, warn\n"
    "from ._denoise_cy import _denoise_bilateral\n"
    "from .. import color\n"
    "\n"
    "\n"
    "@utils.channel_as_last_axis()\n"
    "def denoise_bilateral(image, sigma=None):\n"
    "    if sigma is None:\n"
    "        warn('no sigma')\n"
    "    image = img_as_float(image).astype(_supported_float_type(image.dtype))\n"
    "    return _denoise_bilateral(image, sigma)\n"
    "\n"
    "\n"
    "def denoise_wavelet(image):\n"
    "    import pywt\n"
    "\n"
    "    return pywt.wavedecn(color.rgb2gray(image), 'db1')\n"
)


DENOISE_MOVED = DENOISE.replace("from .._shared", "from _skimage2._shared")


def _requiring(package: str) -> str:
    """Ours of 56d1ad915989: ``require`` imported from ``package`` and put to use."""
    return DENOISE.replace(
        "warn\n", f"warn\nfrom {package}.version_requirements import require\n", 1
    ).replace("def denoise_wavelet", '@require("pywt")\ndef denoise_wavelet', 1)


def test_a_relative_import_under_a_package_the_other_side_moved_is_a_conflict() -> None:
    path = "src/skimage/restoration/_denoise.py"
    result = merge3(DENOISE, _requiring(".._shared"), DENOISE_MOVED, path)
    assert not isinstance(result, Clean)


def test_the_added_import_written_in_the_new_place_merges_cleanly() -> None:
    path = "src/skimage/restoration/_denoise.py"
    result = merge3(DENOISE, _requiring("_skimage2._shared"), DENOISE_MOVED, path)
    assert isinstance(result, Clean)
    assert ".._shared" not in result.text


# scikit-image dd348640233e, src/skimage/morphology/footprints.py: ours moved its only shared
# import; theirs added ``from .._shared._warnings import warn_external``.
FOOTPRINTS = (
    "import numpy as np\n"
    "\n"
    "from .. import draw\n"
    "from skimage import morphology\n"
    "from .._shared.utils import deprecate_func\n"
    "\n"
    "\n"
    "@deprecate_func(deprecated_version='0.25', removed_version='0.27')\n"
    "def footprint_rectangle(shape):\n"
    "    return np.ones(shape, dtype=np.uint8)\n"
    "\n"
    "\n"
    "def mirror_footprint(footprint):\n"
    "    return footprint[::-1]\n"
)


def test_the_package_moved_by_its_only_import_is_a_conflict() -> None:
    path = "src/skimage/morphology/footprints.py"
    ours = FOOTPRINTS.replace("from .._shared.utils", "from _skimage2._shared.utils")
    theirs = FOOTPRINTS.replace(
        "deprecate_func\n", "deprecate_func\nfrom .._shared._warnings import warn_external\n", 1
    ).replace(
        "    return footprint[::-1]\n",
        "    warn_external('mirror_footprint moves to skimage2')\n    return footprint[::-1]\n",
    )
    assert not isinstance(merge3(FOOTPRINTS, ours, theirs, path), Clean)


# scikit-image a530fbb26c9b, tests/skimage/filters/test_gaussian.py: theirs moved the file's
# only ``skimage._shared`` import; ours added ``from skimage._shared.testing import ...``.
GAUSSIAN = (
    "import numpy as np\n"
    "import pytest\n"
    "\n"
    "from skimage._shared.utils import _supported_float_type\n"
    "from skimage.filters import gaussian\n"
    "\n"
    "\n"
    "def test_image_dtype():\n"
    "    a = np.zeros((3, 3))\n"
    "    assert gaussian(a).dtype == _supported_float_type(a.dtype)\n"
)
STACKLEVEL = (
    "\n"
    "\n"
    "def test_gaussian_warns():\n"
    "    with pytest.warns(FutureWarning) as record:\n"
    "        gaussian(np.ones((3, 3)))\n"
    "    assert_stacklevel(record)\n"
)


def test_an_absolute_import_under_a_package_the_other_side_moved_is_a_conflict() -> None:
    path = "tests/skimage/filters/test_gaussian.py"
    ours = (
        GAUSSIAN.replace(
            "_supported_float_type\n",
            "_supported_float_type\nfrom skimage._shared.testing import assert_stacklevel\n",
            1,
        )
        + STACKLEVEL
    )
    theirs = GAUSSIAN.replace("skimage._shared.utils", "_skimage2._shared.utils")
    assert not isinstance(merge3(GAUSSIAN, ours, theirs, path), Clean)
    texts = [
        GAUSSIAN,
        ours,
        theirs,
        ours.replace("skimage._shared.utils", "_skimage2._shared.utils"),
    ]
    assert prefix_retired(texts, [ast.parse(text) for text in texts]) == (
        "one side renamed every import under skimage._shared to _skimage2._shared; the other "
        "adds one under skimage._shared"
    )


# Near misses: the same module written another way, or one name moved, is no package move.
# The rule has no file path: one relative import written absolute in a file that names its
# own package nowhere else cannot be told from a move (it would be a conflict).
TESTS = (
    '"""Tests of the shared helpers; see skimage.restoration."""\n'
    "\n"
    "from ..util import img_as_float\n"
    "from .._shared import utils\n"
    "\n"
    "\n"
    "def test_float():\n"
    "    assert utils.check_nD(img_as_float([[1]]), 2) is None\n"
)
ADDED = "\n\ndef test_testing():\n    assert assert_equal(1, 1) is None\n"


def _add_relative(text: str) -> str:
    line = "from .._shared import utils\n"
    return text.replace(line, line + "from .._shared.testing import assert_equal\n", 1) + ADDED


def test_a_relative_import_respelled_absolute_in_a_file_naming_its_package_is_no_move() -> None:
    ours = TESTS.replace("from .._shared", "from skimage._shared")
    result = merge3(TESTS, ours, _add_relative(TESTS), "skimage/util/tests/test_shared.py")
    assert isinstance(result, Clean)
    assert "from skimage._shared import utils" in result.text
    assert "from .._shared.testing import assert_equal" in result.text


def test_every_relative_import_respelled_absolute_is_no_move() -> None:
    base = TESTS.replace("; see skimage.restoration", "")
    ours = base.replace("from ..", "from skimage.")
    result = merge3(base, ours, _add_relative(base), "skimage/util/tests/test_shared.py")
    assert isinstance(result, Clean)
    assert "from .._shared.testing import assert_equal" in result.text


def test_an_absolute_import_respelled_relative_is_no_move() -> None:
    base = TESTS.replace("from ..", "from skimage.")
    ours = base.replace("from skimage._shared", "from .._shared")
    theirs = (
        base.replace(
            "import utils\n", "import utils\nfrom skimage._shared.testing import assert_equal\n", 1
        )
        + ADDED
    )
    result = merge3(base, ours, theirs, "skimage/util/tests/test_shared.py")
    assert isinstance(result, Clean)
    assert "from skimage._shared.testing import assert_equal" in result.text


def test_one_name_moved_to_another_module_is_no_package_move() -> None:
    base = "from a.b.c import X\nfrom a.b import d\n\n\ndef f():\n    return X, d\n"
    ours = base.replace("from a.b.c import X", "from a.d import X")
    theirs = base.replace("from a.b import d\n", "from a.b import d\nfrom a.b.e import Y\n") + (
        "\n\ndef g():\n    return Y\n"
    )
    result = merge3(base, ours, theirs, "pkg/mod.py")
    assert isinstance(result, Clean)
    assert "from a.d import X" in result.text
    assert "from a.b.e import Y" in result.text
