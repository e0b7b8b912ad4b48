"""mqjournal: backup and recovery planning for the journals of IBM MQ queue managers on IBM i."""

__version__ = "0.1.0"
