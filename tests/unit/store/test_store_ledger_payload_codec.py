"""The ledger's payload codec: strings that are not valid Unicode are tagged losslessly, valid
payloads serialize exactly as before (so their hashes are unchanged), and stored objects that only
look like tags (written before tags existed) are read back as they are."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

from fleet.store.ledger import canonical_json, decode_payload, encode_payload

SEED = 20261130


def _random_text(rng: random.Random, allow_surrogates: bool) -> str:
    pools = [(0x20, 0x7E), (0x00, 0x1F), (0xA0, 0x2FF), (0x4E00, 0x4E80), (0x1F600, 0x1F64F)]
    if allow_surrogates:
        pools += [(0xD800, 0xDBFF), (0xDC00, 0xDFFF), (0xDC80, 0xDCFF)]
    out = []
    for _ in range(rng.randint(0, 12)):
        lo, hi = rng.choice(pools)
        out.append(chr(rng.randint(lo, hi)))
    return "".join(out)


def _random_payload(rng: random.Random, allow_surrogates: bool, depth: int = 0) -> Any:
    choice = rng.randint(0, 6 if depth < 3 else 3)
    if choice == 0:
        return _random_text(rng, allow_surrogates)
    if choice == 1:
        return rng.choice([None, True, False, rng.randint(-10**12, 10**12), rng.random() * 1e6])
    if choice == 2:
        return rng.choice(["$bytes_b64", "$items", "$escape", "$surrogatepass_b64", "plain"])
    if choice == 3:
        return ""
    if choice in (4, 5):
        keys = [_random_text(rng, allow_surrogates) for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.3:  # a one-key dict named like a tag
            keys = [rng.choice(["$bytes_b64", "$items", "$escape", "$surrogatepass_b64"])]
        return {k: _random_payload(rng, allow_surrogates, depth + 1) for k in keys}
    return [_random_payload(rng, allow_surrogates, depth + 1) for _ in range(rng.randint(0, 4))]


def _round_trip(payload: Any) -> Any:
    stored = canonical_json(encode_payload(payload))
    stored.encode("utf-8")  # strict: never a lone surrogate in what reaches the database
    return decode_payload(json.loads(stored))


def test_any_payload_round_trips_through_strict_utf8_json() -> None:
    rng = random.Random(SEED)
    tagged = 0
    for _ in range(3000):
        payload = {"p": _random_payload(rng, allow_surrogates=True)}
        assert _round_trip(payload) == payload
        tagged += encode_payload(payload) != payload
    assert tagged > 300  # the generator does reach the tagged forms


def test_valid_payloads_serialize_exactly_as_before() -> None:
    rng = random.Random(SEED + 1)
    for _ in range(3000):
        payload = {"p": _random_payload(rng, allow_surrogates=False)}
        if "$" in canonical_json(payload):
            continue  # one-key dicts named like a tag are escaped (documented)
        old = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert canonical_json(encode_payload(payload)) == old


def test_surrogateescaped_bytes_are_stored_as_the_original_bytes() -> None:
    rng = random.Random(SEED + 2)
    for _ in range(500):
        data = bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 64)))
        text = data.decode("utf-8", "surrogateescape")
        encoded = encode_payload({"d": text})["d"]
        if isinstance(encoded, str):
            assert encoded == data.decode("utf-8")  # it was valid UTF-8 all along
        else:
            assert base64.b64decode(encoded["$bytes_b64"]) == data
        assert _round_trip({"d": text}) == {"d": text}


def test_escapes_that_would_decode_to_other_text_keep_their_identity() -> None:
    text = "\udcc3\udca9"  # the bytes C3 A9 are a valid "é": the bytes form would lose this
    encoded = encode_payload(text)
    assert set(encoded) == {"$surrogatepass_b64"}
    assert _round_trip([text, "é"]) == [text, "é"]


def test_non_string_keys_of_a_tagged_dict_follow_json() -> None:
    payload = {2: "a", None: "b", True: "c", 1.5: "e", "caf\udce9": "d"}
    expected = {"2": "a", "null": "b", "true": "c", "1.5": "e", "caf\udce9": "d"}
    assert _round_trip(payload) == expected
    # the conversion json.dumps applies to such keys when none needs a tag
    assert json.loads(canonical_json(encode_payload({2: "a", 1.5: "e"}))) == {"2": "a", "1.5": "e"}


def test_stored_objects_that_only_look_like_tags_are_read_as_they_are() -> None:
    for stored in [
        {"$bytes_b64": 5},
        {"$bytes_b64": "not base64!"},
        {"$surrogatepass_b64": "////"},
        {"$items": [["a"]]},
        {"$items": [[1, 2]]},
        {"$escape": "x"},
        {"$bytes_b64": "YQ==", "other": 1},
    ]:
        assert decode_payload(stored) == stored
