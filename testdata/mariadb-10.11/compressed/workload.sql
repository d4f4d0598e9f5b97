-- binlogctl test fixture workload "compressed" (--log-bin-compress=ON
-- --log-bin-compress-min-len=10): Query and row events longer than 10 bytes
-- are written in their compressed variants (Query_compressed, *_rows_compressed).
-- Highly compressible row images (REPEAT) plus some incompressible ones
-- (SHA2 hex). The script adds a final FLUSH BINARY LOGS.
SET SESSION time_zone = '+00:00';
SET timestamp = 1706918400;
CREATE DATABASE packed DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE packed;
CREATE TABLE docs (
  id INT NOT NULL PRIMARY KEY,
  title VARCHAR(100) NOT NULL,
  body TEXT NOT NULL,
  digest CHAR(64) NOT NULL,
  score DECIMAL(8,3) NOT NULL,
  created DATETIME(3) NOT NULL
) ENGINE=InnoDB;
CREATE TABLE tiny (id INT NOT NULL PRIMARY KEY, b BLOB NULL) ENGINE=InnoDB;
SET timestamp = 1706918401;
INSERT INTO docs (id, title, body, digest, score, created)
  SELECT seq, CONCAT('Document number ', seq),
         REPEAT(CONCAT('lorem ipsum dolor sit amet ', seq % 5, ' '), 1 + seq % 12),
         SHA2(CONCAT('doc', seq), 256), seq * 1.125, FROM_UNIXTIME(1706918401 + seq)
  FROM seq_1_to_120;
INSERT INTO tiny VALUES (1, NULL), (2, x'00'), (3, REPEAT(x'aa', 1000));
SET timestamp = 1706918402;
UPDATE docs SET body = CONCAT(body, ' -- revised'), score = score + 0.5 WHERE id % 3 = 0;
SET timestamp = 1706918403;
BEGIN;
UPDATE docs SET title = CONCAT(title, ' (archived)') WHERE id <= 20;
DELETE FROM docs WHERE id BETWEEN 21 AND 50;
INSERT INTO docs (id, title, body, digest, score, created) VALUES
  (1001, 'Short', 'x', SHA2('x', 256), 0, NOW(3)),
  (1002, 'Unicode ✓', REPEAT('αβγδε ', 100), SHA2('y', 256), -1.5, NOW(3));
COMMIT;
SET timestamp = 1706918404;
DELETE FROM docs WHERE id % 7 = 0;
UPDATE tiny SET b = REPEAT(x'bb', 3000) WHERE id = 2;
DELETE FROM tiny WHERE id = 3;
ALTER TABLE docs ADD COLUMN lang CHAR(2) NOT NULL DEFAULT 'en';
UPDATE docs SET lang = 'la' WHERE body LIKE 'lorem%' AND id < 100;
