"""What the thirty-third unseen set (pwntools, python-for-android, esphome, vispy, pyload, napari;
7 Dec 2026) showed that the driver now handles, from excerpts shaped like the real inputs: one
string both sides added to a list, one flag both sides added to a variable in their own words,
one helper added as a method by one side and as a function by the other, and a dataclass given
more fields by one side while the other added a call with the old ones."""

from __future__ import annotations

import ast

from fleet.merge._constructed import constructor_misfit
from fleet.merge._merge3 import merge3
from fleet.merge._result import Clean, Conflicted
from fleet.merge._twice import added_under_two_names, augmented_twice

# esphome 47e4b02023b0 (esphome/components/homeassistant/__init__.py)
OWNERS = 'import esphome.codegen as cg\n\nCODEOWNERS = ["@OttoWinter"]\nns = cg.esphome_ns\n'


def test_one_string_both_sides_added_to_a_list_at_two_places_is_a_conflict() -> None:
    ours = OWNERS.replace('["@OttoWinter"]', '["@esphome/core", "@OttoWinter"]').replace(
        "import esphome.codegen as cg\n", "import esphome.codegen as cg\nimport os\n")
    theirs = OWNERS.replace('["@OttoWinter"]', '["@OttoWinter", "@esphome/core"]').replace(
        "import esphome.codegen as cg\n", "import esphome.codegen as cg\nimport sys\n")

    result = merge3(OWNERS, ours, theirs, "homeassistant/__init__.py")

    assert isinstance(result, Conflicted)
    # different strings at the two places still merge
    other = theirs.replace('"@OttoWinter", "@esphome/core"', '"@OttoWinter", "@jesserockz"')
    merged = merge3(OWNERS, ours, other, "homeassistant/__init__.py")
    assert isinstance(merged, Clean)
    assert 'CODEOWNERS = ["@esphome/core", "@OttoWinter", "@jesserockz"]' in merged.text


# python-for-android f7cbb20b694b (pythonforandroid/recipes/cryptography/__init__.py)
RECIPE = '''class CryptographyRecipe(CompiledComponentsPythonRecipe):
    def get_recipe_env(self, arch):
        env = super().get_recipe_env(arch)
        openssl_dir = self.get_recipe('openssl', self.ctx).get_build_dir(arch.arch)
        env['LDFLAGS'] += ' -L' + openssl_dir + ' -lssl'
        return env
'''
OURS_FLAG = "        env['CFLAGS'] += ' -I{}/include'.format(openssl_dir)\n"
THEIRS_FLAG = "        env['CFLAGS'] += ' -I' + join(openssl_dir, 'include')\n"


def _trees(*texts: str) -> list[ast.Module]:
    return [ast.parse(text) for text in texts]


def test_one_flag_both_sides_added_in_their_own_words_is_found() -> None:
    ours = RECIPE.replace("        return env\n", OURS_FLAG + "        return env\n")
    theirs = RECIPE.replace("        env['LDFLAGS']", THEIRS_FLAG + "        env['LDFLAGS']")
    both = ours.replace("        env['LDFLAGS']", THEIRS_FLAG + "        env['LDFLAGS']")

    reason = augmented_twice(_trees(RECIPE, ours, theirs, both))

    assert reason is not None and "env['CFLAGS']" in reason
    # two flags of their own (no variable in common) are two edits
    other = RECIPE.replace("        env['LDFLAGS']",
                           "        env['CFLAGS'] += ' -DNDEBUG'\n        env['LDFLAGS']")
    kept = ours.replace("        env['LDFLAGS']", "        env['CFLAGS'] += ' -DNDEBUG'\n"
                        "        env['LDFLAGS']")
    assert augmented_twice(_trees(RECIPE, ours, other, kept)) is None


# napari 02e98ced084b (src/napari/layers/tracks/_track_utils.py)
TRACKS = '''class TrackManager:
    def track_labels(self, current_time):
        lbl, pos = self.labels(current_time)
        return lbl, pos
'''
HELPER = '''def {name}(data, column_map):
    required = ["track_id", "t", "y", "x"]
    missing = [c for c in required if c not in column_map]
    if missing:
        raise ValueError(f"missing {{missing}}")
    order = [column_map["track_id"], column_map["t"], column_map["y"]]
    return data[:, order].to_numpy()
'''


def test_one_helper_added_as_a_method_and_as_a_function_is_a_conflict() -> None:
    method = "".join(f"    {line}\n" if line else "\n"
                     for line in HELPER.format(name="normalize_track_data").splitlines())
    theirs = TRACKS + "\n" + method
    ours = TRACKS + "\n\n" + HELPER.format(name="prepare_tracks_data").replace(
        "(data, column_map):", "(data: 'pd.DataFrame', column_map: dict) -> 'pd.DataFrame':")
    both = theirs + "\n\n" + ours[len(TRACKS) + 2:]

    reason = added_under_two_names(_trees(TRACKS, ours, theirs, both))

    assert reason is not None and "prepare_tracks_data" in reason
    assert isinstance(merge3(TRACKS, ours, theirs, "_track_utils.py"), Conflicted)


# esphome e5e166189b7a (esphome/components/esp32_rmt_led_strip/light.py)
TIMINGS = '''from dataclasses import dataclass


@dataclass
class LEDStripTimings:
    bit0_high: int
    bit0_low: int
    bit1_high: int
    bit1_low: int


CHIPSETS = {
    "WS2812": LEDStripTimings(400, 1000, 1000, 400),
    "SK6812": LEDStripTimings(300, 900, 600, 600),
}
'''


def test_a_dataclass_call_that_misses_the_fields_the_other_side_added_is_a_conflict() -> None:
    theirs = TIMINGS.replace("    bit1_low: int\n", "    bit1_low: int\n    reset_high: int\n"
                             "    reset_low: int\n").replace("400)", "400, 0, 0)").replace(
        "600)", "600, 0, 0)")
    ours = TIMINGS.replace('CHIPSETS = {\n', 'CHIPSETS = {\n    "WS2811": LEDStripTimings(300, '
                           '1090, 1090, 320),\n')
    merged = theirs.replace('CHIPSETS = {\n', 'CHIPSETS = {\n    "WS2811": LEDStripTimings(300, '
                            '1090, 1090, 320),\n')

    assert constructor_misfit(_trees(TIMINGS, ours, theirs, merged)) is not None
    assert isinstance(merge3(TIMINGS, ours, theirs, "light.py"), Conflicted)
    # with defaults for the new fields, the old call fits
    defaulted = theirs.replace("reset_high: int\n    reset_low: int",
                               "reset_high: int = 0\n    reset_low: int = 0")
    fine = defaulted.replace('CHIPSETS = {\n', 'CHIPSETS = {\n    "WS2811": LEDStripTimings(300, '
                             '1090, 1090, 320),\n')
    assert constructor_misfit(_trees(TIMINGS, ours, defaulted, fine)) is None
    factory = theirs.replace("reset_high: int\n    reset_low: int",
                             "reset_high: int = field(default=0)\n"
                             "    reset_low: list = field(default_factory=list)")
    assert constructor_misfit(_trees(TIMINGS, ours, factory, factory.replace(
        'CHIPSETS = {\n', 'CHIPSETS = {\n    "WS2811": LEDStripTimings(1, 2, 3, 4),\n'))) is None


# esphome 5e0f43cf7b9e (esphome/components/cover/__init__.py): theirs re-sorted the names of an
# import (isort), ours added one
CONST = '''from esphome.const import (
    CONF_ID,
    CONF_DEVICE_CLASS,
    CONF_STATE,
    CONF_MQTT_ID,
)
from esphome.core import CORE
'''


def test_names_theirs_re_sorted_keep_theirs_order_with_ours_new_name_in_place() -> None:
    ours = CONST.replace("    CONF_MQTT_ID,\n", "    CONF_MQTT_ID,\n    CONF_WEB_SERVER,\n")
    ours = ours.replace("import CORE\n", "import CORE, coroutine\n")
    theirs = CONST.replace("    CONF_ID,\n    CONF_DEVICE_CLASS,\n    CONF_STATE,\n"
                           "    CONF_MQTT_ID,\n",
                           "    CONF_DEVICE_CLASS,\n    CONF_ID,\n    CONF_MQTT_ID,\n"
                           "    CONF_STATE,\n").replace(
        "from esphome.core import CORE\n", "from esphome.core import CORE, ID\n")

    result = merge3(CONST, ours, theirs, "cover/__init__.py")

    assert isinstance(result, Clean)
    assert result.text.startswith(
        "from esphome.const import (\n    CONF_DEVICE_CLASS,\n    CONF_ID,\n    CONF_MQTT_ID,\n"
        "    CONF_STATE,\n    CONF_WEB_SERVER,\n)\n")
