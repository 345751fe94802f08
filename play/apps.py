from django.apps import AppConfig


class PlayConfig(AppConfig):
    """/play/: the reference web client, a static page on the public API (clients/web)."""

    name = "play"
    verbose_name = "Play in a browser"
