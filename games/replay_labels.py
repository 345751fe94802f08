"""The labels of the replay viewer (games/static/games/replay.js), from the locale catalogue:
English msgids under the ``replay`` context, Vietnamese in locale/vi/LC_MESSAGES/django.po. The
page holds them as JSON (``replay_labels()`` evaluated in the page's language); the script draws
no text of its own."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext, pgettext_lazy

from games.rules.faults import MESSAGES as FAULT_MESSAGES


def _(text: str) -> Any:
    return pgettext_lazy("replay", text)


UI = {
    "first": _("First"),
    "previous": _("Previous"),
    "next": _("Next"),
    "last": _("Last"),
    "stock": _("Stock"),
    "card_played": _("Card just played"),
    "turn": _("To act"),
    "end": _("End of the hand"),
    "verdict": _("Verdict"),
    "cuoc": _("Cước"),
    "points": _("Settlement (points)"),
    "quan": _("Settlement (Quan)"),
    "ledger": _("Ledger entries"),
    "hand": _("Cards in hand"),
    "mat": _("Mat"),
    "door": _("Door"),
    "dealer": _("dealer"),
    "seat": _("seat"),
    "seq": _("Event"),
    "of": _("of"),
    "fault": _("Fault"),
    "hidden": _("hidden"),
    "visible": _("visible"),
    "voided": _("Voided"),
    "title": _("Hand"),
    "table": _("table"),
    "stake": _("stake"),
    "room": _("room"),
    "none": _("—"),
    "system": _("the server"),
    "deal": _("the deal"),
    "net": _("net"),
    "fees": _("fees"),
    "legal": _("Legal moves of the mover"),
    "chosen": _("chosen"),
    "chosen_illegal": _("the move made was not among them"),
    "time": _("Time"),
    "utc": _("UTC"),
    "ended_at": _("Ended"),
    "win_card": _("Winning card"),
    "cuoc_name": _("Cước"),
    "declared": _("Declared"),
    "true": _("True"),
    "diem": _("Điểm"),
    "dich": _("Dịch"),
    "score": _("Points (base + gà = total)"),
    "auto": _("declared by the server (auto)"),
    "off": _("off at this table"),
    "transaction": _("Transaction"),
    "account": _("Account"),
    "amount": _("Amount (Quan)"),
    "purpose_settlement": _("settlement"),
    "purpose_void": _("reversal (void)"),
    "replay": _("Replay"),
    "help": _("Keys: ← previous, → next, Home first, End last. Link to a step with ?seq=N."),
}
MOVES = {
    "deal": _("deals"),
    "discard": _("discards"),
    "eat": _("eats"),
    "chiu": _("chíu"),
    "draw": _("draws"),
    "pass": _("passes"),
    "u": _("declares ù"),
    "declare": _("declares the cước"),
    "tra_cua": _("trả cửa"),
    "set_prefs": _("changes preferences"),
    "prefs": _("changes preferences"),
    "bao": _("báo"),
    "settled": _("books the Quan"),
    "voided": _("voids the hand"),
}
VERDICTS = {
    "dung": _("Đúng: the declaration is the true cước"),
    "thieu": _("Thiếu: the declaration leaves out cước the hand has"),
    "sai": _("Sai: the declaration names a cước the hand does not have"),
}
RESULTS = {"u": _("Ù (a win)"), "u_lao": _("Ù láo"), "hoa": _("Hòa (the stock ran out)")}
CUOC = {
    "xuong": _("Xuông"),
    "thong": _("Thông"),
    "chi": _("Chì"),
    "thien_u": _("Thiên ù"),
    "dia_u": _("Địa ù"),
    "chiu_u": _("Chíu ù"),
    "u_bon": _("Ù bòn"),
    "bach_thu": _("Bạch thủ"),
    "bach_thu_chi": _("Bạch thủ chi"),
    "thap_thanh": _("Thập thành"),
    "bach_dinh": _("Bạch định"),
    "tam_do": _("Tám đỏ"),
    "kinh_tu_chi": _("Kính tứ chi"),
    "tom": _("Tôm"),
    "leo": _("Lèo"),
    "thien_khai": _("Thiên khai"),
    "chiu": _("Có chíu"),
    "an_bon": _("Có ăn bòn"),
    "hoa_roi_cua_phat": _("Hoa rơi cửa phật"),
    "ca_loi_san_dinh": _("Cá lội sân đình"),
    "ca_nhay_dau_thuyen": _("Cá nhảy đầu thuyền"),
    "chua_do_nat_hoa": _("Chùa đổ nát hoa"),
    "nha_lau_xe_hoi": _("Nhà lầu xe hơi hoa rơi cửa phật"),
    "ngu_ong_bat_ca": _("Ngư ông bắt cá"),
    "pha_thien": _("Phá thiên"),
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
