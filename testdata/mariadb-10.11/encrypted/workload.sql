-- binlogctl test fixture workload "encrypted" (--encrypt-binlog=ON with the
-- file_key_management plugin and encrypted/keys.txt): a tiny workload; every
-- binlog file starts with a Start_encryption event after Format_desc.
SET SESSION time_zone = '+00:00';
SET timestamp = 1707004800;
CREATE DATABASE secret DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE secret;
CREATE TABLE vault (id INT NOT NULL PRIMARY KEY, label VARCHAR(40) NOT NULL, amount DECIMAL(10,2) NULL) ENGINE=InnoDB;
SET timestamp = 1707004801;
INSERT INTO vault VALUES (1, 'gold', 100.00), (2, 'silver', 55.50), (3, 'bronze ✓', NULL);
UPDATE vault SET amount = 60.25 WHERE id = 2;
SET timestamp = 1707004802;
BEGIN;
INSERT INTO vault VALUES (4, 'platinum', 999.99);
DELETE FROM vault WHERE id = 1;
COMMIT;
FLUSH BINARY LOGS;
SET timestamp = 1707004803;
INSERT INTO vault SELECT seq + 10, CONCAT('bulk-', seq), seq * 0.25 FROM seq_1_to_20;
