"""The rooms of RULES.md §11 as data: seeded by migration games 0007 (which keeps its own frozen
copy) and restored by :func:`rooms_seed` wherever the tables were emptied (the test suite)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from games.models import Room

XUONG_SAI_FEES = {"2": 30, "3": 10, "4": 5}  # percent by number of players, non-VIP rooms

DEFAULT_ROOMS: list[dict[str, Any]] = [
    {
        "slug": "nen-dat",
        "name": "Nền đất",
        "fees": {"declared": 5, "auto": 10},
        "xuong_sai_settled": False,
    },
    {
        "slug": "chieu-coi",
        "name": "Chiếu cói",
        "min_balance": 150_000,
        "fees": {"declared": 5, "auto": 5, "xuong_sai": XUONG_SAI_FEES},
    },
    {
        "slug": "sap-gu-2",
        "name": "Sập gụ 2",
        "min_balance": 20_000_000,
        "min_level": 30,
        "min_vip_points": 50,
        "fees": {"declared": 5, "auto": 5, "xuong_sai": XUONG_SAI_FEES},
    },
    {
        "slug": "sap-gu-vip",
        "name": "Sập gụ VIP",
        "min_balance": 40_000_000,
        "min_level": 50,
        "min_vip_points": 400,
        "needs_badge": True,
        "vip": True,
        "fees": {"by_players": {"2": 4, "3": 3, "4": 2}},
    },
]


@transaction.atomic
def rooms_seed() -> None:
    """Create the default rooms that are missing (existing ones are left as an admin set them)."""
    for position, spec in enumerate(DEFAULT_ROOMS):
        fields = {k: v for k, v in spec.items() if k != "slug"}
        Room.objects.get_or_create(slug=spec["slug"], defaults={"position": position, **fields})
