#!/usr/bin/env bash
# The IBM i simulator as the compose service `ibmi-sim`: `mqjournal sim --listen 0.0.0.0` serves the partitions of
# the fleet file on this container's addresses, where the other containers reach them.
#
#   ibmi-sim.sh          serve until stopped (SIGTERM stops the simulator, which saves the partitions' state)
#   ibmi-sim.sh health   the healthcheck: each partition, reached as the workers reach it (the fleet's address and
#                        port), completes an SSH key exchange with the host key known_hosts lists for it
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
# The simulator writes known_hosts once every port listens: a file left by the last run would say so too early.
rm -f "$known_hosts"
# exec: the simulator is the container's main process, and SIGTERM (docker stop) saves the partitions' state.
exec mqjournal sim --fleet "$fleet" --listen "${SIM_LISTEN_ADDRESS:-0.0.0.0}"
