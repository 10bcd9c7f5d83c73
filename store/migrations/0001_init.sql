-- 0001: the first capture file layout.
--
-- Times are UTC unix nanoseconds; NULL stands for the zero time.
-- Bodies live in blob, addressed by the lowercase hex SHA-256 of their bytes,
-- so identical bodies are stored once.

-- 'tsin': marks the file as a tsinspect capture.
PRAGMA application_id = 1953720686;

CREATE TABLE blob (
    hash TEXT PRIMARY KEY NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);

CREATE TABLE exchange (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    source            TEXT NOT NULL,
    start_ns          INTEGER,
    first_byte_ns     INTEGER,
    end_ns            INTEGER,
    method            TEXT NOT NULL,
    url               TEXT NOT NULL,
    host              TEXT NOT NULL,
    req_headers       TEXT NOT NULL,             -- JSON [{"name","value"}]
    req_body          TEXT NOT NULL REFERENCES blob (hash),
    status            INTEGER NOT NULL,
    resp_headers      TEXT NOT NULL,             -- JSON [{"name","value"}]
    resp_body         TEXT NOT NULL REFERENCES blob (hash),
    resp_body_decoded TEXT REFERENCES blob (hash), -- NULL: not encoded
    chunks            TEXT NOT NULL,             -- JSON [{"offset","size","at"}]
    error             TEXT NOT NULL,
    state             TEXT NOT NULL
);

-- These let Update find out cheaply whether a replaced body is still used.
CREATE INDEX exchange_req_body ON exchange (req_body);
CREATE INDEX exchange_resp_body ON exchange (resp_body);
CREATE INDEX exchange_resp_body_decoded ON exchange (resp_body_decoded);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
