"""Restore drills (issue #28): stored copies uploaded into scratch save files on a partition, their object lists read
back and compared with the catalog, the scratch files deleted. `sampling` chooses the copies (pure), `verdict`
judges what the partition listed (pure), `scratch` names the scratch save files (pure), `partition` runs one drill
over an IbmiSession, `run` drills a sample and records the outcomes in the catalog."""
