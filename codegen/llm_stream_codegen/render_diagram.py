"""A lifecycle state machine drawn as inline SVG, from the same tables the decoder runs on.

As h11 draws its state diagrams from its own transition tables, the site's lifecycle diagrams are
drawn here from `StateMachine.transitions`, so the picture cannot drift from the code, and the
site needs no diagram library and no network to show them. The layout is fixed and simple: the
states in one row (initial first, final ones last), a transition to the next state as a straight
arrow, a longer step forward as an arc above the row, a step back as an arc below it, and a
transition that stays in its state as a loop below its box. Arrows are labelled with the places of
the events that cause them; the event types of each place are in the element's tooltip. Text
widths are estimated from a monospace font, so the output is deterministic and needs no fonts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from .model import StateMachine

FONT_SIZE = 13
CHAR_WIDTH = FONT_SIZE * 0.6
BOX_HEIGHT = 36
BOX_PADDING = 14
MIN_GAP = 56
MARKER_GAP = 34
MARKER_RADIUS = 7
ARC_STEP = 30
LOOP_DEPTH = 26
MARGIN = 10


def _text_width(text: str) -> float:
    return len(text) * CHAR_WIDTH


@dataclass(frozen=True)
class _Edge:
    source: int
    target: int
    places: tuple[str, ...]

    @property
    def label(self) -> str:
        return ", ".join(self.places)


def _order(machine: StateMachine) -> list[str]:
    """The initial state first, the final ones (no way out) last, the rest as the table lists
    them."""
    states = list(machine.transitions)
    finals = [s for s in states if not machine.transitions[s] or s == machine.final]
    middle = [s for s in states if s != machine.initial and s not in finals]
    return [machine.initial, *middle, *(s for s in finals if s != machine.initial)]


def _edges(machine: StateMachine, order: Sequence[str]) -> list[_Edge]:
    index = {state: i for i, state in enumerate(order)}
    grouped: dict[tuple[int, int], list[str]] = {}
    for state in order:
        for place, target in machine.transitions[state].items():
            grouped.setdefault((index[state], index[target]), []).append(place)
    return [_Edge(s, t, tuple(places)) for (s, t), places in grouped.items()]


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _label(x: float, y: float, text: str, tooltip: str) -> str:
    return (f'<text x="{_num(x)}" y="{_num(y)}" text-anchor="middle" class="label">'
            f"<title>{escape(tooltip)}</title>{escape(text)}</text>")


def state_diagram(machine: StateMachine, events_by_place: Mapping[str, Sequence[str]],
                  title: str) -> str:
    """The machine as one `<svg>` element, styled by the site's stylesheet (class
    `ls-diagram`) and by `currentColor`, so it follows the light and dark schemes."""
    order = _order(machine)
    edges = _edges(machine, order)

    def tooltip(edge: _Edge) -> str:
        return "; ".join(
            f"{place}: {', '.join(events_by_place.get(place, ())) or 'no event type'}"
            for place in edge.places)

    widths = [_text_width(state) + 2 * BOX_PADDING for state in order]
    gaps: list[float] = [float(MIN_GAP)] * max(len(order) - 1, 0)
    for edge in edges:
        if edge.target == edge.source + 1:
            gaps[edge.source] = max(gaps[edge.source], _text_width(edge.label) + 24)
    lefts: list[float] = []
    x: float = MARGIN + 2 * MARKER_RADIUS + MARKER_GAP
    for i, width in enumerate(widths):
        lefts.append(x)
        x += width + (gaps[i] if i < len(gaps) else 0)
    right_end = x + MARKER_GAP + 2 * MARKER_RADIUS + MARGIN

    skips = sorted((e for e in edges if e.target > e.source + 1),
                   key=lambda e: (e.target - e.source, e.source))
    backs = sorted((e for e in edges if e.target < e.source),
                   key=lambda e: (e.source - e.target, e.target))
    loops = [e for e in edges if e.target == e.source]
    above = len(skips) * ARC_STEP + (FONT_SIZE + 6 if skips else 0)
    top = MARGIN + above
    bottom_of_row = top + BOX_HEIGHT
    below_loops = (LOOP_DEPTH + FONT_SIZE + 8) if loops else 0
    below = below_loops + len(backs) * ARC_STEP + (FONT_SIZE + 6 if backs else 0)
    height = bottom_of_row + below + MARGIN
    mid = top + BOX_HEIGHT / 2

    def centre(i: int) -> float:
        return lefts[i] + widths[i] / 2

    parts: list[str] = []
    for i, state in enumerate(order):
        final = state == machine.final or not machine.transitions[state]
        css = "state final" if final else "state"
        parts.append(
            f'<rect x="{_num(lefts[i])}" y="{_num(top)}" width="{_num(widths[i])}" '
            f'height="{BOX_HEIGHT}" rx="8" class="{css}"/>'
            f'<text x="{_num(centre(i))}" y="{_num(mid + FONT_SIZE * 0.35)}" '
            f'text-anchor="middle" class="name">{escape(state)}</text>')
    start_x = MARGIN + MARKER_RADIUS
    parts.append(f'<circle cx="{_num(start_x)}" cy="{_num(mid)}" r="{MARKER_RADIUS}" '
                 'class="start"><title>start</title></circle>')
    parts.append(f'<path d="M{_num(start_x + MARKER_RADIUS)} {_num(mid)} '
                 f'H{_num(lefts[0] - 2)}" class="arrow"/>')
    end_x = right_end - MARGIN - MARKER_RADIUS
    last = len(order) - 1
    parts.append(f'<path d="M{_num(lefts[last] + widths[last])} {_num(mid)} '
                 f'H{_num(end_x - MARKER_RADIUS - 2)}" class="arrow"/>')
    parts.append(f'<circle cx="{_num(end_x)}" cy="{_num(mid)}" r="{MARKER_RADIUS}" '
                 'class="end"><title>end</title></circle>'
                 f'<circle cx="{_num(end_x)}" cy="{_num(mid)}" r="{MARKER_RADIUS - 3}" '
                 'class="start"/>')

    for edge in edges:
        s, t = edge.source, edge.target
        if t == s + 1:
            x1, x2 = lefts[s] + widths[s], lefts[t] - 2
            parts.append(f'<path d="M{_num(x1)} {_num(mid)} H{_num(x2)}" class="arrow"/>')
            parts.append(_label((x1 + x2) / 2, mid - 7, edge.label, tooltip(edge)))
    for level, edge in enumerate(skips, start=1):
        s, t = edge.source, edge.target
        x1, x2 = centre(s) + 8, centre(t) - 8
        y = top - level * ARC_STEP
        parts.append(f'<path d="M{_num(x1)} {_num(top)} V{_num(y)} H{_num(x2)} '
                     f'V{_num(top - 2)}" class="arrow"/>')
        parts.append(_label((x1 + x2) / 2, y - 5, edge.label, tooltip(edge)))
    for edge in loops:
        c = centre(edge.source)
        y = bottom_of_row + LOOP_DEPTH
        parts.append(f'<path d="M{_num(c - 14)} {_num(bottom_of_row)} V{_num(y)} '
                     f'H{_num(c + 14)} V{_num(bottom_of_row + 2)}" class="arrow"/>')
        parts.append(_label(c, y + FONT_SIZE + 3, edge.label, tooltip(edge)))
    for level, edge in enumerate(backs, start=1):
        s, t = edge.source, edge.target
        x1, x2 = centre(s) - 22, centre(t) + 22
        y = bottom_of_row + below_loops + level * ARC_STEP
        parts.append(f'<path d="M{_num(x1)} {_num(bottom_of_row)} V{_num(y)} H{_num(x2)} '
                     f'V{_num(bottom_of_row + 2)}" class="arrow"/>')
        parts.append(_label((x1 + x2) / 2, y + FONT_SIZE + 3, edge.label, tooltip(edge)))

    width_text = _num(right_end)
    marker = ('<defs><marker id="{id}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
              'markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z" '
              'class="head"/></marker></defs>')
    # Each diagram names its own arrow head, so that two on one page do not share an id.
    marker_id = "arrow-" + "-".join(order)
    body = "".join(parts).replace('class="arrow"', f'class="arrow" marker-end="url(#{marker_id})"')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="ls-diagram" role="img" '
            f'viewBox="0 0 {width_text} {_num(height)}" width="{width_text}" '
            f'aria-label={quoteattr(title)}><title>{escape(title)}</title>'
            f"{marker.format(id=marker_id)}{body}</svg>")


__all__ = ["state_diagram"]
