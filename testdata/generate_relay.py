#!/usr/bin/env python3
"""Regenerates testdata/mariadb-10.11/relay/: a real MariaDB relay-log chain.

    python3 testdata/generate_relay.py

Two private servers (tests/cli/mdb.py: own datadirs; the primary on a free 127.0.0.1 port, the
replica on a unix socket only): a primary (server_id 377, domain 9) that writes one transaction
in domain 31 first, then transactions in domain 9 with its binlog rotated now and then; a replica
whose relay log rotates with the primary's binlog (never inside a transaction) and is kept
(relay_log_purge=0). The replica's relay logs
are copied to relay/binlogs after the replica has applied everything and stopped, with the
primary's @@gtid_binlog_state and the replica's @@gtid_slave_pos in relay/expected/gtid.txt.
Takes about 20 s.
"""
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
import mdb  # noqa: E402

OUT = os.path.join(HERE, "mariadb-10.11", "relay")


def main():
    mdb.require_or_skip()
    work = tempfile.mkdtemp(prefix="binlogctl-relay-")
    primary = mdb.Server(os.path.join(work, "p"), tcp=True, extra_args=[
        "--log-bin=mariadb-bin", "--server-id=377", "--gtid-domain-id=9", "--binlog-format=ROW",
        "--binlog-checksum=CRC32", "--binlog-row-metadata=FULL"])
    replica = mdb.Server(os.path.join(work, "r"), extra_args=[
        "--server-id=378", "--relay-log=hx-relay", "--relay-log-purge=0",
        "--binlog-checksum=CRC32"])
    os.makedirs(primary.dir)
    os.makedirs(replica.dir)
    try:
        primary.start()
        replica.start()
        primary.sql("CREATE USER repl@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT REPLICATION SLAVE ON *.* TO repl@'127.0.0.1';")
        replica.sql(f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary.port}, MASTER_USER='repl', "
                    "MASTER_PASSWORD='pw', MASTER_USE_GTID=slave_pos; START SLAVE;")
        primary.sql("SET gtid_domain_id=31; CREATE DATABASE side; CREATE TABLE side.t (id INT PRIMARY KEY, v TEXT);")
        primary.sql("CREATE DATABASE shop; CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(200));")
        for i in range(1, 61):
            primary.sql(f"BEGIN; INSERT INTO shop.orders VALUES ({i}, REPEAT('x', 150)); "
                        f"UPDATE shop.orders SET note='n{i}' WHERE id={i}; COMMIT;")
            if i % 10 == 0:
                primary.sql("FLUSH BINARY LOGS;")
        state = primary.query("SELECT @@gtid_binlog_state").strip()
        deadline = time.time() + 60
        while time.time() < deadline and replica.query("SELECT @@gtid_slave_pos").strip() != state:
            time.sleep(0.2)
        slave_pos = replica.query("SELECT @@gtid_slave_pos").strip()
        if slave_pos != state:
            sys.exit(f"the replica did not catch up: {slave_pos} vs {state}")
        replica.sql("STOP SLAVE;")
        replica.stop()
        primary.stop()
        for sub in ("binlogs", "expected"):  # README.md stays
            shutil.rmtree(os.path.join(OUT, sub), ignore_errors=True)
        os.makedirs(os.path.join(OUT, "binlogs"))
        os.makedirs(os.path.join(OUT, "expected"))
        names = sorted(n for n in os.listdir(replica.data) if n.startswith("hx-relay.0"))
        for n in names:
            shutil.copyfile(os.path.join(replica.data, n), os.path.join(OUT, "binlogs", n))
        with open(os.path.join(OUT, "binlogs", "hx-relay.index"), "w") as f:
            f.write("".join("./" + n + "\n" for n in names))
        with open(os.path.join(OUT, "expected", "gtid.txt"), "w") as f:
            f.write(f"primary_gtid_binlog_state={state}\nreplica_gtid_slave_pos={slave_pos}\n")
        print(f"{len(names)} relay files, gtid state {state}")
    finally:
        replica.stop()
        primary.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
