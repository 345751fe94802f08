# Two commands do everything on a fresh machine:
#   make run   - virtualenv, install, migrate, demo players, serve (embedded PostgreSQL + filesystem broker)
#   make test  - virtualenv, install, lint, run the suite (embedded PostgreSQL unless DATABASE_URL is set)
#   make serve - the production stack in the foreground (gunicorn, Celery worker, one beat: Procfile)
# With DATABASE_URL unset, the first command that needs the database starts an embedded PostgreSQL 16
# (the pgserver package) in var/pg; later ones share it. It runs until `make db-stop` (or `make clean`).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Two installs: the server's dependencies with the Python client and chan-bot, which the README
# uses beside `make run` (one pip run: make run, serve, worker), then the tools (pytest, ruff,
# mypy, …: make test, lint); `make install` does both.
STAMP := $(VENV)/.install-stamp
DEV_STAMP := $(VENV)/.install-dev-stamp
PIP := $(BIN)/python -m pip --disable-pip-version-check
HOST ?= 127.0.0.1
PORT ?= 8000
VAR := $(or $(CHAN_VAR_DIR),var)
# `make test` runs the suite in this many pytest-xdist workers, each on a test database of its own
# (test_chan_gw0, ...); many tests wait on servers and subprocesses, so more workers than CPUs
# pay. TEST_WORKERS=0 runs it in one process. Tests are dealt two at a time as workers free up.
TEST_WORKERS ?= 4

.PHONY: run serve test install lint format typecheck migrate worker db-stop bench bench-api simulate clean messages py-client ts-client web-client

# The settings default to production-safe values (DEBUG off, SECRET_KEY required, no fixed decks).
# The development targets turn DEBUG on unless the environment says otherwise: a dev-only key,
# fixed decks allowed, Django's debug pages. `make test` leaves DEBUG alone (pytest runs with it off).
run migrate worker: export DEBUG ?= 1

# pip is upgraded only if it is older than 21.3, which cannot install this project editable.
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -c "import pip, sys; sys.exit(tuple(map(int, pip.__version__.split('.')[:2])) < (21, 3))" \
		|| $(PIP) install -q --upgrade pip

$(STAMP): pyproject.toml clients/python/pyproject.toml | $(BIN)/python
	$(PIP) install -q -e . -e clients/python
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(PIP) install -q -e '.[dev]'
	touch $(DEV_STAMP)

install: $(DEV_STAMP)

migrate: $(STAMP)
	$(BIN)/python manage.py migrate --noinput

# One Django process migrates, starts the web server and the worker, then makes the demo players
# while they start (manage.py run_dev --migrate --demo-players).
run: $(STAMP)
	$(BIN)/python manage.py run_dev --migrate --demo-players --host $(HOST) --port $(PORT)

# The production stack on the current environment, in the foreground: gunicorn on HOST:PORT,
# a Celery worker and exactly one beat (Procfile, run by chan_api/supervisor.py: a process that
# dies is started again; Ctrl-C or SIGTERM stops all three). DEBUG stays off unless the
# environment says otherwise, so SECRET_KEY is needed. Metrics of every process are summed
# through PROMETHEUS_MULTIPROC_DIR, emptied at each start. A stop by SIGTERM or SIGINT is clean:
# status 0 once every process has stopped. (SIGTERM sent to make itself: make stops the recipe,
# then ends by that signal, as GNU make always does.)
serve: export PROMETHEUS_MULTIPROC_DIR ?= $(abspath $(VAR))/prometheus
serve: $(STAMP)
	env -u PROMETHEUS_MULTIPROC_DIR $(BIN)/python manage.py migrate --noinput
	env -u PROMETHEUS_MULTIPROC_DIR $(BIN)/python manage.py collectstatic --noinput -v 0
	rm -rf "$$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$$PROMETHEUS_MULTIPROC_DIR"
	BIND=$(HOST):$(PORT) PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m chan_api.supervisor Procfile & pid=$$!; \
	trap 'kill -TERM $$pid 2>/dev/null; wait $$pid; exit 0' TERM INT; wait $$pid

worker: $(STAMP)
	$(BIN)/celery -A chan_api worker -l info

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The Vietnamese catalog: extract every marked message into locale/vi (translate the new empty
# msgstr by hand), then compile the .mo that is committed beside it.
messages: install
	DEBUG=1 $(BIN)/python manage.py makemessages -l vi --no-location \
		--ignore=.venv --ignore=tests --ignore=bench --ignore=var
	DEBUG=1 $(BIN)/python manage.py compilemessages --ignore=.venv

typecheck: install
	DEBUG=1 $(BIN)/mypy games/rules

test: lint typecheck
	@$(BIN)/python -c "import os,dj_database_url as d; u=os.environ.get('DATABASE_URL'); o=os.environ.get('DATABASE_OWNER_URL'); print('make test: database =', ('PostgreSQL at ' + (d.parse(u).get('HOST') or 'localhost') + ' as ' + d.parse(u)['USER'] + (', owner ' + d.parse(o)['USER'] if o else ' (the owner too: set DATABASE_OWNER_URL for two roles)')) if u else 'embedded PostgreSQL 16 in ' + os.environ.get('CHAN_VAR_DIR', 'var') + '/pg, as chan_app, owner postgres, and an embedded Redis in ' + os.environ.get('CHAN_VAR_DIR', 'var') + '/redis (set DATABASE_URL for another server)')"
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxschedchunk 2 $(PYTEST_ARGS)

# The TypeScript client's types from the schema as served (clients/typescript: openapi.json, then
# src/schema.d.ts by openapi-typescript), and a type check. One command after any API change;
# tests/clients/test_clients_typescript.py fails while the committed files are stale.
ts-client: $(STAMP)
	DEBUG=1 $(BIN)/python manage.py spectacular --format openapi-json --file clients/typescript/openapi.json
	cd clients/typescript && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run -s generate && npx tsc --noEmit

# The web client at /play/ (clients/web): its bundle play/static/play/play.js is committed;
# rebuild it after a change of clients/web/src or clients/typescript/src
# (tests/play/test_play_bundle.py fails while it is stale).
web-client:
	cd clients/web && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npx tsc --noEmit -p . && node build.mjs

db-stop:   # stop the embedded PostgreSQL and Redis (the next command that needs them starts them again)
	@if [ -x $(BIN)/python ]; then $(BIN)/python -m chan_api.embedded_db stop; $(BIN)/python -m chan_api.embedded_redis stop; fi

bench: install
	$(BIN)/python bench/rules_bench.py

bench-api: install   # needs PostgreSQL (BENCH_DATABASE_URL) and, if present, Redis
	$(BIN)/python bench/api_bench.py

simulate: $(STAMP)
	$(BIN)/python -m games.rules.simulate --hands 1000 --seats 4 --seed 1 --bot heuristic

clean: db-stop
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache .hypothesis

# The synchronous Python client is written from the asynchronous one (clients/python/unasync.py);
# run this after editing clients/python/chan_client/_async_client.py.
py-client: $(DEV_STAMP)
	$(BIN)/python clients/python/unasync.py
