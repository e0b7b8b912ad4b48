"""IBM MQ's linear logs on Linux (issue #32): the rules and the answers' formats, before the transport and the DAGs.

docs/linux-interfaces.md holds the sources of every fact used here."""
