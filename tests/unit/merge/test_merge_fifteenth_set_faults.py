"""What the fifteenth unseen set showed of the stage itself, from excerpts of its real inputs.

nipype ``33d0664ca6d9`` (``nipype/interfaces/afni/__init__.py``): both sides added an import from
``.model``, ours ``from .model import (Deconvolve, Remlfit)``, theirs ``from .model
import(Deconvolve)`` without a space. Comparing the two statements without their names built
``from .model import_`` and libcst refused it (``CSTValidationError``): the stage raised, and
the driver kept git's conflict. The humans kept ours' line."""

from __future__ import annotations

import ast

from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean
from fleet.merge._unused_import import import_left_unused

BASE = '''"""Top-level namespace for afni."""

from .base import Info
from .svm import (SVMTest, SVMTrain)
from .utils import (AFNItoNIFTI, Autobox, BrickStat, Calc, Copy,
                    Unifize, ZCutUp, GCOR,)
'''
OURS = BASE.replace("from .svm", "from .model import (Deconvolve, Remlfit)\nfrom .svm")
THEIRS = BASE.replace("from .svm", "from .model import(Deconvolve)\nfrom .svm")


def test_an_import_without_a_space_before_its_parenthesis_merges() -> None:
    result = merge3(BASE, OURS, THEIRS, "__init__.py")
    assert isinstance(result, Clean) and result.stage == "structural", result
    assert result.text == OURS


def test_the_names_of_both_still_meet() -> None:
    theirs = BASE.replace("from .svm", "from .model import(Deconvolve, Retroicor)\nfrom .svm")
    result = merge3(BASE, OURS, theirs, "__init__.py")
    assert isinstance(result, Clean), result
    assert "from .model import (Deconvolve, Remlfit, Retroicor)" in result.text


PETSURFER = '''import os


class MRTM(GLMFit):
    def _list_outputs(self):
        outputs = super(MRTM, self)._list_outputs()
        outputs['k2p'] = os.path.join(self.inputs.glm_dir, 'k2prime.dat')
        return outputs


class LoganRef(GLMFit):
    def _list_outputs(self):
        outputs = super(LoganRef, self)._list_outputs()
        ext = '.nii.gz'
        outputs['bp'] = os.join(self.inputs.glm_dir, 'bp',  ext)
        return outputs


class MRTM2(GLMFit):
    def _list_outputs(self):
        outputs = super(MRTM2, self)._list_outputs()
        ext = '.nii.gz'
        outputs['bp'] = os.join(self.inputs.glm_dir, 'bp',  ext)
        return outputs
'''


def _edits(old: str, new: str) -> tuple[str, str, str]:
    """base with ``old`` at both ``bp`` lines; ours with ``new`` there; theirs adding ``old``
    calls beside them (the shape of nipype ``b9039d6cbb50``)."""
    base = PETSURFER.replace("os.join(", old + "(")
    ours = base.replace(old + "(self.inputs.glm_dir, 'bp'", new + "(self.inputs.glm_dir, 'bp'")
    theirs = base.replace(
        "'bp',  ext)\n        return outputs\n\n\nclass MRTM2",
        f"'bp',  ext)\n        outputs['yhat'] = {old}(self.inputs.glm_dir, 'yhat',  ext)\n"
        "        return outputs\n\n\nclass MRTM2",
    ).replace("os.path.join(self.inputs.glm_dir, 'k2prime.dat')",
              f"{old}(self.inputs.glm_dir, 'k2prime.dat')")
    assert ours.count(old + "(") == 0 and theirs.count(old + "(") == 4
    return base, ours, theirs


def test_a_read_the_standard_library_never_had_that_one_side_fixed_everywhere_conflicts() -> None:
    """nipype ``b9039d6cbb50`` (``interfaces/freesurfer/petsurfer.py``): ours fixed ``os.join``
    (no such function) to ``os.path.join`` at both uses; theirs added ``os.join`` calls beside
    them. Reads through a standard-library module were never judged (the old spelling usually
    still works); this one never worked, and the clean merge kept theirs' new ones."""
    result = merge3(*_edits("os.join", "os.path.join"), "petsurfer.py")
    assert not isinstance(result, Clean), result.text


def test_a_read_the_standard_library_has_stays_clean() -> None:
    """The same edits where the old spelling is one ``os`` has (``os.fspath``; what ours wrote
    instead does not matter): it still works, and the merge stays clean, as before."""
    result = merge3(*_edits("os.fspath", "os.path.fspath"), "petsurfer.py")
    assert isinstance(result, Clean), result
    assert result.text.count("os.fspath(") == 2 and result.text.count("os.path.fspath(") == 2


PEAKS = '''import numpy as np
import scipy.ndimage as ndi

from skimage._shared.coord import ensure_spacing


def _get_high_intensity_peaks(image, mask, num_peaks, min_distance, p_norm):
    """Return the highest intensity peak coordinates."""
    coord = np.nonzero(mask)
    intensities = image[coord]
    idx_maxsort = np.argsort(-intensities, kind="stable")
    coord = np.transpose(coord)[idx_maxsort]
    if np.isfinite(num_peaks):
        max_out = int(num_peaks)
    else:
        max_out = None
    coord = ensure_spacing(
        coord, spacing=min_distance, p_norm=p_norm, max_out=max_out
    )
    return coord


def _get_peak_mask(image, footprint, threshold, mask=None):
    """Return the mask containing all peak candidates above thresholds."""
    image_max = ndi.maximum_filter(image, footprint=footprint, mode="nearest")
    out = image == image_max
    out &= image > threshold
    return out
'''


def test_an_import_one_side_moved_and_the_other_made_unused_conflicts() -> None:
    """scikit-image ``579752d055a0`` (``skimage2/feature/_peaks.py``): ours replaced
    ``ensure_spacing`` by a local ``_ensure_spacing`` and deleted its import; theirs moved the
    import into the function; the clean merge kept it there, unused."""
    ours = PEAKS.replace("from skimage._shared.coord import ensure_spacing\n", "").replace(
        "    coord = ensure_spacing(", "    coord = _ensure_spacing(").replace(
        "\n\ndef _get_high", "\n\ndef _ensure_spacing(coord, spacing, p_norm, max_out):\n"
        "    return coord[:max_out]\n\n\ndef _get_high")
    theirs = PEAKS.replace("\nfrom skimage._shared.coord import ensure_spacing\n", "").replace(
        '    """Return the highest intensity peak coordinates."""\n',
        '    """Return the highest intensity peak coordinates."""\n'
        "    from skimage._shared.coord import ensure_spacing\n\n").replace(
        'mode="nearest")', 'mode="nearest")\n    image_max = np.asarray(image_max)')
    result = merge3(PEAKS, ours, theirs, "_peaks.py")
    assert not isinstance(result, Clean), result.text


def test_an_import_moved_into_a_function_that_still_uses_it_is_no_sign() -> None:
    """The same move, ours adding a helper beside it but still calling ``ensure_spacing``: a
    result that keeps the moved import and its use passes."""
    ours = PEAKS.replace(
        "\n\ndef _get_high", "\n\ndef _spacing_for(p_norm):\n    return 1 if p_norm else 2\n\n\n"
        "def _get_high")
    theirs = PEAKS.replace("\nfrom skimage._shared.coord import ensure_spacing\n", "").replace(
        '    """Return the highest intensity peak coordinates."""\n',
        '    """Return the highest intensity peak coordinates."""\n'
        "    from skimage._shared.coord import ensure_spacing\n\n")
    result = merge3(PEAKS, ours, theirs, "_peaks.py")
    assert isinstance(result, Clean), result
    assert "    from skimage._shared.coord import ensure_spacing\n" in result.text
    trees = [ast.parse(text) for text in (PEAKS, ours, theirs, result.text)]
    assert import_left_unused(trees) is None
    unused = result.text.replace("coord = ensure_spacing(", "coord = _spacing(")
    assert import_left_unused([*trees[:3], ast.parse(unused)]) is None  # (ours still reads it)
