"""What the twenty-seventh unseen set (synapse, Theano, fail2ban, nikola, graphite-web,
supervisor; 7 Dec 2026) showed that the driver now handles, from excerpts shaped like the real
inputs: a property one side made a method while the other added a use of it as a property; a
module-level value one side changed while the other rewrote the function that read it to read
something else; and a function indented two spaces, in a file indented four elsewhere, written
back with four after both sides edited it. And from the twenty-eighth (pydicom, django-cms,
evennia, biopython, Pyomo, glances): one value under two names, each side removing a different
copy; and the blank line above a statement that one side changed while the other reflowed the
statement."""

from __future__ import annotations

import ast

import libcst as cst

from fleet.merge._constructed import constructor_misfit
from fleet.merge._crossed import kind_changed, twins_both_dropped, value_bypassed
from fleet.merge._merge3 import merge3
from fleet.merge._pytext import header_merge
from fleet.merge._result import Clean, Conflicted


# Both sides also add an import at one place in each excerpt: git's line merge conflicts there,
# so the file reaches the structural stage (a file git merges cleanly is git's result).
def _imports(text: str, added: str) -> str:
    return text.replace("import logging\n", f"import logging\nimport {added}\n", 1)


# fail2ban 767fc0d4d41a (fail2ban/server/actions.py), tabs as there
ACTIONS = '''import logging


class Actions(object):
\tdef __init__(self, jail):
\t\tself._jail = jail

\t@property
\tdef status(self):
\t\t"""Status of active bans."""
\t\tret = [("Currently banned", self._jail.size())]
\t\treturn ret

\tdef stop(self):
\t\tself._jail = None
'''
ACTIONS_OURS = _imports(ACTIONS, "os").replace(
    '\t@property\n\tdef status(self):\n',
    '\tdef status(self, flavor="basic"):\n').replace(
    '\t\treturn ret\n',
    '\t\tif flavor == "cymru":\n\t\t\tret += [("Banned ASN list", [])]\n\t\treturn ret\n')
ACTIONS_THEIRS = _imports(ACTIONS, "sys").replace(
    '\t\treturn ret\n',
    '\t\treturn ret\n\n\t@property\n\tdef statusExtended(self):\n'
    '\t\t"""Jail status plus banned IPs\' ASN."""\n'
    '\t\treturn self.status + [("Banned ASN list", [])]\n')


def test_a_property_made_a_method_while_the_other_side_reads_it_is_a_conflict() -> None:
    result = merge3(ACTIONS, ACTIONS_OURS, ACTIONS_THEIRS, "fail2ban/server/actions.py")
    assert isinstance(result, Conflicted), result.text
    trees = [ast.parse(t) for t in (ACTIONS, ACTIONS_OURS, ACTIONS_THEIRS)]
    clean = ACTIONS_OURS.replace('\tdef stop(self):', ACTIONS_THEIRS.split('\t\treturn ret\n')[1]
                                 .lstrip('\n') + '\n\tdef stop(self):')
    clean = clean.replace("import os\n", "import os\nimport sys\n")
    assert "self.status +" in clean
    assert kind_changed([*trees, ast.parse(clean)]) == (
        "one side made Actions.status a method, the other adds uses of it as a property")


def test_a_new_property_that_reads_something_else_still_merges() -> None:
    theirs = ACTIONS_THEIRS.replace("self.status +", "self._jail.extra() +")
    result = merge3(ACTIONS, ACTIONS_OURS, theirs, "fail2ban/server/actions.py")
    assert isinstance(result, Clean), result.text
    assert result.stage == "structural"
    assert 'def status(self, flavor="basic"):' in result.text
    assert "def statusExtended(self):" in result.text


def test_a_method_made_a_property_while_the_other_side_calls_it() -> None:
    base = "import logging\n\n\nclass A:\n    def size(self):\n        return 1\n\n" \
           "    def twice(self):\n        return 2\n"
    ours = _imports(base.replace("    def size(self):", "    @property\n    def size(self):"), "os")
    theirs = _imports(base.replace("return 2", "return 2 * self.size()"), "sys")
    merged = ours.replace("return 2", "return 2 * self.size()")
    trees = [ast.parse(t) for t in (base, ours, theirs, merged)]
    assert kind_changed(trees) == (
        "one side made A.size a property, the other adds uses of it as a method")
    assert isinstance(merge3(base, ours, theirs, "a.py"), Conflicted)


# graphite-web 3b7cb114dbed (webapp/graphite/render/glyph.py): four spaces in the first block,
# two in the functions
GLYPH = '''import logging
try:
    import cairo
except ImportError:
    import cairocffi as cairo

UnitSystems = {
  'binary': (
    ('Pi', 1024.0**5),
    ('Ki', 1024.0   )),
  'si': (
    ('P', 1000.0**5),
    ('K', 1000.0   )),
  'none' : [],
}

def format_units(v, step=None, system="si"):
  """Format the given value in standardized units."""
  if step is None:
    condition = lambda size: abs(v) >= size
  else:
    condition = lambda size: abs(v) >= size and step >= size

  for prefix, size in UnitSystems[system]:
    if condition(size):
      return v / size, prefix

  return v, ""


def find_x_times(start_dt, unit, step):
  return start_dt
'''
GLYPH_OURS = _imports(GLYPH, "os").replace(
    "}\n\ndef format_units", "}\n\n\ndef format_units").replace(
    "    ('K', 1000.0   )),\n",
    "    ('k', 1000.0   )),\n  'sec': (\n    ('D', 60*60*24),\n    ('m', 60)),\n").replace(
    '  """Format the given value in standardized units."""\n',
    '  """Format the given value in standardized units."""\n\n  if v is None:\n'
    '    return v, ""\n\n')
GLYPH_THEIRS = _imports(GLYPH, "sys").replace(
    "  'none' : [],\n}\n",
    "  'none' : [],\n}\n\nUnitSystemsExt = {\n  'si': (\n    ('P%s', 1000.0**5),\n"
    "    ('K%s', 1000.0   )),\n  'none' : [],\n}\n").replace(
    "UnitSystems[system]:", "UnitSystemsExt[system]:").replace(
    "      return v / size, prefix\n", "      return v / size, prefix % ' '\n")


def test_a_value_changed_while_the_other_side_stops_reading_it_is_a_conflict() -> None:
    result = merge3(GLYPH, GLYPH_OURS, GLYPH_THEIRS, "webapp/graphite/render/glyph.py")
    assert isinstance(result, Conflicted), result.text
    clean = GLYPH_OURS.replace("UnitSystems[system]:", "UnitSystemsExt[system]:")
    trees = [ast.parse(t) for t in (GLYPH, GLYPH_OURS, GLYPH_THEIRS, clean)]
    assert value_bypassed(trees) == (
        "one side changed the value of UnitSystems, the other made format_units read it no more")


def test_a_header_merged_token_by_token_keeps_the_blocks_own_indentation() -> None:
    # theirs changes the signature, ours the blank lines above it: both "headers" changed, so
    # they are merged token by token from stubs parsed alone, where two spaces read as the
    # default; the frame must keep them explicit, or the body is written back with four
    theirs = GLYPH.replace('system="si"):', 'system="si", units=None):')
    ours = GLYPH.replace("}\n\ndef format_units", "}\n\n\ndef format_units")
    module = cst.parse_module(GLYPH)
    nodes = [next(s for s in cst.parse_module(t).body if isinstance(s, cst.FunctionDef))
             for t in (GLYPH, ours, theirs)]
    frame = header_merge(*nodes)
    assert isinstance(frame, cst.FunctionDef)
    assert module.default_indent == "    " and frame.body.indent == "  "
    assert module.code_for_node(frame).endswith('units=None):\n  pass\n')


def test_both_edits_of_a_function_indented_two_spaces_compose() -> None:
    # theirs still reads UnitSystems: the two edits of format_units compose, and the function
    # keeps its two spaces (it was written back with the file's four)
    # (theirs also changes the signature and ours the blank lines above it: both "headers"
    # changed, so they are merged token by token and the body put back under the result)
    theirs = _imports(GLYPH, "sys").replace("      return v / size, prefix\n",
                                            "      return v / size, prefix.strip()\n").replace(
        'system="si"):', 'system="si", units=None):')
    result = merge3(GLYPH, GLYPH_OURS, theirs, "webapp/graphite/render/glyph.py")
    assert isinstance(result, Clean), result.text
    assert result.stage == "structural"
    assert result.text == GLYPH_OURS.replace(
        "      return v / size, prefix\n", "      return v / size, prefix.strip()\n").replace(
        "import os\n", "import os\nimport sys\n").replace(
        'system="si"):', 'system="si", units=None):')


def test_a_value_changed_beside_a_function_that_still_reads_it_is_not_flagged() -> None:
    theirs = GLYPH.replace("  return v, \"\"\n", "  return float(v), \"\"\n")
    merged = GLYPH_OURS.replace("  return v, \"\"\n", "  return float(v), \"\"\n")
    trees = [ast.parse(t) for t in (GLYPH, GLYPH_OURS, theirs, merged)]
    assert value_bypassed(trees) is None


# pydicom d507d41ea644 (pydicom/uid.py), from the twenty-eighth set (django-cms, glances,
# evennia, Pyomo, biopython, pydicom; 7 Dec 2026): one list written under two names; each side
# removed the other copy
UID = '''import logging

ExplicitVRLittleEndian = '1.2.840.10008.1.2.1'
ImplicitVRLittleEndian = '1.2.840.10008.1.2'

UncompressedPixelTransferSyntaxes = [
    ExplicitVRLittleEndian,
    ImplicitVRLittleEndian,
]

JPEGLSSupportedCompressedPixelTransferSyntaxes = ['1.2.840.10008.1.2.4.80']

NotCompressedPixelTransferSyntaxes = [
    ExplicitVRLittleEndian, ImplicitVRLittleEndian
]
'''
UID_OURS = _imports(UID, "os").replace(
    "\nNotCompressedPixelTransferSyntaxes = [\n    ExplicitVRLittleEndian, ImplicitVRLittleEndian\n"
    "]\n", "")
UID_THEIRS = _imports(UID, "sys").replace(
    "UncompressedPixelTransferSyntaxes = [\n    ExplicitVRLittleEndian,\n"
    "    ImplicitVRLittleEndian,\n]\n\n", "")


def test_two_names_of_one_value_each_removed_by_one_side_is_a_conflict() -> None:
    result = merge3(UID, UID_OURS, UID_THEIRS, "pydicom/uid.py")
    assert isinstance(result, Conflicted), result.text
    merged = UID_THEIRS.replace(
        "\nNotCompressedPixelTransferSyntaxes = [\n"
        "    ExplicitVRLittleEndian, ImplicitVRLittleEndian\n]\n", "")
    trees = [ast.parse(t) for t in (UID, UID_OURS, UID_THEIRS, merged)]
    assert twins_both_dropped(trees) == (
        "NotCompressedPixelTransferSyntaxes and UncompressedPixelTransferSyntaxes held one "
        "value; one side removed NotCompressedPixelTransferSyntaxes, the other "
        "UncompressedPixelTransferSyntaxes, and the result keeps neither")


def test_the_same_copy_removed_by_both_sides_still_merges() -> None:
    theirs = UID_OURS.replace("import os", "import sys")
    result = merge3(UID, UID_OURS, theirs, "pydicom/uid.py")
    assert isinstance(result, Clean), result.text
    assert "UncompressedPixelTransferSyntaxes = [" in result.text


# django-cms 59b7487e7fb8 (cms/test_utils/project/emailuserapp/models.py), twenty-eighth set:
# ours put a new import group above the first import, a blank line between; theirs reflowed
# that first import
MODELS = '''from django.contrib.auth.models import (AbstractBaseUser, BaseUserManager,
                                        PermissionsMixin)
from django.core.mail import send_mail
from django.utils.http import urlquote
from django.utils import timezone


class EmailUser(AbstractBaseUser):
    def link(self):
        return urlquote(self.email)
'''
MODELS_OURS = ("from urllib.parse import quote\n\n" + MODELS).replace(
    "from django.utils.http import urlquote\n", "").replace("urlquote(", "quote(")
MODELS_THEIRS = MODELS.replace(
    "(AbstractBaseUser, BaseUserManager,\n                                        "
    "PermissionsMixin)",
    "(\n    AbstractBaseUser, BaseUserManager, PermissionsMixin,\n)").replace(
    "from django.utils.http import urlquote\nfrom django.utils import timezone\n",
    "from django.utils import timezone\nfrom django.utils.http import urlquote\n")


def test_a_blank_line_one_side_put_above_a_statement_the_other_reflowed_is_kept() -> None:
    result = merge3(MODELS, MODELS_OURS, MODELS_THEIRS, "emailuserapp/models.py")
    assert isinstance(result, Clean), result.text
    assert result.text.startswith(
        "from urllib.parse import quote\n\nfrom django.contrib.auth.models import (\n"
        "    AbstractBaseUser, BaseUserManager, PermissionsMixin,\n)\n")
    assert "urlquote" not in result.text


# h5py 6026179c7faf (setup_configure.py), from the twenty-ninth set (dipy, h5py, python-gitlab,
# nibabel, PyTables, Radicale; 7 Dec 2026): theirs gave __init__ a new required parameter and
# passed it; ours added an early ``return cls(...)`` with base's arguments
CONFIGURE = '''import logging
import os


class BuildConfig:
    def __init__(self, includedirs, libdirs, version, mpi):
        self.includedirs = includedirs
        self.libdirs = libdirs
        self.version = version
        self.mpi = mpi

    @classmethod
    def from_env(cls):
        inc = os.environ.get("HDF5_INCLUDEDIR")
        lib = os.environ.get("HDF5_LIBDIR")
        mpi = os.environ.get("HDF5_MPI") == "ON"
        version = probe(lib)
        return cls(inc, lib, version, mpi)


def probe(lib):
    return (1, 12, 0)
'''
CONFIGURE_OURS = _imports(CONFIGURE, "sys").replace(
    '        version = probe(lib)\n',
    '        version_s = os.environ.get("HDF5_VERSION")\n'
    '        if version_s and not mpi:\n'
    '            return cls(inc, lib, tuple(version_s.split(".")), mpi)\n'
    '        version = probe(lib)\n')
CONFIGURE_THEIRS = _imports(CONFIGURE, "re").replace(
    "    def __init__(self, includedirs, libdirs, version, mpi):\n",
    "    def __init__(self, includedirs, libdirs, version, mpi, direct_vfd):\n").replace(
    "        self.mpi = mpi\n",
    "        self.mpi = mpi\n        self.direct_vfd = direct_vfd\n").replace(
    "        return cls(inc, lib, version, mpi)\n",
    "        direct_vfd = os.environ.get(\"HDF5_DIRECT_VFD\") == \"1\"\n"
    "        return cls(inc, lib, version, mpi, direct_vfd)\n")


def test_a_new_instance_made_the_old_way_after_init_gained_a_parameter_is_a_conflict() -> None:
    result = merge3(CONFIGURE, CONFIGURE_OURS, CONFIGURE_THEIRS, "setup_configure.py")
    assert isinstance(result, Conflicted), result.text
    merged = CONFIGURE_THEIRS.replace("import re\n", "import re\nimport sys\n").replace(
        "        version = probe(lib)\n",
        '        version_s = os.environ.get("HDF5_VERSION")\n'
        '        if version_s and not mpi:\n'
        '            return cls(inc, lib, tuple(version_s.split(".")), mpi)\n'
        '        version = probe(lib)\n')
    trees = [ast.parse(t) for t in (CONFIGURE, CONFIGURE_OURS, CONFIGURE_THEIRS, merged)]
    assert constructor_misfit(trees) == (
        "a call of BuildConfig does not fit the __init__ one side gave it")


def test_a_new_instance_that_fits_the_new_init_still_merges() -> None:
    ours = CONFIGURE_OURS.replace(
        "            return cls(inc, lib, tuple(version_s.split(\".\")), mpi)\n",
        "            return cls(inc, lib, tuple(version_s.split(\".\")), mpi, False)\n")
    theirs = CONFIGURE_THEIRS.replace("mpi, direct_vfd):\n", "mpi, direct_vfd=False):\n")
    result = merge3(CONFIGURE, ours, theirs, "setup_configure.py")
    assert isinstance(result, Clean), result.text
    assert "return cls(inc, lib, tuple(version_s.split(\".\")), mpi, False)" in result.text
