#!/usr/bin/env bash
# Run by the postgres image on the database volume's first start only: the backup catalog's database, owned by its
# own user, beside Airflow's metadata database. mqjournal creates the catalog's tables on first use.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
    -v catalog_user="$CATALOG_DB_USER" -v catalog_db="$CATALOG_DB_NAME" -v catalog_password="$CATALOG_DB_PASSWORD" <<'SQL'
CREATE ROLE :"catalog_user" LOGIN PASSWORD :'catalog_password';
CREATE DATABASE :"catalog_db" OWNER :"catalog_user";
SQL
