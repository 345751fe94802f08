"""The foundation every layer may import: domain errors (``core.errors``) and the game's metrics
counters (``core.metrics``). It imports nothing from the project's other packages."""
