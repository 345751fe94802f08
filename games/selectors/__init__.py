"""The read side of the games app, one module per subject as ``games.services`` is the write
side: tables (lists, pages, the table output), hands (a viewer's view, events, replay), rules
(presets, the score and the calculator), rooms (the lobby), history (a player's hands) and
players (public profiles). A selector never imports a service.

Views of a hand are built for one viewer and never hold another seat's hand or the stock order
before the hand ends. Every timestamp is rendered in UTC. Import from the subject's module; this
package re-exports nothing.
"""
