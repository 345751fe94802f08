"""The boards' histogram leaves room on its pages for its counts' updates
(docs/decisions/leaderboards-at-scale.md, the settlement's share).

A settlement moves about 150 counts of ``games_boardbucket`` (a decrement at the old score and
an increment at the new one, level 0, for each of its ~72 board rows). The histogram is written
packed (``games_boardbucket_rebuild()``'s one ``INSERT``, fillfactor 100), so an update of a count
found no room on its page: a new tuple elsewhere and a new entry in both indexes (the primary
key's and the unique key's), each a random leaf page, dirtied and — after every checkpoint —
written whole to the WAL. With a fifth of each page left free the update stays on its page (a
HOT update): no index entry, one page dirtied. Measured on the bench's 1,000,000-player
database (128 MB of shared buffers, as the shared server): the histogram's trigger 2.3-3.7 ms a
settlement with up to 31 full-page images on the packed table, 1.7-2.6 ms with 3-5 after a
rewrite at fillfactor 80.

Only pages written from now on get the room: a histogram recounted by
``games_boardbucket_rebuild()`` (the bench's load, a recount by an operator) gets it at once; an
existing one gets it when it is rewritten (``VACUUM FULL games_boardbucket``, or pg_repack online:
docs/operations.md) — until then, as vacuum frees the old versions the updates leave behind.
The migration does not rewrite the table itself: that holds an exclusive lock on it (every
settlement waits) for as long as the copy takes.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("games", "0033_handevent_chain_generic_plan")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE games_boardbucket SET (fillfactor = 80)",
            "ALTER TABLE games_boardbucket RESET (fillfactor)",
        )
    ]
