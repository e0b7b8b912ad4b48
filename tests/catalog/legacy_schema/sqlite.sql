-- The catalog and lease tables as SQLAlchemy's create_all made them on sqlite before the schema had migrations
-- (mqjournal at commit 36fe24d, catalog._Base and airflow.leases._Base). Frozen: the tests adopt a database made
-- by it. Statements are separated by a blank line.

CREATE TABLE receiver_saves (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	qmgr VARCHAR(48) NOT NULL,
	qmgr_library VARCHAR(10) NOT NULL,
	receiver VARCHAR(10) NOT NULL,
	library VARCHAR(10) NOT NULL,
	attached_at DATETIME NOT NULL,
	detached_at DATETIME,
	first_sequence BIGINT,
	last_sequence BIGINT,
	previous VARCHAR(10),
	next VARCHAR(10),
	size_bytes BIGINT NOT NULL,
	device VARCHAR(10) NOT NULL,
	save_file_library VARCHAR(10) NOT NULL,
	save_file VARCHAR(10) NOT NULL,
	saved_at DATETIME NOT NULL,
	verified_at DATETIME NOT NULL,
	run_id VARCHAR(250) NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (host, library, receiver, attached_at, save_file_library, save_file)
);

CREATE INDEX ix_receiver_saves_host ON receiver_saves (host);

CREATE INDEX ix_receiver_saves_receiver ON receiver_saves (receiver);

CREATE TABLE receiver_deletions (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	qmgr VARCHAR(48) NOT NULL,
	receiver VARCHAR(10) NOT NULL,
	library VARCHAR(10) NOT NULL,
	attached_at DATETIME NOT NULL,
	deleted_at DATETIME NOT NULL,
	delete_option VARCHAR(12) NOT NULL,
	run_id VARCHAR(250) NOT NULL,
	PRIMARY KEY (id)
);

CREATE INDEX ix_receiver_deletions_host ON receiver_deletions (host);

CREATE TABLE library_saves (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	qmgr VARCHAR(48) NOT NULL,
	qmgr_library VARCHAR(10) NOT NULL,
	journal VARCHAR(10) NOT NULL,
	device VARCHAR(10) NOT NULL,
	save_file_library VARCHAR(10) NOT NULL,
	save_file VARCHAR(10) NOT NULL,
	saved_at DATETIME NOT NULL,
	verified_at DATETIME NOT NULL,
	attached_receiver VARCHAR(10) NOT NULL,
	attached_at DATETIME NOT NULL,
	oldest_needed_receiver VARCHAR(10),
	oldest_needed_at DATETIME NOT NULL,
	threshold_kb BIGINT,
	run_id VARCHAR(250) NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (host, qmgr_library, save_file_library, save_file)
);

CREATE INDEX ix_library_saves_host ON library_saves (host);

CREATE TABLE discarded_save_files (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	save_file_library VARCHAR(10) NOT NULL,
	save_file VARCHAR(10) NOT NULL,
	discarded_at DATETIME NOT NULL,
	run_id VARCHAR(250) NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (host, save_file_library, save_file)
);

CREATE INDEX ix_discarded_save_files_host ON discarded_save_files (host);

CREATE TABLE stored_objects (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	qmgr VARCHAR(48) NOT NULL,
	qmgr_library VARCHAR(10) NOT NULL,
	save_file_library VARCHAR(10) NOT NULL,
	save_file VARCHAR(10) NOT NULL,
	run_id VARCHAR(250) NOT NULL,
	store_url VARCHAR(1024) NOT NULL,
	"key" VARCHAR(1024) NOT NULL,
	size_bytes BIGINT NOT NULL,
	sha256 VARCHAR(64) NOT NULL,
	created_at DATETIME NOT NULL,
	verified_at DATETIME NOT NULL,
	objects TEXT NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (store_url, "key")
);

CREATE INDEX ix_stored_objects_host ON stored_objects (host);

CREATE TABLE operations (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	qmgr VARCHAR(48) NOT NULL,
	qmgr_library VARCHAR(10) NOT NULL,
	kind VARCHAR(10) NOT NULL,
	library VARCHAR(10) NOT NULL,
	receivers TEXT NOT NULL,
	attached_at DATETIME,
	save_file_library VARCHAR(10),
	save_file VARCHAR(10),
	delete_option VARCHAR(12),
	run_id VARCHAR(250) NOT NULL,
	worker VARCHAR(300) NOT NULL,
	state VARCHAR(12) NOT NULL,
	started_at DATETIME NOT NULL,
	finished_at DATETIME,
	detail TEXT,
	PRIMARY KEY (id)
);

CREATE INDEX ix_operations_host ON operations (host);

CREATE INDEX ix_operations_state ON operations (state);

CREATE TABLE save_files_removed_from_host (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	save_file_library VARCHAR(10) NOT NULL,
	save_file VARCHAR(10) NOT NULL,
	store_key VARCHAR(1024) NOT NULL,
	removed_at DATETIME NOT NULL,
	run_id VARCHAR(250) NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (host, save_file_library, save_file)
);

CREATE INDEX ix_save_files_removed_from_host_host ON save_files_removed_from_host (host);

CREATE TABLE host_session_leases (
	id INTEGER NOT NULL,
	host VARCHAR(255) NOT NULL,
	slot INTEGER NOT NULL,
	holder VARCHAR(64) NOT NULL,
	expires_at DATETIME NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (host, slot)
);

