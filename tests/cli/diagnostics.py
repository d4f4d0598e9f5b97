#!/usr/bin/env python3
"""Diagnostics in the right place (issue 36, item 8).

usage: diagnostics.py BINLOGCTL FIXTURE_DIR

  * gtid_gap is not reported across a missing file (binlogctl-verify(1)): the relay chain without
    hx-relay.000008 (whose next file carries no Gtid_list of its own) gives the file_sequence_gap
    and no gtid_gap; the real gaps of the basic chain are still found right after a missing file.
  * a file made of concatenated binlogs (the relay chain twice, as `cat hx-relay.0* hx-relay.0*`):
    verify's text and JSON name the same location for every finding, the byte offset in the file
    as given (JSON: "file" and "offset" beside log_name and pos where the finding is in a later
    file of the input), never INPUT#N; a finding at position 0 of a later file is at its magic.
  * a file that cannot be looked at is not "file not found": a symbolic link loop (ELOOP; works
    as root) and, where permissions stop the test (not root, or root running the binary as
    nobody through setpriv), a file in a directory it may not search (EACCES): "cannot open:
    Permission denied", exit 2, no summary.
  * a --schema file with a statement that looks like DDL but defines nothing (CREATE TABL x ()
    is reported: a warning naming the file, line and offset; a mysqldump-like file gets none.
  * -d NAME that matches nothing warns, as --filter does for its rules; -d shop does not.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, stdin=subprocess.DEVNULL, **kw)


def jsonl(data):
    return [json.loads(x) for x in data.split(b"\n") if x.strip()]


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    relay = os.path.join(fixture, "relay", "binlogs")
    basic = os.path.join(fixture, "basic", "binlogs")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    tmp = tempfile.mkdtemp(prefix="binlogctl-diag-")
    try:
        # --- gtid_gap across a missing file ---------------------------------------------------
        d = os.path.join(tmp, "relay-hole")
        os.mkdir(d)
        for n in sorted(os.listdir(relay)):
            if n.startswith("hx-relay.0") and n != "hx-relay.000008":
                shutil.copyfile(os.path.join(relay, n), os.path.join(d, n))
        p = run(binary, "verify", "--format", "json", d)
        found = jsonl(p.stdout)
        checks = [x.get("check") for x in found if "check" in x]
        check(checks == ["file_sequence_gap"], f"relay chain without 000008: findings {checks} {p.stdout[:600]!r}")
        check(p.returncode == 1, f"relay chain without 000008: exit {p.returncode}")

        d = os.path.join(tmp, "basic-hole")
        os.mkdir(d)
        for n in sorted(os.listdir(basic)):
            if n.startswith("mariadb-bin.0") and n != "mariadb-bin.000004":
                shutil.copyfile(os.path.join(basic, n), os.path.join(d, n))
        p = run(binary, "verify", "--format", "json", d)
        gaps = [x for x in jsonl(p.stdout) if x.get("check") == "gtid_gap"]
        check(len(gaps) == 2 and all(g["log_name"] == "mariadb-bin.000005" for g in gaps),
              f"basic chain without 000004: the gaps of 000005 are still found: {gaps}")

        # --- concatenated input: text and JSON name the same place ------------------------------
        names = sorted(n for n in os.listdir(relay) if n.startswith("hx-relay.0"))
        big = os.path.join(tmp, "big.bin")
        data = b""
        for n in names + names:
            with open(os.path.join(relay, n), "rb") as f:
                data += f.read()
        with open(big, "wb") as f:
            f.write(data)
        t = run(binary, "verify", big)
        j = run(binary, "verify", "--format", "json", big)
        check(t.returncode == j.returncode == 1, f"big.bin: exit {t.returncode}/{j.returncode}")
        tlines = [x for x in t.stdout.decode().split("\n") if x and not x.startswith("summary:")]
        jlines = [x for x in jsonl(j.stdout) if "check" in x]
        check(len(tlines) == len(jlines) and len(jlines) >= len(names) - 1,
              f"big.bin: {len(tlines)} text findings, {len(jlines)} JSON findings")
        later = 0
        for tl, jf in zip(tlines, jlines):
            m = re.match(r"(.*?):(\d+): (error|warning): (\w+): ", tl)
            check(m is not None and "#" not in m.group(1), f"big.bin: text finding {tl!r}")
            if m is None:
                continue
            # (JSON's log_name is the file's base name; the text names it as given)
            file = jf["file"] if "file" in jf else os.path.join(os.path.dirname(m.group(1)), jf["log_name"])
            offset = jf.get("offset", jf["pos"])
            check((m.group(1), int(m.group(2)), m.group(4)) == (file, offset, jf["check"]),
                  f"big.bin: text {tl!r} and JSON {jf} name different places")
            if "offset" in jf:
                later += 1
                check(jf["file"] == big and jf["offset"] > jf["pos"], f"big.bin: JSON location {jf}")
                if jf["pos"] == 0:
                    check(data[jf["offset"]:jf["offset"] + 4] == b"\xfebin",
                          f"big.bin: {jf} is not at the start of a binlog in the input")
                else:
                    hdr = data[jf["offset"]:jf["offset"] + 19]
                    check(len(hdr) == 19 and int.from_bytes(hdr[9:13], "little") >= 19,
                          f"big.bin: {jf} is not at an event of the input")
        check(later >= len(names) - 1, f"big.bin: {later} findings located in the later files")

        # --- a file that cannot be looked at ----------------------------------------------------
        loop = os.path.join(tmp, "loop.000001")
        os.symlink("loop.000001", loop)
        for cmd in (["verify"], ["dump"], ["convert"]):
            p = run(binary, *cmd, loop)
            check(p.returncode == 2 and b"not found" not in p.stderr and b"cannot open: Too many levels" in p.stderr,
                  f"{cmd} LOOP: exit {p.returncode}: {p.stderr[:300]!r}")
            check(b"summary" not in p.stdout, f"{cmd} LOOP: output {p.stdout[:200]!r}")
        locked = os.path.join(tmp, "locked")
        os.mkdir(locked)
        shutil.copyfile(os.path.join(basic, "mariadb-bin.000001"), os.path.join(locked, "mariadb-bin.000001"))
        os.chmod(tmp, 0o755)
        os.chmod(locked, 0o700 if os.geteuid() == 0 else 0o000)
        prefix = []
        if os.geteuid() == 0:
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
            probe = subprocess.run(prefix + [binary, "--version"], capture_output=True)
            if probe.returncode != 0:
                print("SKIP: EACCES: cannot run the binary as nobody:", probe.stderr[:200])
                prefix = None
        if prefix is not None:
            target = os.path.join(locked, "mariadb-bin.000001")
            for cmd in (["verify"], ["dump"]):
                p = subprocess.run(prefix + [binary] + cmd + [target], capture_output=True, stdin=subprocess.DEVNULL)
                check(p.returncode == 2 and b"not found" not in p.stderr
                      and b"cannot open: Permission denied" in p.stderr,
                      f"{cmd} LOCKED/FILE: exit {p.returncode}: {p.stderr[:300]!r}")
                check(b"summary" not in p.stdout, f"{cmd} LOCKED/FILE: output {p.stdout[:200]!r}")
        os.chmod(locked, 0o755)

        # --- --schema: a statement that looks like DDL and defines nothing ------------------------
        f2 = os.path.join(basic, "mariadb-bin.000002")
        bad = os.path.join(tmp, "bad.sql")
        with open(bad, "w") as f:
            f.write("CREATE TABLE shop.ok (id int PRIMARY KEY);\n-- a typo:\nCREATE TABL x (\n  id int\n);\n")
        for cmd in (["convert"], ["convert", "--format", "sql"], ["schema"], ["stats"]):
            p = run(binary, *cmd, "--schema", bad, f2)
            check(p.returncode == 0, f"{cmd} --schema bad.sql: exit {p.returncode}: {p.stderr[:300]!r}")
            check(re.search(rb"bad\.sql: line 3, offset 54: warning: .*CREATE TABL x \(", p.stderr) is not None,
                  f"{cmd} --schema bad.sql: no warning naming the statement: {p.stderr[:400]!r}")
        good = os.path.join(tmp, "good.sql")
        with open(good, "w") as f:
            f.write("/*!40101 SET NAMES utf8mb4 */;\nDROP TABLE IF EXISTS `t`;\n/*!40101 SET character_set_client = utf8 */;\n"
                    "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB;\n"
                    "/*!40000 ALTER TABLE `t` DISABLE KEYS */;\nLOCK TABLES `t` WRITE;\nINSERT INTO `t` VALUES (1);\n"
                    "UNLOCK TABLES;\nCREATE DATABASE IF NOT EXISTS d2;\nCREATE INDEX i ON t (id);\n"
                    "DELIMITER ;;\n/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER tr BEFORE INSERT ON t "
                    "FOR EACH ROW SET NEW.id = NEW.id */;;\nDELIMITER ;\nCREATE OR REPLACE VIEW v AS SELECT 1;\n"
                    "CREATE TABLE IF NOT EXISTS `t` (`id` int);\n")
        p = run(binary, "convert", "--schema", good, f2)
        check(p.returncode == 0 and b"warning" not in p.stderr, f"convert --schema good.sql: {p.stderr[:400]!r}")

        # --- -d that matches nothing ------------------------------------------------------------
        for cmd in (["dump"], ["convert"], ["convert", "--format", "sql"], ["convert", "--format", "canal-json"]):
            p = run(binary, *cmd, "-d", "nosuchdb", f2)
            check(p.returncode == 0 and b"warning: -d/--database 'nosuchdb' matched nothing" in p.stderr,
                  f"{cmd} -d nosuchdb: exit {p.returncode}: {p.stderr[:300]!r}")
            p = run(binary, *cmd, "-d", "shop", f2)
            check(p.returncode == 0 and b"matched nothing" not in p.stderr,
                  f"{cmd} -d shop: exit {p.returncode}: {p.stderr[:300]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"diagnostics: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
