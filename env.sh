export DATABASE_URL=postgres://chan_app@127.0.0.1:5432/chan_holds
export DATABASE_OWNER_URL=postgres://postgres@127.0.0.1:5432/chan_holds
export TEST_DATABASE_NAME=test_chan_holds
export REDIS_URL=redis://127.0.0.1:6379/3 CACHE_URL=redis://127.0.0.1:6379/3 CELERY_BROKER_URL=redis://127.0.0.1:6379/4
export CHAN_CLOCK=0 DEBUG=1
