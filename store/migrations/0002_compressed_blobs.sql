-- 0002: compressed bodies.
--
-- A blob's data is now stored according to its codec:
--   0: the body as is (every blob written before this migration);
--   1: zstd, on its own;
--   2: zstd with the blob named by base, decompressed, as a raw dictionary:
--      usually the previous request of the same conversation, which the
--      body repeats nearly whole;
--   3: a splice of the base: its first P and last S bytes around a zstd
--      frame of the bytes in between, compressed with the base's own bytes
--      between those (when there are any) as a raw dictionary; data is P
--      and S as unsigned varints, then the frame. Used when the body shares most of its bytes with
--      the base at its two ends, as a conversation's next request does.
-- depth counts the bases to decompress first (0 for codecs 0 and 1); the
-- writer starts a new chain with a codec-1 blob once depth reaches a limit,
-- so reading any one body decompresses a bounded number of blobs.
-- hash and size stay those of the uncompressed body.

ALTER TABLE blob ADD COLUMN codec INTEGER NOT NULL DEFAULT 0;
ALTER TABLE blob ADD COLUMN base TEXT REFERENCES blob (hash);
ALTER TABLE blob ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;

-- Lets a body be deleted only when no other blob is built on it.
CREATE INDEX blob_base ON blob (base);
