"""Every test starts with an empty charge store and event bus."""

import datetime

import pytest

from billing.store import charges
from common import clock, events


@pytest.fixture(autouse=True)
def clean_state():
    charges.clear()
    events.reset()
    yield
    charges.clear()
    events.reset()


@pytest.fixture
def frozen_day():
    with clock.frozen(datetime.datetime(2024, 1, 31, 9, 30)) as at:
        yield at
