-- binlogctl test fixture workload "schema" (MariaDB 10.11, ROW format, CRC32,
-- binlog_row_metadata=NO_LOG). Fed as-is to `mariadb --batch` by
-- testdata/generate.sh; the script issues a final FLUSH BINARY LOGS afterwards.
--
-- The TABLE_MAPs of this set carry no column names, no signedness, no charsets
-- and no ENUM/SET members: what convert says about columns comes from schema
-- history (the DDL below as the binlog holds it, or a --schema file). It also
-- has MariaDB's pre-10.0 high-precision temporals (mysql56_temporal_format=OFF),
-- whose rows cannot even be split into columns without the table definition,
-- FLOAT(M,D)/DOUBLE(M,D) (printed rounded to D decimals), UUID/INET4/INET6
-- (logged as BINARY) and DDL between the row changes.
-- Times are fixed with SET timestamp (from 1709251200 = 2024-03-01 00:00:00 UTC).
SET SESSION time_zone = '+00:00';
SET timestamp = 1709251200;
CREATE DATABASE sch DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE sch;

-- ------------------------------------------------ legacy high-precision temporals
SET GLOBAL mysql56_temporal_format = OFF;
SET timestamp = 1709251201;
CREATE TABLE legacy_time (
  id INT NOT NULL PRIMARY KEY,
  dt0 DATETIME, dt3 DATETIME(3), dt6 DATETIME(6),
  ts0 TIMESTAMP NULL DEFAULT NULL, ts2 TIMESTAMP(2) NULL DEFAULT NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
  t0 TIME, t1 TIME(1), t4 TIME(4), t6 TIME(6)
);
SET GLOBAL mysql56_temporal_format = ON;
SET timestamp = 1709251202;
INSERT INTO legacy_time VALUES
  (1, '2024-03-01 10:20:30', '2024-03-01 10:20:30.123', '1000-01-01 00:00:00.000001',
      '1970-01-01 00:00:01', '2038-01-19 03:14:07.99', '2024-02-29 23:59:59.999999',
      '-838:59:59', '838:59:59.9', '-00:00:00.0001', '12:34:56.789012'),
  (2, '9999-12-31 23:59:59', '0000-00-00 00:00:00.000', '2024-02-29 12:00:00.5',
      NULL, '1999-12-31 23:59:59.01', '2001-02-03 04:05:06.000007',
      '00:00:00', '-12:00:00.5', '100:00:00.0001', '-838:59:59.000000'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
SET timestamp = 1709251203;
UPDATE legacy_time SET dt3 = '2020-01-01 00:00:00.999', t6 = '-01:02:03.000004' WHERE id = 2;
DELETE FROM legacy_time WHERE id = 3;

-- ------------------------------------------------ numbers: signedness, (M,D)
SET timestamp = 1709251204;
CREATE TABLE nums (
  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
  ti TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT UNSIGNED, i INT UNSIGNED, bi BIGINT,
  f FLOAT, f73 FLOAT(7,3), d DOUBLE, d124 DOUBLE(12,4), dc DECIMAL(10,3) UNSIGNED
);
SET timestamp = 1709251205;
INSERT INTO nums VALUES
  (18446744073709551615, 255, -32768, 16777215, 4294967295, -9223372036854775808, 0.1, 1.5, 0.1, -0.0001, 1234567.891),
  (1, 0, 32767, 0, 0, 9223372036854775807, -3.25, -9999.999, 1e300, 99999999.9999, 0.001),
  (2, 128, -1, 8388608, 2147483648, -1, NULL, 0.0005, -2.5e-10, 0.00005, NULL);
SET timestamp = 1709251206;
UPDATE nums SET d124 = 12345.6789, f73 = 0.125 WHERE id = 1;

-- ------------------------------------------------ strings, ENUM/SET, binary, UUID/INET
SET timestamp = 1709251207;
CREATE TABLE strs (
  id INT NOT NULL PRIMARY KEY,
  l1 VARCHAR(20) CHARACTER SET latin1, u8 VARCHAR(20), c CHAR(5) CHARACTER SET latin1 COLLATE latin1_bin,
  e ENUM('rot','grün','blau'), s SET('a','b','c','d'),
  b BINARY(4), vb VARBINARY(10), bl BLOB, tx TEXT CHARACTER SET latin1,
  u UUID, i4 INET4, i6 INET6
) DEFAULT CHARSET=utf8mb4;
SET timestamp = 1709251208;
INSERT INTO strs VALUES
  (1, 'café ÿ€', 'naïve 😀', 'ß', 'grün', 'a,d', 'ab', 'x\0y', 'blob\0', 'Grüße',
      '123e4567-e89b-12d3-a456-426614174000', '192.168.0.1', '2001:db8::1'),
  (2, '', '', '', 'rot', '', '\0\0\0\0', '', '', '',
      '00000000-0000-0000-0000-000000000000', '0.0.0.0', '::ffff:10.0.0.1'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
SET timestamp = 1709251209;
UPDATE strs SET e = 'blau', s = 'b,c', l1 = 'über' WHERE id = 2;

-- ------------------------------------------------ DDL between row changes
SET timestamp = 1709251210;
CREATE TABLE evolve (id INT NOT NULL, a VARCHAR(10), b INT, PRIMARY KEY (id));
INSERT INTO evolve VALUES (1, 'x', 10), (2, 'y', 20);
SET timestamp = 1709251211;
ALTER TABLE evolve ADD COLUMN c INT UNSIGNED NOT NULL DEFAULT 7 AFTER a, DROP COLUMN b;
INSERT INTO evolve VALUES (3, 'z', 4000000000);
SET timestamp = 1709251212;
ALTER TABLE evolve CHANGE COLUMN a name VARCHAR(20);
UPDATE evolve SET name = 'zz', c = 3 WHERE id = 3;
SET timestamp = 1709251213;
RENAME TABLE evolve TO evolved;
INSERT INTO evolved VALUES (4, 'w', 4294967295);
SET timestamp = 1709251214;
ALTER TABLE evolved ADD COLUMN u SMALLINT UNSIGNED FIRST;
UPDATE evolved SET u = 65535 WHERE id = 4;

-- ------------------------------------------------ a file of DML only (for --schema)
FLUSH BINARY LOGS;
SET timestamp = 1709251300;
INSERT INTO legacy_time VALUES
  (4, '2000-01-01 00:00:00', '2000-01-01 00:00:00.001', '2000-01-01 00:00:00.000002',
      '2000-01-01 00:00:03', '2000-01-01 00:00:04.05', '2000-01-01 00:00:05.000006',
      '01:00:00', '-01:00:00.1', '02:00:00.0002', '-03:00:00.000003');
UPDATE nums SET i = 123, f73 = -0.5 WHERE id = 2;
UPDATE strs SET tx = 'Ärger', u = 'ffffffff-ffff-ffff-ffff-ffffffffffff' WHERE id = 1;
INSERT INTO evolved VALUES (1000, 5, 'v', 5);
DELETE FROM evolved WHERE id = 1;
