"""Everything that talks to an IBM i partition: SSH transport, command text, output parsing, collection."""
