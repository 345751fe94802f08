"""The labels of the replay viewer (games/static/games/replay.js), from the locale catalogue:
English msgids under the ``replay`` context, Vietnamese in locale/vi/LC_MESSAGES/django.po. The
page holds them as JSON (``replay_labels()`` evaluated in the page's language); the script draws
no text of its own."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, pgettext_lazy

from games.rules.faults import MESSAGES as FAULT_MESSAGES

UI = {
    "first": pgettext_lazy("replay", "First"),
    "previous": pgettext_lazy("replay", "Previous"),
    "next": pgettext_lazy("replay", "Next"),
    "last": pgettext_lazy("replay", "Last"),
    "stock": pgettext_lazy("replay", "Stock"),
    "card_played": pgettext_lazy("replay", "Card just played"),
    "turn": pgettext_lazy("replay", "To act"),
    "end": pgettext_lazy("replay", "End of the hand"),
    "verdict": pgettext_lazy("replay", "Verdict"),
    "cuoc": pgettext_lazy("replay", "Cước"),
    "points": pgettext_lazy("replay", "Settlement (points)"),
    "quan": pgettext_lazy("replay", "Settlement (Quan)"),
    "ledger": pgettext_lazy("replay", "Ledger entries"),
    "hand": pgettext_lazy("replay", "Cards in hand"),
    "mat": pgettext_lazy("replay", "Mat"),
    "door": pgettext_lazy("replay", "Door"),
    "dealer": pgettext_lazy("replay", "dealer"),
    "seat": pgettext_lazy("replay", "seat"),
    "seq": pgettext_lazy("replay", "Event"),
    "of": pgettext_lazy("replay", "of"),
    "fault": pgettext_lazy("replay", "Fault"),
    "hidden": pgettext_lazy("replay", "hidden"),
    "visible": pgettext_lazy("replay", "visible"),
    "voided": pgettext_lazy("replay", "Voided"),
    "title": pgettext_lazy("replay", "Hand"),
    "table": pgettext_lazy("replay", "table"),
    "stake": pgettext_lazy("replay", "stake"),
    "room": pgettext_lazy("replay", "room"),
    "none": pgettext_lazy("replay", "—"),
    "system": pgettext_lazy("replay", "the server"),
    "deal": pgettext_lazy("replay", "the deal"),
    "net": pgettext_lazy("replay", "net"),
    "fees": pgettext_lazy("replay", "fees"),
    "legal": pgettext_lazy("replay", "Legal moves of the mover"),
    "chosen": pgettext_lazy("replay", "chosen"),
    "chosen_illegal": pgettext_lazy("replay", "the move made was not among them"),
    "time": pgettext_lazy("replay", "Time"),
    "utc": pgettext_lazy("replay", "UTC"),
    "ended_at": pgettext_lazy("replay", "Ended"),
    "win_card": pgettext_lazy("replay", "Winning card"),
    "cuoc_name": pgettext_lazy("replay", "Cước"),
    "declared": pgettext_lazy("replay", "Declared"),
    "true": pgettext_lazy("replay", "Actual"),
    "diem": pgettext_lazy("replay", "Điểm"),
    "dich": pgettext_lazy("replay", "Dịch"),
    "score": pgettext_lazy("replay", "Points (base + gà = total)"),
    "auto": pgettext_lazy("replay", "declared by the server (auto)"),
    "off": pgettext_lazy("replay", "off at this table"),
    "equally_right": pgettext_lazy(
        "replay", "Equally right (named hands tied in điểm and dịch: declaring it is đúng)"
    ),
    "transaction": pgettext_lazy("replay", "Transaction"),
    "account": pgettext_lazy("replay", "Account"),
    "amount": pgettext_lazy("replay", "Amount (Quan)"),
    "purpose_settlement": pgettext_lazy("replay", "settlement"),
    "purpose_void": pgettext_lazy("replay", "reversal (void)"),
    "replay": pgettext_lazy("replay", "Replay"),
    "help": pgettext_lazy(
        "replay", "Keys: ← previous, → next, Home first, End last. Link to a step with ?seq=N."
    ),
}
MOVES = {
    "deal": pgettext_lazy("replay", "deals"),
    "discard": pgettext_lazy("replay", "discards"),
    "eat": pgettext_lazy("replay", "eats"),
    "chiu": pgettext_lazy("replay", "chíu"),
    "draw": pgettext_lazy("replay", "draws"),
    "pass": pgettext_lazy("replay", "passes"),
    "u": pgettext_lazy("replay", "declares ù"),
    "declare": pgettext_lazy("replay", "declares the cước"),
    "tra_cua": pgettext_lazy("replay", "trả cửa"),
    "set_prefs": pgettext_lazy("replay", "changes preferences"),
    "prefs": pgettext_lazy("replay", "changes preferences"),
    "bao": pgettext_lazy("replay", "báo"),
    "settled": pgettext_lazy("replay", "books the Quan"),
    "voided": pgettext_lazy("replay", "voids the hand"),
}
VERDICTS = {
    "dung": pgettext_lazy("replay", "Đúng: the declaration is the true cước"),
    "thieu": pgettext_lazy("replay", "Thiếu: the declaration leaves out cước the hand has"),
    "sai": pgettext_lazy("replay", "Sai: the declaration names a cước the hand does not have"),
}
RESULTS = {
    "u": pgettext_lazy("replay", "Ù (a win)"),
    "u_lao": pgettext_lazy("replay", "Ù láo"),
    "hoa": pgettext_lazy("replay", "Hòa (the stock ran out)"),
}
CUOC = {
    "xuong": pgettext_lazy("replay", "Xuông"),
    "thong": pgettext_lazy("replay", "Thông"),
    "chi": pgettext_lazy("replay", "Chì"),
    "thien_u": pgettext_lazy("replay", "Thiên ù"),
    "dia_u": pgettext_lazy("replay", "Địa ù"),
    "chiu_u": pgettext_lazy("replay", "Chíu ù"),
    "u_bon": pgettext_lazy("replay", "Ù bòn"),
    "bach_thu": pgettext_lazy("replay", "Bạch thủ"),
    "bach_thu_chi": pgettext_lazy("replay", "Bạch thủ chi"),
    "thap_thanh": pgettext_lazy("replay", "Thập thành"),
    "bach_dinh": pgettext_lazy("replay", "Bạch định"),
    "tam_do": pgettext_lazy("replay", "Tám đỏ"),
    "kinh_tu_chi": pgettext_lazy("replay", "Kính tứ chi"),
    "tom": pgettext_lazy("replay", "Tôm"),
    "leo": pgettext_lazy("replay", "Lèo"),
    "thien_khai": pgettext_lazy("replay", "Thiên khai"),
    "chiu": pgettext_lazy("replay", "Có chíu"),
    "an_bon": pgettext_lazy("replay", "Có ăn bòn"),
    "hoa_roi_cua_phat": pgettext_lazy("replay", "Hoa rơi cửa phật"),
    "ca_loi_san_dinh": pgettext_lazy("replay", "Cá lội sân đình"),
    "ca_nhay_dau_thuyen": pgettext_lazy("replay", "Cá nhảy đầu thuyền"),
    "chua_do_nat_hoa": pgettext_lazy("replay", "Chùa đổ nát hoa"),
    "nha_lau_xe_hoi": pgettext_lazy("replay", "Nhà lầu xe hơi hoa rơi cửa phật"),
    "ngu_ong_bat_ca": pgettext_lazy("replay", "Ngư ông bắt cá"),
    "pha_thien": pgettext_lazy("replay", "Phá thiên"),
}


def replay_labels() -> dict[str, Any]:
    """Every label of the viewer in the active language (wrap in ``translation.override``)."""

    def text(table: dict[str, Any]) -> dict[str, str]:
        return {key: str(value) for key, value in table.items()}

    return {
        **text(UI),
        "moves": text(MOVES),
        "verdicts": text(VERDICTS),
        "results": text(RESULTS),
        "cuoc_names": text(CUOC),
        "faults": {slug: gettext(message) for slug, message in FAULT_MESSAGES.items()},
    }
