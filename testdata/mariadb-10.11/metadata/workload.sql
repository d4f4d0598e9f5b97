-- binlogctl test fixture workload "metadata" (MariaDB 10.11, ROW format, FULL row metadata).
-- Fed as-is to `mariadb --batch` by testdata/generate.sh; the script issues a
-- final FLUSH BINARY LOGS afterwards. Tables mix YEAR, GEOMETRY, JSON, ENUM/SET,
-- text and signed/unsigned numbers in several orders, so that every optional
-- metadata field counts a different subset of the columns.
SET SESSION time_zone = '+00:00';
SET timestamp = 1709251200;
CREATE DATABASE meta DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
USE meta;

-- SIGNEDNESS: numeric columns before and after YEAR columns.
SET timestamp = 1709251201;
CREATE TABLE y_mid (id INT NOT NULL PRIMARY KEY, y YEAR, u INT UNSIGNED, s INT, d DECIMAL(10,2) UNSIGNED, y2 YEAR, b BIGINT UNSIGNED, t TINYINT);
INSERT INTO y_mid VALUES
  (1, 2024, 4294967295, -1, 12345678.90, 1901, 18446744073709551615, -128),
  (2, NULL, 0, -2147483648, 0.01, 2155, 0, 127),
  (3, 0, 2147483648, 2147483647, NULL, NULL, 9223372036854775808, NULL);
SET timestamp = 1709251202;
UPDATE y_mid SET u = u - 1, s = s + 1, y = 1999 WHERE id = 1;
DELETE FROM y_mid WHERE id = 2;

SET timestamp = 1709251203;
CREATE TABLE y_first (y YEAR NOT NULL, id INT UNSIGNED NOT NULL PRIMARY KEY, m MEDIUMINT, sm SMALLINT UNSIGNED, f FLOAT, e DOUBLE);
INSERT INTO y_first VALUES (2000, 4294967295, -8388608, 65535, -1.5, -2.25), (1970, 1, 8388607, 0, 0.5, 1e300);
UPDATE y_first SET m = -1, sm = 65534 WHERE id = 4294967295;

-- Charsets: GEOMETRY before JSON (one collation per column), and a GEOMETRY after
-- the JSON columns (a default collation with the GEOMETRY as the exception).
SET timestamp = 1709251204;
CREATE TABLE geo_json (id INT NOT NULL PRIMARY KEY, g GEOMETRY, j JSON);
INSERT INTO geo_json VALUES
  (1, ST_GeomFromText('POINT(1 2)'), '{"a": 1}'),
  (2, NULL, '[1, "two", {"three": 3}]'),
  (3, ST_GeomFromText('LINESTRING(0 0,1 1,2 0)'), NULL);
UPDATE geo_json SET j = '{"a": 2, "b": "ü"}' WHERE id = 1;

SET timestamp = 1709251205;
CREATE TABLE json_geo (id INT NOT NULL PRIMARY KEY, j1 JSON, j2 JSON, p POINT);
INSERT INTO json_geo VALUES (1, '{"k": "v"}', 'true', ST_GeomFromText('POINT(3 4)')), (2, '[]', NULL, NULL);
DELETE FROM json_geo WHERE id = 2;

-- Everything together, in an order that interleaves every subset.
SET timestamp = 1709251206;
CREATE TABLE mixed (
  id INT UNSIGNED NOT NULL PRIMARY KEY,
  e ENUM('small','medium','large') CHARACTER SET latin1,
  g POINT,
  t TEXT,
  y YEAR,
  n BIGINT,
  st SET('red','green','blue'),
  v VARCHAR(20) CHARACTER SET latin1,
  ls LINESTRING,
  j JSON,
  c CHAR(4) CHARACTER SET binary,
  u SMALLINT UNSIGNED,
  txt2 VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
);
INSERT INTO mixed VALUES
  (4294967295, 'large', ST_GeomFromText('POINT(-1 -1)'), 'héllo', 2038, -9223372036854775808, 'red,blue', 'café', ST_GeomFromText('LINESTRING(0 0,5 5)'), '{"x": [1, 2]}', 'ab', 65535, 'Zz'),
  (1, 'small', NULL, NULL, NULL, -1, '', 'x', NULL, 'null', NULL, 0, NULL),
  (2, NULL, ST_GeomFromText('POINT(0 0)'), '', 1901, 9223372036854775807, 'green', NULL, NULL, '"s"', 'wxyz', NULL, 'ß');
SET timestamp = 1709251207;
UPDATE mixed SET n = n + 1, u = 1, j = '{"x": []}', y = 2001 WHERE id = 1;
DELETE FROM mixed WHERE id = 2;
