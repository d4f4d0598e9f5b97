/*M!999999\- enable the sandbox mode */ 
-- MariaDB dump 10.19  Distrib 10.11.19-MariaDB, for debian-linux-gnu (x86_64)
--
-- Host: localhost    Database: sch
-- ------------------------------------------------------
-- Server version	10.11.19-MariaDB-0+deb12u1-log

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;
/*!40101 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;

--
-- Current Database: `sch`
--

CREATE DATABASE /*!32312 IF NOT EXISTS*/ `sch` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */;

USE `sch`;

--
-- Table structure for table `evolved`
--

DROP TABLE IF EXISTS `evolved`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `evolved` (
  `u` smallint(5) unsigned DEFAULT NULL,
  `id` int(11) NOT NULL,
  `name` varchar(20) DEFAULT NULL,
  `c` int(10) unsigned NOT NULL DEFAULT 7,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Table structure for table `legacy_time`
--

DROP TABLE IF EXISTS `legacy_time`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `legacy_time` (
  `id` int(11) NOT NULL,
  `dt0` datetime /* mariadb-5.3 */ DEFAULT NULL,
  `dt3` datetime(3) /* mariadb-5.3 */ DEFAULT NULL,
  `dt6` datetime(6) /* mariadb-5.3 */ DEFAULT NULL,
  `ts0` timestamp /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts2` timestamp(2) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `ts6` timestamp(6) /* mariadb-5.3 */ NULL DEFAULT NULL,
  `t0` time /* mariadb-5.3 */ DEFAULT NULL,
  `t1` time(1) /* mariadb-5.3 */ DEFAULT NULL,
  `t4` time(4) /* mariadb-5.3 */ DEFAULT NULL,
  `t6` time(6) /* mariadb-5.3 */ DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Table structure for table `nums`
--

DROP TABLE IF EXISTS `nums`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `nums` (
  `id` bigint(20) unsigned NOT NULL,
  `ti` tinyint(3) unsigned DEFAULT NULL,
  `si` smallint(6) DEFAULT NULL,
  `mi` mediumint(8) unsigned DEFAULT NULL,
  `i` int(10) unsigned DEFAULT NULL,
  `bi` bigint(20) DEFAULT NULL,
  `f` float DEFAULT NULL,
  `f73` float(7,3) DEFAULT NULL,
  `d` double DEFAULT NULL,
  `d124` double(12,4) DEFAULT NULL,
  `dc` decimal(10,3) unsigned DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Table structure for table `strs`
--

DROP TABLE IF EXISTS `strs`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!40101 SET character_set_client = utf8mb4 */;
CREATE TABLE `strs` (
  `id` int(11) NOT NULL,
  `l1` varchar(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,
  `u8` varchar(20) DEFAULT NULL,
  `c` char(5) CHARACTER SET latin1 COLLATE latin1_bin DEFAULT NULL,
  `e` enum('rot','grün','blau') DEFAULT NULL,
  `s` set('a','b','c','d') DEFAULT NULL,
  `b` binary(4) DEFAULT NULL,
  `vb` varbinary(10) DEFAULT NULL,
  `bl` blob DEFAULT NULL,
  `tx` text CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT NULL,
  `u` uuid DEFAULT NULL,
  `i4` inet4 DEFAULT NULL,
  `i6` inet6 DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
/*!40101 SET character_set_client = @saved_cs_client */;
/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;
/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;
/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;

-- Dump completed
