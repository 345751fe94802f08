# PgBouncer from Debian's package, with deploy/pgbouncer.ini (docs/operations.md "PgBouncer").
FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends pgbouncer \
    && rm -rf /var/lib/apt/lists/* && mkdir -p /var/run/postgresql /var/log/postgresql \
    && chown postgres /var/run/postgresql /var/log/postgresql
COPY deploy/pgbouncer.ini /etc/pgbouncer/pgbouncer.ini
USER postgres
EXPOSE 6432
CMD ["pgbouncer", "/etc/pgbouncer/pgbouncer.ini"]
