"""A hand's views rendered once per (hand, seq, seats' version, seat) in each process, shared by
every reader of that seat: the long polls it wakes (``games.live.long_poll``) and the plain and
conditional reads of ``GET /hands/{id}`` (``HandDetailApi``).

A view is a function of the hand's log up to its seq and of its seats (a player who leaves
mid-hand raises the hand's ``seats_version`` and may move its deadline, with no event): the key
holds both, so a kept render is never served for a hand that has changed since. The bytes are
those DRF's ``JSONRenderer`` gives the view (the response's body as the view would render it),
with the ETag beside them. Every card a seat may see still comes from the selectors' per-seat
view (``hand_view_for_seat``); this module only keeps what they rendered.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, NamedTuple

from rest_framework.renderers import JSONRenderer

from games.hand_store import hand_committed_at, hand_state
from games.models import Hand
from games.selectors.hands import hand_etag, hand_get, hand_view_for_seat

VIEWS_KEPT = 512  # a view is 3–8 KB of JSON: about 4 MB a process at most

ViewKey = tuple[int, int, int, int | None]  # hand id, seq, seats' version, seat (None: spectator)


class Rendered(NamedTuple):
    """A view as sent: its ETag, its bytes, the seq it shows and whether the hand was still being
    played at that seq (not ended: a long poll on it waits, games.live.rearm)."""

    etag: str
    body: bytes
    seq: int
    playing: bool = False


def render_json(data: Any) -> bytes:
    """``data`` as DRF's JSONRenderer renders a response's body for ``application/json``."""
    return JSONRenderer().render(data)


class _KeptViews:
    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[ViewKey, Rendered] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: ViewKey) -> Rendered | None:
        with self._lock:
            found = self._data.get(key)
            if found is not None:
                self._data.move_to_end(key)
            return found

    def put(self, key: ViewKey, value: Rendered) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


kept_views = _KeptViews(VIEWS_KEPT)


def hand_view_rendered(
    *, hand_id: int, seat: int | None, seq: int | None = None, seats_version: int | None = None
) -> Rendered:
    """The ETag, rendered view and seq of ``seat`` (None: a spectator's), kept for (hand, seq, seats'
    version, seat). With ``seq`` and ``seats_version`` known (a version read, a wake-up) a kept
    render at that key is served as it is; otherwise the hand is read and its view at its
    current seq rendered and kept. The caller has checked that ``seat`` is the reader's own
    (or that the reader may watch)."""
    if seq is not None and seats_version is not None:
        found = kept_views.get((hand_id, seq, seats_version, seat))
        if found is not None:
            return found
        return hand_views_rendered(
            hand_id=hand_id, seats=[seat], seq=seq, seats_version=seats_version
        )[seat]
    return hand_views_rendered(hand_id=hand_id, seats=[seat])[seat]


def hand_views_rendered(
    *,
    hand_id: int,
    seats: Iterable[int | None],
    seq: int | None = None,
    seats_version: int | None = None,
) -> dict[int | None, Rendered]:
    """The views of ``seats`` (None: a spectator's) at the hand's current seq, from one read of
    the hand and one state, each kept as :func:`hand_view_rendered` keeps it. A wake-up
    renders every seat waiting in this process at once (``games.live.long_poll``): one read
    of the row where each seat's render used to make its own. Views already kept at the
    current seq are not rendered again.

    ``seq``: the seq a wake-up was announced at, or a version read (with ``seats_version``)
    found; if this process committed that move (and no later one of the hand), the hand as it
    committed it is rendered, with no read at all (``hand_store.hand_committed_at``): a view
    of that seq, as the announcement or the version promised. Not for a spectator's view."""
    seats = list(seats)
    # (a spectator's view asks the table whether it may be watched: read as it is now)
    players_only = None not in seats
    hand = (
        hand_committed_at(hand_id, seq, seats_version) if seq is not None and players_only else None
    )
    if hand is None:
        hand = hand_get(hand_id=hand_id)
    state = None
    found: dict[int | None, Rendered] = {}
    for seat in seats:
        key = (hand.pk, hand.seq, hand.seats_version, seat)
        rendered = kept_views.get(key)
        if rendered is None:
            if state is None:
                state = hand_state(hand)
            view = render_json(hand_view_for_seat(hand=hand, seat=seat, state=state))
            playing = hand.status == Hand.Status.PLAYING
            rendered = Rendered(hand_etag(hand.pk, hand.seq), view, hand.seq, playing)
            kept_views.put(key, rendered)
        found[seat] = rendered
    return found
