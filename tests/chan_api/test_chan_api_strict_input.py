"""chan_api.strict_input.plain_int_query: a plain query of integers read without its
serializer answers exactly what the serializer answers, and gives every other query to it."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import QueryDict
from hypothesis import given, settings
from hypothesis import strategies as st

from chan_api.strict_input import plain_int_query
from games.api.live_serializers import WaitQuerySerializer
from games.api.serializers import EventsQuerySerializer, HandQuerySerializer, HandViewSerializer

SERIALIZERS = [HandQuerySerializer, EventsQuerySerializer, WaitQuerySerializer]

values = st.one_of(
    st.integers(-5, 2**31 + 5).map(str),
    st.sampled_from(["", "05", "+3", " 3", "3.0", "١", "1_0", "0x1", "9" * 19, "30", "31", "100"]),
)
names = st.sampled_from(["wait", "after_seq", "limit", "other", "Wait"])
queries = st.lists(st.tuples(names, values), max_size=4)


def serializer_answer(cls: type, query: QueryDict) -> dict | None:
    s = cls(data=query)
    return dict(s.validated_data) if s.is_valid() else None


@settings(max_examples=400, deadline=None)
@given(cls=st.sampled_from(SERIALIZERS), pairs=queries)
def test_a_plain_query_is_read_as_its_serializer_reads_it(cls, pairs) -> None:
    query = QueryDict(urlencode(pairs))
    plain = plain_int_query(cls, query)
    if plain is not None:  # answered here: exactly the serializer's answer
        assert plain == serializer_answer(cls, query)


def test_the_common_queries_are_answered_without_the_serializer() -> None:
    assert plain_int_query(HandQuerySerializer, QueryDict("wait=25&after_seq=7")) == {
        "wait": 25,
        "after_seq": 7,
    }
    assert plain_int_query(HandQuerySerializer, QueryDict("")) == {"wait": 0}
    assert plain_int_query(EventsQuerySerializer, QueryDict("after_seq=3")) == {
        "after_seq": 3,
        "limit": 100,
        "wait": 0,
    }


def test_every_refusal_is_left_to_the_serializer() -> None:
    for q in ("wait=31", "wait=-1", "wait=x", "after_seq=١", "wait=1&wait=2", "wait=", "x=1"):
        assert plain_int_query(HandQuerySerializer, QueryDict(q)) is None, q


def test_a_serializer_with_other_fields_is_never_read_here() -> None:
    assert plain_int_query(HandViewSerializer, QueryDict("")) is None
