#!/bin/sh
# The Debian packages the tests use outside the virtualenv, checked before anything else runs, installed when missing.
#
#   scripts/system-packages.sh NEED...      NEED: java, ssh, chromium, postgresql, redis
#
# The Makefile says which of its targets needs what; this script is the one place that knows how each need is found
# on the machine and which Debian package brings it. As root it installs what is missing with apt-get; as any other
# user it stops at once with the one command to run, so a first `make test` fails in seconds, not 15 minutes in.
set -eu

# How each need is found: a command on PATH or a file (PostgreSQL's server programs are not on PATH on Debian).
present() {
    case "$1" in
        java) command -v java >/dev/null 2>&1 ;;
        ssh) command -v ssh >/dev/null 2>&1 ;;
        chromium) [ -x "${MQJ_CHROMIUM:-/usr/bin/chromium}" ] ;;
        postgresql) command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 ;;
        redis) command -v redis-server >/dev/null 2>&1 ;;
        *) echo "system-packages.sh: unknown need '$1' (known: java ssh chromium postgresql redis)" >&2; exit 2 ;;
    esac
}

# Which Debian package brings it, and what it is for (printed when it is installed).
package() {
    case "$1" in
        java) echo openjdk-17-jre-headless ;;
        ssh) echo openssh-client ;;
        chromium) echo chromium ;;
        postgresql) echo postgresql ;;
        redis) echo redis-server ;;
    esac
}

why() {
    case "$1" in
        java) echo "Spark's JVM for the plan job" ;;
        ssh) echo "OpenSSH's client, which copies save files off the partitions (ibmi/sftpcopy.py)" ;;
        chromium) echo "the fleet view's and the approval gate's browser test (headless, driven by Playwright)" ;;
        postgresql) echo "the catalog's tests and the cluster test start a PostgreSQL server on loopback" ;;
        redis) echo "the cluster test's Celery broker" ;;
    esac
}

missing=""
for need in "$@"; do
    present "$need" || missing="$missing $(package "$need")"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "These Debian packages are needed and not installed:$missing" >&2
    for need in "$@"; do
        present "$need" || echo "  $(package "$need"): $(why "$need")" >&2
    done
    echo "Install them, then run make again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y$missing" >&2
    exit 1
fi

for need in "$@"; do
    present "$need" || echo "Installing Debian's $(package "$need"): $(why "$need")"
done
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # one word per package
apt-get install -y -qq $missing >/dev/null
for need in "$@"; do
    present "$need" || { echo "apt-get installed$missing, but $need is still not found" >&2; exit 1; }
done
