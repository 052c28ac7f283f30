#!/bin/sh
# Patroni runs this once, on the node that creates the cluster, with a URL of the new cluster
# as its argument (patroni.yml, bootstrap.post_bootstrap): the gateway's database, owned by
# the superuser pixgate, as compose.yaml's single PostgreSQL has it.
set -eu
psql --no-psqlrc --set ON_ERROR_STOP=1 --dbname "$1" --command "CREATE DATABASE pixgate"
