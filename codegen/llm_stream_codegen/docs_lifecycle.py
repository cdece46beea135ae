"""The lifecycle as the documentation shows it, derived from the lifecycle tables: the event types
in lifecycle order and by place, what may precede and follow each, and the state diagrams.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import (
    EventType,
    Spec,
    StateMachine,
)
from .render_diagram import state_diagram


def lifecycle_order(spec: Spec) -> list[EventType]:
    """The event types in the order a stream meets them: by place, then as registered."""
    places = list(spec.lifecycle.places)
    return sorted(spec.event_types, key=lambda event: places.index(event.lifecycle.place))


def events_by_place(spec: Spec) -> dict[str, list[EventType]]:
    places: dict[str, list[EventType]] = {name: [] for name in spec.lifecycle.places}
    for event in spec.event_types:
        places.setdefault(event.lifecycle.place, []).append(event)
    return places


def _entered(machine: StateMachine, place: str) -> tuple[set[str], set[str]]:
    """(states in which an event of `place` may arrive, states it leaves the machine in)."""
    before = {state for state, moves in machine.transitions.items() if place in moves}
    after = {machine.transitions[state][place] for state in before}
    return before, after


@dataclass(frozen=True)
class Neighbours:
    """What may come right before and right after an event type, by the stream machine."""

    arrives_in: tuple[str, ...]
    leaves_in: tuple[str, ...]
    preceded_by: tuple[str, ...]
    followed_by: tuple[str, ...]
    first: bool
    last: bool
    violations: tuple[tuple[str, str], ...]
    """(state, rule) where an event of this place breaks a rule."""
    block_moves: tuple[tuple[str, str], ...]
    """(block state before, after) at the event's index, for block events."""
    block_violations: tuple[tuple[str, str], ...]


def neighbours(spec: Spec, event: EventType) -> Neighbours:
    machine, place = spec.lifecycle.stream, event.lifecycle.place
    arrives, leaves = _entered(machine, place)
    follows = [
        other.name for other in spec.event_types
        if any(other.lifecycle.place in machine.transitions.get(state, {}) for state in leaves)
    ]
    precedes = [
        other.name for other in spec.event_types
        if any(machine.transitions.get(state, {}).get(other.lifecycle.place) in arrives
               for state in machine.transitions)
    ]
    violations = []
    for state in machine.transitions:
        if state in arrives:
            continue
        rule = machine.violation(state, place)
        if rule is not None:
            violations.append((state, rule))
    blocks = spec.lifecycle.blocks
    block_moves = tuple((state, moves[place]) for state, moves in blocks.transitions.items()
                        if place in moves)
    block_violations: list[tuple[str, str]] = []
    if block_moves:
        for state, moves in blocks.transitions.items():
            rule = None if place in moves else blocks.violation(state, place)
            if rule is not None:
                block_violations.append((state, rule))
    return Neighbours(
        arrives_in=tuple(s for s in machine.transitions if s in arrives),
        leaves_in=tuple(s for s in machine.transitions if s in leaves),
        preceded_by=tuple(precedes),
        followed_by=tuple(follows),
        first=machine.initial in arrives,
        last=all(not machine.transitions.get(state) for state in leaves),
        violations=tuple(violations),
        block_moves=block_moves,
        block_violations=tuple(block_violations),
    )


def diagram(spec: Spec, machine: StateMachine, title: str) -> str:
    """A lifecycle machine as inline SVG, its arrows' tooltips naming the event types of each
    place."""
    by_place = {place: [e.name for e in events] for place, events in events_by_place(spec).items()}
    return state_diagram(machine, by_place, title)


def follows(spec: Spec) -> list[tuple[str, list[str]]]:
    """For each event type, the event types that may come right after it."""
    return [(event.name, list(neighbours(spec, event).followed_by)) for event in spec.event_types]
