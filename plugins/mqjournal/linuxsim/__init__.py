"""The Linux IBM MQ simulator (issue #32): a host with linear-logging queue managers, its extents, and the commands
mqjournal sends to it (docs/linux-interfaces.md, "What the simulator must answer")."""
