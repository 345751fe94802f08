"""Integrity signals for auditors (docs/audit.md "Integrity signals").

``facts`` reads one hand's record into the few facts the signals need, ``signals`` computes the
statistics and the flags from many hands (both pure: no database, so the bench feeds them from
self-play exactly as the nightly job feeds them from the log). The job that reads a window from
the database and writes ``IntegrityFlag`` rows is ``games.services.integrity.integrity_scan``
(reads in ``games.selectors.integrity``, the task in ``games.tasks``).
"""
