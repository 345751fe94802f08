"""Live delivery (Zulip's events system: producing an event apart from delivering it).

* ``announce``: the services announce on commit that a topic moved (a hand's seq, a player's
  feed, a table, the lobby): one Redis ``PUBLISH`` carries all that a round trip sends.
* ``subscription``: one Redis subscription per process and event loop, with the table of
  waiters by topic (PostgreSQL read instead while Redis is away).
* ``render``: the answers, rendered once per (topic, seq, seat) and shared by the waiters of
  that seat; every card a seat may see comes from the selectors' per-seat views.
* the transports, as adapters over the same subscription and renders: ``long_poll`` (the ASGI
  application that holds long polls without a thread), ``streams`` (Server-Sent Events and
  NDJSON).
* ``kinds``: the registry of the player feed's kinds.

What is stored (the hand's log, the players' feeds) belongs to the models and the services;
this package only tells who is waiting that something changed and hands them their view.
"""
