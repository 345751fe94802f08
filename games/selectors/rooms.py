"""Reading the rooms: the lobby's catalogue of rooms with their requirements, fees and what is
open in them."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from games.models import Room, Seat, Table

# English names of the default rooms (the stored name is the Vietnamese one).
ROOM_NAMES_EN = {
    "nen-dat": "Earthen floor",
    "chieu-coi": "Sedge mat",
    "sap-gu-2": "Wooden platform 2",
    "sap-gu-vip": "Wooden platform VIP",
}


def room_catalogue() -> list[dict[str, Any]]:
    """Every room in lobby order: its names, requirements, fee schedule, and how many tables
    are open in it (not closed; private ones not counted: the lobby does not show them) and
    players seated at them. Three queries."""
    rooms = list(Room.objects.order_by("position", "slug"))
    live = Table.objects.exclude(status=Table.Status.CLOSED).filter(private__isnull=True)
    tables = dict(live.values("room_id").annotate(n=Count("id")).values_list("room_id", "n"))
    seated = dict(
        Seat.objects.filter(table__in=live)
        .values("table__room_id")
        .annotate(n=Count("id"))
        .values_list("table__room_id", "n")
    )
    return [
        {
            "slug": r.slug,
            "name": {"vi": r.name, "en": ROOM_NAMES_EN.get(r.slug, r.name)},
            "requirements": {
                "balance": r.min_balance,
                "level": r.min_level,
                "vip_points": r.min_vip_points,
                "badge": r.needs_badge,
            },
            "vip": r.vip,
            "fees": r.fees,
            "xuong_sai_settled": r.xuong_sai_settled,
            "open_tables": tables.get(r.slug, 0),
            "players_seated": seated.get(r.slug, 0),
        }
        for r in rooms
    ]
