#!/usr/bin/env bash
# Writes docker/.env from docker/.env.example, with a random value for every secret left empty there. It never
# overwrites an existing .env: secrets already in use (the Fernet key above all) must not change under a deployment.
set -euo pipefail
cd "$(dirname "$0")"
if [[ -e .env ]]; then
    echo "docker/.env exists: left as it is" >&2
    exit 1
fi
umask 077
while IFS= read -r line || [[ -n "$line" ]]; do
    if [[ "$line" =~ ^([A-Z0-9_]+)=$ ]]; then
        name="${BASH_REMATCH[1]}"
        case "$name" in
            # Fernet wants 32 bytes in URL-safe base64.
            AIRFLOW_FERNET_KEY) value="$(openssl rand -base64 32 | tr '+/' '-_')" ;;
            # Hex: safe inside the database and broker URLs.
            *) value="$(openssl rand -hex 24)" ;;
        esac
        printf '%s=%s\n' "$name" "$value"
    else
        printf '%s\n' "$line"
    fi
done <.env.example >.env.tmp
mv .env.tmp .env
echo "wrote docker/.env (the admin's password is AIRFLOW_ADMIN_PASSWORD in it)"
