"""What the fifteenth unseen set showed of the stage itself, from excerpts of its real inputs.

nipype ``33d0664ca6d9`` (``nipype/interfaces/afni/__init__.py``): both sides added an import from
``.model``, ours ``from .model import (Deconvolve, Remlfit)``, theirs ``from .model
import(Deconvolve)`` without a space. Comparing the two statements without their names built
``from .model import_`` and libcst refused it (``CSTValidationError``): the stage raised, and
the driver kept git's conflict. The humans kept ours' line."""

from __future__ import annotations

from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean

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
