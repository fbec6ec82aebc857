"""An in-process event bus: services publish domain events, subscribers react synchronously."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from common import clock, ids

Handler = Callable[["Event"], None]


@dataclass(frozen=True)
class Event:
    name: str
    payload: dict
    event_id: str = field(default_factory=lambda: ids.new_id("event"))
    at: object = field(default_factory=clock.utc_now)


class EventBus:
    """Publish/subscribe by event name; ``"*"`` subscribes to everything."""

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = defaultdict(list)
        self.history: list[Event] = []

    def subscribe(self, name: str, handler: Handler) -> None:
        self._handlers[name].append(handler)

    def publish(self, name: str, **payload: object) -> Event:
        event = Event(name, dict(payload))
        self.history.append(event)
        for handler in [*self._handlers.get(name, []), *self._handlers.get("*", [])]:
            handler(event)
        return event

    def names(self) -> list[str]:
        return [event.name for event in self.history]


bus = EventBus()


def reset() -> None:
    """Forget every subscriber and event (tests call this between cases)."""
    bus._handlers.clear()
    bus.history.clear()
