#!/usr/bin/env bash
# The IBM i simulator as the compose service `ibmi-sim`: `mqjournal sim` serves the partitions of the fleet file, and
# socat makes each port reachable from the other containers.
#
#   ibmi-sim.sh          serve until stopped (SIGTERM stops the simulator, which saves the partitions' state)
#   ibmi-sim.sh health   the healthcheck: each partition, reached as the workers reach it (the fleet's address and
#                        port), completes an SSH key exchange with the host key known_hosts lists for it
#
# Why socat: `mqjournal sim` listens on 127.0.0.1 only, which no other container reaches. socat listens on this
# container's own address, on the same port, and forwards to the loopback one (the two bind different addresses, so
# they share the port). Once the simulator can listen on another address (a `--listen` option), socat goes.
set -euo pipefail

fleet="${SIM_FLEET:-/opt/mqjournal/docker/fleet.compose.yaml}"

if [[ "${1:-serve}" == health ]]; then
    exec python - "$fleet" <<'PY'
import sys
from pathlib import Path

import paramiko

from mqjournal.fleet import load_fleet

config = load_fleet(Path(sys.argv[1]))
known = paramiko.HostKeys(str(config.known_hosts))
for host in config.hosts:
    name = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
    # A whole key exchange, not a bare connect: a half-open probe leaves a traceback in the simulator's log each time.
    transport = paramiko.Transport((host.address, host.port))
    try:
        transport.start_client(timeout=10)
        if not known.check(name, transport.get_remote_server_key()):
            sys.exit(f"{host.name}: {name} answers with a key {config.known_hosts} does not list for it")
    finally:
        transport.close()
PY
fi

known_hosts="$(python - "$fleet" <<'PY'
import sys
from pathlib import Path

from mqjournal.fleet import load_fleet

print(load_fleet(Path(sys.argv[1])).known_hosts)
PY
)"
ports="$(python - "$fleet" <<'PY'
import sys
from pathlib import Path

from mqjournal.fleet import load_fleet

print(" ".join(str(host.port) for host in load_fleet(Path(sys.argv[1])).hosts))
PY
)"
# The container's address on the compose network (the first, should it be on several), or SIM_LISTEN_ADDRESS.
address="${SIM_LISTEN_ADDRESS:-$(hostname -i | awk '{print $1}')}"

# The simulator writes known_hosts once every port listens: a file left by the last run would say so too early.
rm -f "$known_hosts"
mqjournal sim --fleet "$fleet" &
sim=$!
forwarders=()
stop() {
    kill -TERM "${forwarders[@]}" 2>/dev/null || true
    kill -TERM "$sim" 2>/dev/null || true
    wait "$sim" || true
    exit 0
}
trap stop TERM INT

# The first start simulates the fleet's warm-up hours before it listens.
until [[ -s "$known_hosts" ]]; do
    kill -0 "$sim" 2>/dev/null || { echo "ibmi-sim: the simulator exited before serving" >&2; exit 1; }
    sleep 2
done
for port in $ports; do
    socat "TCP-LISTEN:${port},bind=${address},fork,reuseaddr" "TCP:127.0.0.1:${port}" &
    forwarders+=("$!")
done
echo "ibmi-sim: serving ports ${ports} on ${address}"

# Whichever stops first (the simulator or a forwarder) takes the container down, for compose to restart it whole.
status=0
wait -n "$sim" "${forwarders[@]}" || status=$?
kill -TERM "$sim" "${forwarders[@]}" 2>/dev/null || true
wait || true
exit "$status"
