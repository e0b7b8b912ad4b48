"""A stateful stand-in for IBM i partitions running IBM MQ, served over real SSH."""
