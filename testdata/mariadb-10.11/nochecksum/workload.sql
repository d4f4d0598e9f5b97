-- binlogctl test fixture workload "nochecksum" (--binlog-checksum=NONE).
-- Short: DDL, multi-row inserts, updates, deletes, one multi-statement
-- transaction, one INSERT ... SELECT; the script adds a final FLUSH BINARY LOGS.
SET SESSION time_zone = '+00:00';
SET timestamp = 1706832000;
CREATE DATABASE plain DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE plain;
CREATE TABLE kv (
  k VARCHAR(32) NOT NULL PRIMARY KEY,
  v VARCHAR(200) NULL,
  n BIGINT NOT NULL DEFAULT 0,
  changed DATETIME(6) NULL
) ENGINE=InnoDB;
CREATE TABLE counters (id SMALLINT UNSIGNED NOT NULL PRIMARY KEY, hits INT UNSIGNED NOT NULL, ratio DOUBLE NULL) ENGINE=InnoDB;
SET timestamp = 1706832001;
INSERT INTO kv (k, v, n, changed) VALUES
  ('alpha', 'first value', 1, NOW(6)), ('beta', 'zweiter Wert ä', 2, NOW(6)),
  ('gamma', '第三', 3, NOW(6)), ('delta', NULL, 4, NOW(6)), ('epsilon', '🙂', 5, NOW(6));
INSERT INTO counters (id, hits, ratio) SELECT seq, seq * 3, seq / 7 FROM seq_1_to_120;
SET timestamp = 1706832002;
UPDATE kv SET v = CONCAT(IFNULL(v, ''), ' (updated)'), n = n * 10, changed = NOW(6) WHERE n % 2 = 0;
UPDATE counters SET hits = hits + 1000, ratio = NULL WHERE id % 10 = 0;
SET timestamp = 1706832003;
BEGIN;
INSERT INTO kv (k, v, n, changed) VALUES ('zeta', 'in a transaction', 6, NOW(6));
UPDATE counters SET hits = 0 WHERE id = 1;
DELETE FROM kv WHERE k = 'alpha';
COMMIT;
SET timestamp = 1706832004;
DELETE FROM counters WHERE id > 100;
ALTER TABLE kv ADD COLUMN tag CHAR(3) NULL;
UPDATE kv SET tag = UPPER(LEFT(k, 3));
INSERT INTO counters (id, hits, ratio) SELECT seq + 1000, seq, seq * 1.5e0 FROM seq_1_to_150;
SET timestamp = 1706832005;
BEGIN;
UPDATE counters SET hits = hits * 2 WHERE id BETWEEN 1001 AND 1150;
COMMIT;
DROP TABLE IF EXISTS nothing_here;
