"""``python -m chan_client`` is ``chan-bot``."""

from chan_client.bot import main

raise SystemExit(main())
