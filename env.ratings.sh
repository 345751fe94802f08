export DATABASE_URL=postgres://chan_app@127.0.0.1:5432/chan_ratings
export DATABASE_OWNER_URL=postgres://postgres@127.0.0.1:5432/chan_ratings
export TEST_DATABASE_NAME=test_chan_ratings
export REDIS_URL=redis://127.0.0.1:6379/7 CACHE_URL=redis://127.0.0.1:6379/7 CELERY_BROKER_URL=redis://127.0.0.1:6379/8
export CHAN_CLOCK=0 DEBUG=1
