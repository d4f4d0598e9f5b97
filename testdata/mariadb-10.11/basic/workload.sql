-- binlogctl test fixture workload "basic" (MariaDB 10.11, ROW format, CRC32).
-- Fed as-is to `mariadb --batch` by testdata/generate.sh; the script issues a
-- final FLUSH BINARY LOGS afterwards. All timestamps are fixed with
-- SET timestamp (starting at 1706745600 = 2024-02-01 00:00:00 UTC).
SET SESSION time_zone = '+00:00';
SET timestamp = 1706745600;

-- ---------------------------------------------------------------- 1. DDL
CREATE DATABASE shop DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
CREATE DATABASE legacy DEFAULT CHARACTER SET latin1 COLLATE latin1_swedish_ci;
CREATE DATABASE typelab DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE shop;

SET timestamp = 1706745601;
CREATE TABLE customers (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  email VARCHAR(128) NULL,
  tier ENUM('free','pro','enterprise') NOT NULL DEFAULT 'free',
  balance DECIMAL(12,2) NOT NULL DEFAULT 0,
  created DATETIME(3) NOT NULL,
  UNIQUE KEY uk_email (email)
) ENGINE=InnoDB;
CREATE TABLE products (
  sku VARCHAR(12) NOT NULL PRIMARY KEY,
  title VARCHAR(80) NOT NULL,
  price DECIMAL(10,2) NOT NULL,
  stock INT NOT NULL DEFAULT 0,
  updated DATETIME(3) NULL
) ENGINE=InnoDB;
CREATE TABLE orders (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer_id INT UNSIGNED NOT NULL,
  sku VARCHAR(12) NOT NULL,
  qty SMALLINT UNSIGNED NOT NULL,
  total DECIMAL(12,2) NOT NULL,
  placed TIMESTAMP(3) NULL DEFAULT NULL,
  status ENUM('new','paid','shipped','cancelled') NOT NULL DEFAULT 'new',
  KEY k_customer (customer_id)
) ENGINE=InnoDB;
CREATE TABLE order_notes (
  order_id BIGINT NOT NULL,
  seq TINYINT UNSIGNED NOT NULL DEFAULT 1,
  note VARCHAR(200) NOT NULL,
  PRIMARY KEY (order_id, seq)
) ENGINE=InnoDB;
CREATE TABLE scratch (a INT, b VARCHAR(10)) ENGINE=InnoDB;

SET timestamp = 1706745610;
INSERT INTO customers (name, email, tier, balance, created) VALUES
  ('Alice Example', 'alice@example.com', 'pro', 120.50, NOW(3)),
  ('Bob Builder', 'bob@example.com', 'free', 0.00, NOW(3)),
  ('Chloé Dubois', 'chloe@example.fr', 'enterprise', 9999.99, NOW(3)),
  ('Dmitri Иванов', 'dmitri@example.ru', 'free', 15.00, NOW(3)),
  ('Emi 山田', 'emi@example.jp', 'pro', 250.75, NOW(3)),
  ('Fatima 🚀 Rocket', NULL, 'free', 3.10, NOW(3)),
  ('Günther Groß', 'guenther@example.de', 'pro', 42.00, NOW(3)),
  ('Hana 김', 'hana@example.kr', 'free', 0.01, NOW(3)),
  ('Ivan "Quote" O''Brien', 'ivan@example.ie', 'enterprise', 1000.00, NOW(3)),
  ('Jo\tTab\\Slash', 'jo@example.com', 'free', 7.77, NOW(3));
INSERT INTO products (sku, title, price, stock, updated) VALUES
  ('SKU-0001', 'Widget', 9.99, 100, NOW(3)),
  ('SKU-0002', 'Gadget', 24.50, 50, NOW(3)),
  ('SKU-0003', 'Doohickey', 3.25, 500, NOW(3)),
  ('SKU-0004', 'Thingamajig', 120.00, 10, NOW(3)),
  ('SKU-0005', 'Gizmo ✨', 15.75, 75, NOW(3)),
  ('SKU-0006', 'Sprocket', 0.99, 1000, NOW(3)),
  ('SKU-0007', 'Whatsit', 49.95, 20, NOW(3)),
  ('SKU-0008', 'Contraption', 299.00, 5, NOW(3));
INSERT INTO scratch VALUES (1, 'one'), (2, 'two'), (3, NULL);

SET timestamp = 1706745620;
ALTER TABLE customers ADD COLUMN phone VARCHAR(20) NULL AFTER email;
ALTER TABLE products MODIFY title VARCHAR(120) NOT NULL, ADD INDEX k_price (price);
UPDATE customers SET phone = CONCAT('+1-555-01', LPAD(id, 2, '0')) WHERE id <= 4;
CREATE TABLE products_tmp LIKE products;
INSERT INTO products_tmp SELECT * FROM products WHERE price < 10;
RENAME TABLE products_tmp TO products_cheap;
TRUNCATE TABLE scratch;
INSERT INTO scratch VALUES (10, 'after'), (11, 'truncate');
DROP TABLE scratch;
DROP TABLE IF EXISTS no_such_table;

SET timestamp = 1706745630;
-- a 400-row INSERT ... SELECT: several Write_rows events in one statement,
-- and a transaction bigger than max_binlog_size (that file overshoots).
CREATE TABLE event_log (
  id INT NOT NULL PRIMARY KEY,
  kind VARCHAR(16) NOT NULL,
  payload VARCHAR(40) NOT NULL,
  at DATETIME NOT NULL
) ENGINE=InnoDB;
INSERT INTO event_log (id, kind, payload, at)
  SELECT seq, ELT(1 + seq % 4, 'view', 'click', 'buy', 'leave'),
         CONCAT('payload-', LPAD(seq * 7919 % 100000, 5, '0'), '-', REPEAT('z', seq % 13)),
         FROM_UNIXTIME(1706745630 + seq)
  FROM seq_1_to_400;
DELETE FROM event_log WHERE id % 10 <> 0;
FLUSH BINARY LOGS;

-- ---------------------------------------------------------------- 2. small transactions
SET timestamp = 1706746007;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (1, 'SKU-0005', 1, 1 * (SELECT price FROM products WHERE sku = 'SKU-0005'), NOW(3), 'new');
UPDATE products SET stock = stock - 1, updated = NOW(3) WHERE sku = 'SKU-0005';
COMMIT;
SET timestamp = 1706746094;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (2, 'SKU-0003', 2, 2 * (SELECT price FROM products WHERE sku = 'SKU-0003'), NOW(3), 'new');
UPDATE products SET stock = stock - 2, updated = NOW(3) WHERE sku = 'SKU-0003';
COMMIT;
SET timestamp = 1706746161;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (7, 'SKU-0004', 2, 2 * (SELECT price FROM products WHERE sku = 'SKU-0004'), NOW(3), 'new');
UPDATE products SET stock = stock - 2, updated = NOW(3) WHERE sku = 'SKU-0004';
COMMIT;
SET timestamp = 1706746236;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (7, 'SKU-0008', 3, 3 * (SELECT price FROM products WHERE sku = 'SKU-0008'), NOW(3), 'new');
UPDATE products SET stock = stock - 3, updated = NOW(3) WHERE sku = 'SKU-0008';
COMMIT;
SET timestamp = 1706746274;
UPDATE orders SET status = 'paid' WHERE customer_id = 7 AND status = 'new';
SET timestamp = 1706746298;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (8, 'SKU-0006', 2, 2 * (SELECT price FROM products WHERE sku = 'SKU-0006'), NOW(3), 'new');
UPDATE products SET stock = stock - 2, updated = NOW(3) WHERE sku = 'SKU-0006';
COMMIT;
SET timestamp = 1706746359;
START TRANSACTION;
UPDATE customers SET balance = balance - 5.25 WHERE id = 8;
UPDATE customers SET balance = balance + 5.25 WHERE id = 9;
COMMIT;
SET timestamp = 1706746437;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (10, 'SKU-0007', 4, 4 * (SELECT price FROM products WHERE sku = 'SKU-0007'), NOW(3), 'new');
UPDATE products SET stock = stock - 4, updated = NOW(3) WHERE sku = 'SKU-0007';
COMMIT;
SET timestamp = 1706746469;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) SELECT 5, sku, 5, price * 5, NOW(3), 'new' FROM products WHERE sku = 'SKU-0001';
UPDATE products SET stock = stock - 5, updated = NOW(3) WHERE sku = 'SKU-0001';
INSERT INTO order_notes (order_id, note) VALUES (LAST_INSERT_ID(), 'gift wrap #9 🎁');
COMMIT;
SET timestamp = 1706746492;
UPDATE orders SET status = 'paid' WHERE customer_id = 4 AND status = 'new';
SET timestamp = 1706746569;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (1, 'SKU-0006', 3, 3 * (SELECT price FROM products WHERE sku = 'SKU-0006'), NOW(3), 'new');
UPDATE products SET stock = stock - 3, updated = NOW(3) WHERE sku = 'SKU-0006';
COMMIT;
SET timestamp = 1706746656;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (6, 'SKU-0006', 4, 4 * (SELECT price FROM products WHERE sku = 'SKU-0006'), NOW(3), 'new');
UPDATE products SET stock = stock - 4, updated = NOW(3) WHERE sku = 'SKU-0006';
COMMIT;
SET timestamp = 1706746709;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (4, 'SKU-0006', 5, 5 * (SELECT price FROM products WHERE sku = 'SKU-0006'), NOW(3), 'new');
UPDATE products SET stock = stock - 5, updated = NOW(3) WHERE sku = 'SKU-0006';
COMMIT;
SET timestamp = 1706746721;
START TRANSACTION;
UPDATE customers SET balance = balance - 5.25 WHERE id = 7;
UPDATE customers SET balance = balance + 5.25 WHERE id = 8;
COMMIT;
SET timestamp = 1706746755;
UPDATE orders SET status = 'paid' WHERE customer_id = 5 AND status = 'new';
SET timestamp = 1706746823;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (8, 'SKU-0006', 1, 1 * (SELECT price FROM products WHERE sku = 'SKU-0006'), NOW(3), 'new');
UPDATE products SET stock = stock - 1, updated = NOW(3) WHERE sku = 'SKU-0006';
COMMIT;
SET timestamp = 1706746908;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (9, 'SKU-0006', 1, 1 * (SELECT price FROM products WHERE sku = 'SKU-0006'), NOW(3), 'new');
UPDATE products SET stock = stock - 1, updated = NOW(3) WHERE sku = 'SKU-0006';
COMMIT;
SET timestamp = 1706746973;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) SELECT 4, sku, 4, price * 4, NOW(3), 'new' FROM products WHERE sku = 'SKU-0003';
UPDATE products SET stock = stock - 4, updated = NOW(3) WHERE sku = 'SKU-0003';
INSERT INTO order_notes (order_id, note) VALUES (LAST_INSERT_ID(), 'gift wrap #18 🎁');
COMMIT;
SET timestamp = 1706747025;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (5, 'SKU-0006', 2, 2 * (SELECT price FROM products WHERE sku = 'SKU-0006'), NOW(3), 'new');
UPDATE products SET stock = stock - 2, updated = NOW(3) WHERE sku = 'SKU-0006';
COMMIT;
SET timestamp = 1706747044;
UPDATE orders SET status = 'paid' WHERE customer_id = 6 AND status = 'new';
SET timestamp = 1706747066;
START TRANSACTION;
UPDATE customers SET balance = balance - 5.25 WHERE id = 4;
UPDATE customers SET balance = balance + 5.25 WHERE id = 5;
COMMIT;
SET timestamp = 1706747096;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (2, 'SKU-0007', 5, 5 * (SELECT price FROM products WHERE sku = 'SKU-0007'), NOW(3), 'new');
UPDATE products SET stock = stock - 5, updated = NOW(3) WHERE sku = 'SKU-0007';
COMMIT;
SET timestamp = 1706747136;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (4, 'SKU-0007', 2, 2 * (SELECT price FROM products WHERE sku = 'SKU-0007'), NOW(3), 'new');
UPDATE products SET stock = stock - 2, updated = NOW(3) WHERE sku = 'SKU-0007';
COMMIT;
SET timestamp = 1706747218;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (3, 'SKU-0002', 4, 4 * (SELECT price FROM products WHERE sku = 'SKU-0002'), NOW(3), 'new');
UPDATE products SET stock = stock - 4, updated = NOW(3) WHERE sku = 'SKU-0002';
COMMIT;
SET timestamp = 1706747277;
UPDATE orders SET status = 'paid' WHERE customer_id = 6 AND status = 'new';
SET timestamp = 1706747302;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (1, 'SKU-0007', 5, 5 * (SELECT price FROM products WHERE sku = 'SKU-0007'), NOW(3), 'new');
UPDATE products SET stock = stock - 5, updated = NOW(3) WHERE sku = 'SKU-0007';
COMMIT;
SET timestamp = 1706747375;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) SELECT 10, sku, 2, price * 2, NOW(3), 'new' FROM products WHERE sku = 'SKU-0001';
UPDATE products SET stock = stock - 2, updated = NOW(3) WHERE sku = 'SKU-0001';
INSERT INTO order_notes (order_id, note) VALUES (LAST_INSERT_ID(), 'gift wrap #27 🎁');
COMMIT;
SET timestamp = 1706747417;
START TRANSACTION;
UPDATE customers SET balance = balance - 5.25 WHERE id = 2;
UPDATE customers SET balance = balance + 5.25 WHERE id = 3;
COMMIT;
SET timestamp = 1706747501;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (9, 'SKU-0008', 4, 4 * (SELECT price FROM products WHERE sku = 'SKU-0008'), NOW(3), 'new');
UPDATE products SET stock = stock - 4, updated = NOW(3) WHERE sku = 'SKU-0008';
COMMIT;
SET timestamp = 1706747508;
UPDATE orders SET status = 'paid' WHERE customer_id = 10 AND status = 'new';
SET timestamp = 1706747558;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (7, 'SKU-0001', 5, 5 * (SELECT price FROM products WHERE sku = 'SKU-0001'), NOW(3), 'new');
UPDATE products SET stock = stock - 5, updated = NOW(3) WHERE sku = 'SKU-0001';
COMMIT;
SET timestamp = 1706747643;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (10, 'SKU-0002', 4, 4 * (SELECT price FROM products WHERE sku = 'SKU-0002'), NOW(3), 'new');
UPDATE products SET stock = stock - 4, updated = NOW(3) WHERE sku = 'SKU-0002';
COMMIT;
SET timestamp = 1706747732;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (9, 'SKU-0007', 3, 3 * (SELECT price FROM products WHERE sku = 'SKU-0007'), NOW(3), 'new');
UPDATE products SET stock = stock - 3, updated = NOW(3) WHERE sku = 'SKU-0007';
COMMIT;
SET timestamp = 1706747811;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) VALUES (8, 'SKU-0002', 2, 2 * (SELECT price FROM products WHERE sku = 'SKU-0002'), NOW(3), 'new');
UPDATE products SET stock = stock - 2, updated = NOW(3) WHERE sku = 'SKU-0002';
COMMIT;
SET timestamp = 1706747829;
UPDATE orders SET status = 'paid' WHERE customer_id = 9 AND status = 'new';
SET timestamp = 1706747841;
BEGIN;
INSERT INTO orders (customer_id, sku, qty, total, placed, status) SELECT 2, sku, 1, price * 1, NOW(3), 'new' FROM products WHERE sku = 'SKU-0006';
UPDATE products SET stock = stock - 1, updated = NOW(3) WHERE sku = 'SKU-0006';
INSERT INTO order_notes (order_id, note) VALUES (LAST_INSERT_ID(), 'gift wrap #36 🎁');
COMMIT;

SET timestamp = 1706748000;
-- autocommit single-statement DML
UPDATE orders SET status = 'shipped' WHERE status = 'paid' AND id % 2 = 0;
DELETE FROM orders WHERE status = 'new' AND qty = 1;
REPLACE INTO products (sku, title, price, stock, updated) VALUES ('SKU-0006', 'Sprocket v2', 1.09, 900, NOW(3));
REPLACE INTO products (sku, title, price, stock, updated) VALUES ('SKU-0009', 'New Thing', 5.00, 3, NOW(3));
INSERT INTO products (sku, title, price, stock, updated) VALUES ('SKU-0003', 'Doohickey', 3.25, 5, NOW(3)), ('SKU-0010', 'Brand New', 77.70, 7, NOW(3))
  ON DUPLICATE KEY UPDATE stock = stock + VALUES(stock), updated = NOW(3);
UPDATE customers SET tier = 'pro', email = NULL WHERE id = 2;
UPDATE customers SET email = 'fatima@example.com' WHERE email IS NULL AND id = 6;

SET timestamp = 1706748010;
-- ROLLBACK: nothing of these must reach the binlog or the tables
BEGIN;
INSERT INTO customers (name, email, created) VALUES ('ROLLED BACK 1', 'rb1@example.com', NOW(3));
UPDATE products SET title = 'ROLLED BACK' WHERE sku = 'SKU-0001';
ROLLBACK;
START TRANSACTION;
DELETE FROM orders;
ROLLBACK;
BEGIN;
UPDATE customers SET name = 'ROLLED BACK 2' WHERE id = 1;
ROLLBACK;

SET timestamp = 1706748020;
-- SAVEPOINTs: partial rollbacks inside committed transactions
BEGIN;
UPDATE customers SET balance = balance + 1 WHERE id = 1;
SAVEPOINT sp1;
UPDATE customers SET name = 'ROLLED BACK 3' WHERE id = 3;
INSERT INTO products (sku, title, price) VALUES ('SKU-RB01', 'ROLLED BACK', 1);
ROLLBACK TO SAVEPOINT sp1;
UPDATE customers SET balance = balance + 2 WHERE id = 4;
COMMIT;
SET timestamp = 1706748021;
BEGIN;
INSERT INTO order_notes (order_id, seq, note) VALUES (1, 2, 'savepoint kept');
SAVEPOINT a;
INSERT INTO order_notes (order_id, seq, note) VALUES (1, 3, 'ROLLED BACK 4');
SAVEPOINT b;
INSERT INTO order_notes (order_id, seq, note) VALUES (1, 4, 'ROLLED BACK 5');
ROLLBACK TO SAVEPOINT a;
SAVEPOINT c;
INSERT INTO order_notes (order_id, seq, note) VALUES (1, 5, 'released savepoint kept');
RELEASE SAVEPOINT c;
COMMIT;

SET timestamp = 1706748030;
-- CREATE TABLE ... SELECT (Query with the CREATE, then row events)
CREATE TABLE customer_totals ENGINE=InnoDB
  SELECT c.id AS customer_id, c.name, COUNT(o.id) AS n_orders, COALESCE(SUM(o.total), 0) AS spent
  FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id, c.name;

-- ---------------------------------------------------------------- 3. XA, statement format, MyISAM, GTID domains
SET timestamp = 1706748100;
XA START 'basic-xa-commit';
INSERT INTO order_notes (order_id, seq, note) VALUES (2, 1, 'xa two-phase commit');
UPDATE customers SET balance = balance + 10 WHERE id = 5;
XA END 'basic-xa-commit';
XA PREPARE 'basic-xa-commit';
XA COMMIT 'basic-xa-commit';
SET timestamp = 1706748101;
XA START 'basic-xa-rollback';
INSERT INTO order_notes (order_id, seq, note) VALUES (2, 2, 'XA ROLLED BACK');
XA END 'basic-xa-rollback';
XA PREPARE 'basic-xa-rollback';
XA ROLLBACK 'basic-xa-rollback';
SET timestamp = 1706748102;
XA START 'gtrid-7', 'bqual-7', 7;
INSERT INTO order_notes (order_id, seq, note) VALUES (2, 3, 'xa one phase');
XA END 'gtrid-7', 'bqual-7', 7;
XA COMMIT 'gtrid-7', 'bqual-7', 7 ONE PHASE;

SET timestamp = 1706748110;
-- STATEMENT format: Query events plus Intvar, Rand and User_var events
SET SESSION binlog_format = 'STATEMENT';
CREATE TABLE stmt_log (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  msg VARCHAR(64) NULL,
  i BIGINT NULL,
  r DOUBLE NULL,
  d DECIMAL(24,3) NULL,
  prev BIGINT NULL
) ENGINE=InnoDB;
INSERT INTO stmt_log (msg) VALUES ('first');
INSERT INTO stmt_log (msg, prev) VALUES ('second', LAST_INSERT_ID());
SET @s := 'café ✓', @i := -42, @r := 2.5e-3, @d := 12.345, @nul := NULL;
INSERT INTO stmt_log (msg, i, r, d, prev) VALUES (@s, @i, @r, @d, @nul);
SET @big := 18446744073709551615;
INSERT INTO stmt_log (msg, d) VALUES ('unsigned uservar', @big);
SET SESSION rand_seed1 = 11111111, rand_seed2 = 22222222;
INSERT INTO stmt_log (msg, r) VALUES ('rand', RAND());
SET timestamp = 1706748111;
BEGIN;
INSERT INTO stmt_log (msg, i) VALUES ('in trx', 1), ('in trx', 2);
UPDATE stmt_log SET i = i * 10 WHERE msg = 'in trx';
COMMIT;
SET SESSION binlog_format = 'ROW';

SET timestamp = 1706748120;
-- MyISAM (non-transactional) in a latin1 schema, alone and inside an InnoDB transaction
CREATE TABLE legacy.visits (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  who CHAR(20) NOT NULL,
  page VARCHAR(100) NOT NULL,
  hits MEDIUMINT UNSIGNED NOT NULL DEFAULT 0
) ENGINE=MyISAM DEFAULT CHARSET=latin1;
INSERT INTO legacy.visits (who, page, hits) VALUES ('Zoë', '/naïve/café', 3), ('Jürgen', '/straße', 1), ('Ann', '/€uro ±', 0);
UPDATE legacy.visits SET hits = hits + 1 WHERE who = 'Ann';
BEGIN;
UPDATE customers SET balance = balance - 1 WHERE id = 7;
INSERT INTO legacy.visits (who, page) VALUES ('mixed', '/inside-innodb-trx');
COMMIT;
DELETE FROM legacy.visits WHERE who = 'Jürgen';
CREATE TABLE legacy.notes_nopk (k VARCHAR(10), v INT) ENGINE=InnoDB;
INSERT INTO legacy.notes_nopk VALUES ('dup', 1), ('dup', 1), ('x', NULL);
DELETE FROM legacy.notes_nopk WHERE k = 'dup' LIMIT 1;

SET timestamp = 1706748130;
-- a second GTID domain and a second server_id, then gtid_seq_no jumps
SET SESSION gtid_domain_id = 11;
INSERT INTO order_notes (order_id, seq, note) VALUES (3, 1, 'domain 11');
SET SESSION server_id = 2022;
INSERT INTO order_notes (order_id, seq, note) VALUES (3, 2, 'domain 11, server 2022');
UPDATE order_notes SET note = CONCAT(note, ' (edited)') WHERE order_id = 3;
SET SESSION gtid_seq_no = 100;
INSERT INTO order_notes (order_id, seq, note) VALUES (3, 3, 'domain 11 seq 100');
SET SESSION server_id = @@GLOBAL.server_id;
SET SESSION gtid_domain_id = @@GLOBAL.gtid_domain_id;
SET SESSION gtid_seq_no = 1000;
INSERT INTO order_notes (order_id, seq, note) VALUES (3, 4, 'home domain seq 1000');
INSERT INTO order_notes (order_id, seq, note) VALUES (3, 5, 'home domain seq 1001');
FLUSH BINARY LOGS;

-- ---------------------------------------------------------------- 4. column types
SET timestamp = 1706748200;
USE typelab;
CREATE TABLE all_types (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT NULL, tiu TINYINT UNSIGNED NULL,
  si SMALLINT NULL, siu SMALLINT UNSIGNED NULL,
  mi MEDIUMINT NULL, miu MEDIUMINT UNSIGNED NULL,
  i INT NULL, iu INT UNSIGNED NULL,
  bi BIGINT NULL, biu BIGINT UNSIGNED NULL,
  dec_a DECIMAL(10,2) NULL, dec_b DECIMAL(30,10) NULL, dec_u DECIMAL(5,0) UNSIGNED NULL,
  f FLOAT NULL, d DOUBLE NULL,
  bit1 BIT(1) NULL, bit12 BIT(12) NULL, bit64 BIT(64) NULL,
  yr YEAR NULL,
  dt DATE NULL,
  tm0 TIME NULL, tm3 TIME(3) NULL, tm6 TIME(6) NULL,
  dtm0 DATETIME NULL, dtm2 DATETIME(2) NULL, dtm6 DATETIME(6) NULL,
  ts0 TIMESTAMP NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  c_u CHAR(10) CHARACTER SET utf8mb4 NULL, vc_u VARCHAR(100) CHARACTER SET utf8mb4 NULL,
  c_l CHAR(10) CHARACTER SET latin1 NULL, vc_l VARCHAR(300) CHARACTER SET latin1 NULL,
  bin4 BINARY(4) NULL, vbin VARBINARY(32) NULL, bl BLOB NULL, tx TEXT NULL, mtx MEDIUMTEXT CHARACTER SET latin1 NULL,
  e ENUM('red','green','blue') NULL, s SET('a','b','c','d') NULL,
  j JSON NULL,
  g GEOMETRY NULL, pt POINT NULL,
  u UUID NULL, ip4 INET4 NULL, ip6 INET6 NULL
) ENGINE=InnoDB;
SET timestamp = 1706748201;
INSERT INTO all_types VALUES
  (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
   -99999999.99, -99999999999999999999.9999999999, 0,
   -3.40282e38, -1.7976931348623157e308,
   0, 0, 0,
   1901, '1000-01-01', '-838:59:59', '-12:34:56.789', '-00:00:00.000001',
   '1000-01-01 00:00:00', '1000-01-01 00:00:00.00', '1000-01-01 00:00:00.000000',
   '1970-01-01 00:00:01', '1970-01-01 00:00:01.000', '1970-01-01 00:00:01.000001',
   '', '', '', '', x'00000000', x'', x'', '', '',
   'red', '', '[]', ST_GeomFromText('POINT(0 0)'), ST_GeomFromText('POINT(-180 -90)'),
   '00000000-0000-0000-0000-000000000000', '0.0.0.0', '::'),
  (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807, 18446744073709551615,
   99999999.99, 99999999999999999999.9999999999, 99999,
   3.40282e38, 1.7976931348623157e308,
   1, 4095, 18446744073709551615,
   2155, '9999-12-31', '838:59:59', '838:59:58.999', '23:59:59.999999',
   '9999-12-31 23:59:59', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999999',
   '2038-01-19 03:14:07', '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.999999',
   'ÿÿÿÿÿÿÿÿÿÿ', REPEAT('😀', 25), 'ÿÿÿÿÿÿÿÿÿÿ', REPEAT('é', 300), x'ffffffff', x'00ff00ff00ff', REPEAT(x'deadbeef', 100),
   REPEAT('long text ', 50), REPEAT('ß', 1000),
   'blue', 'a,b,c,d', '{"k": [1, 2.5, "x", null, true], "n": {"deep": {"er": "ü"}}}',
   ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0),(2 2,3 2,3 3,2 2))'), ST_GeomFromText('POINT(180 90)'),
   'ffffffff-ffff-ffff-ffff-ffffffffffff', '255.255.255.255', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'),
  (3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
   0, 0, 0,
   0, 0,
   0, 0, 0,
   0, '0000-00-00', '00:00:00', '00:00:00.000', '00:00:00.000000',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00.00', '0000-00-00 00:00:00.000000',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', '0000-00-00 00:00:00.000000',
   'a ', 'trailing  ', 'b', 'x', x'01', x'00', x'00', ' ', NULL,
   'green', 'b', '{}', ST_GeomFromText('LINESTRING(1 1,2 2,3 5)'), NULL,
   '6ccd780c-baba-1026-9564-5b8c656024db', '127.0.0.1', '::1'),
  (4, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1,
   -0.01, 0.0000000001, 1,
   0.1, 0.30000000000000004,
   1, 1365, 9223372036854775808,
   2024, '2024-02-29', '-01:00:00', '123:45:06.5', '-100:00:00.000002',
   '2024-02-29 12:34:56', '2024-02-29 12:34:56.78', '2024-02-29 12:34:56.123456',
   '2024-02-01 00:00:00', '2024-02-01 00:00:00.001', '2024-02-01 00:00:00.654321',
   'Größe', 'tab\there, newline\nthere, quote '' and \\ backslash', 'Größe', 'naïve café €', 'ab', 'a\0b', x'00010203', 'multi\nline', 'latin1 text: äöü',
   NULL, 'a,c', '"just a string"', ST_GeomFromText('MULTIPOINT(1 2,3 4)', 4326), ST_GeomFromText('POINT(1.5 -2.25)', 3857),
   '123e4567-e89b-12d3-a456-426614174000', '192.168.10.20', '2001:db8::ff00:42:8329'),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (6, 42, 200, 1234, 54321, -123456, 1234567, 123456789, 3000000000, -1234567890123, 12345678901234567890,
   1234.5, -3.1415926535, 42,
   123456792, 2.718281828459045,
   0, 2048, 1,
   1999, '1999-12-31', '10:11:12', '10:11:12.345', '10:11:12.000100',
   '1999-12-31 23:59:59', '1999-12-31 23:59:59.05', '1999-12-31 23:59:59.000005',
   '1999-12-31 23:59:59', '1999-12-31 23:59:59.999', '1999-12-31 23:59:59.000001',
   '中文', 'mixed ASCII 日本語 한국어 Ελληνικά', 'ascii', 'Ñandú', 'x', x'62696e617279ff', 'small blob', 'text', 'medium',
   'green', 'b,d', '{"emoji": "🎉", "num": -0.5e-3}', ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))'), ST_GeomFromText('POINT(3 4)'),
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '10.0.0.1', '::ffff:192.0.2.1');
SET timestamp = 1706748202;
UPDATE all_types SET ti = NULL, vc_u = 'was updated', j = '{"updated": true}', ts3 = NOW(3) WHERE id = 3;
UPDATE all_types SET ti = 7, f = 2.5, e = 'blue', ip4 = '8.8.8.8' WHERE id = 5;
UPDATE all_types SET bit64 = bit64 >> 1, tm6 = '-00:00:01.5', dec_b = dec_b / 4 WHERE id IN (2, 4);
DELETE FROM all_types WHERE id = 1;
BEGIN;
INSERT INTO all_types (id, c_u, u) VALUES (7, 'in trx', '11111111-2222-3333-4444-555555555555');
DELETE FROM all_types WHERE id = 7;
INSERT INTO all_types (id, c_u, dtm6, yr) VALUES (8, 'kept', '2024-02-01 12:00:00.5', 0);
COMMIT;

SET timestamp = 1706748300;
-- final DDL: drop a column, then rows after the schema change; drop a table
USE shop;
ALTER TABLE customers DROP COLUMN phone;
UPDATE customers SET balance = balance + 0.01 WHERE tier = 'enterprise';
DROP TABLE products_cheap;
SET timestamp = 1706748400;
