#!/usr/bin/env python3
"""Encrypted MySQL 8.0.14+ binlogs (issue 34 item 4): binlog_encryption=ON read offline with
the server's keyring_file data file (--keyring-file).

usage: encrypted_mysql.py BINLOGCTL

No MySQL server exists here: the input is the one real encrypted file there is
(testdata/mysql-8-encrypted: written by MySQL 8.0.22, with its keyring and its clear text, from
LianjiaTech/lightning's test suite). The encrypted file and the clear file are put in two
directories under the same name, and for dump (table, json --decode --hexdump), verify (text,
json), convert --format json and stats the output on the encrypted file with --keyring-file
equals the output on the clear file, byte for byte, exit status 0.

Errors, exit status 1 with the file, offset and key id: no --keyring-file (unsupported_format,
saying to give --keyring-file), a keyring without the file's master key, a wrong master key
(decryption_failed), a header cut short, a flipped bit in an event (checksum_mismatch at the
clear file's offset, convert prints nothing of that event); a keyring file that is damaged or
absent, or --keyring-file with -R: exit 2 (a usage error, as for --key-file). Last, serve
--keyring-file on the encrypted file (unix socket): dump -R and verify -R read from it what they
read in the clear file.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "testdata", "mysql-8-encrypted")
NAME = "binlog.000221"
KEY_ID = "MySQLReplicationKey_cfe557b7-766c-11eb-afbf-3cfdfed34198_2"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, cwd=None):
    r = subprocess.run([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def keyring_v1(kr):
    """The keyring as version 1.0 (no digest), so that its keys can be changed."""
    b = bytearray(kr[:-32])
    b[21] = ord("1")
    return b


def serve(tmp, enc_dir, clear_dir, ring):
    """serve --keyring-file on the encrypted file: binlogctl -R reads from it what the clear file
    holds (its positions), byte for byte. Skipped when this binlogctl has no serve or no -R."""
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode != 0 or \
            subprocess.run([BIN, "dump", "--help"], capture_output=True, text=True).stdout.find("--socket") < 0:
        print("serve: skipped (no serve or no -R in this build)")
        return
    sock = os.path.join(tmp, "serve.sock")
    p = subprocess.Popen([BIN, "serve", "--socket", sock, "--user", "repl", "--password=pw"] + ring + [enc_dir + "/"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        remote = ["-R", "--socket", sock, "--user", "repl", "--password=pw", NAME]
        for v in (["dump"], ["dump", "--format", "json", "--hexdump"], ["verify"]):
            rc1, want, _ = run(v + [NAME], cwd=clear_dir)
            rc2, got, err = run(v + remote)
            check(rc1 == 0 and rc2 == 0 and got == want, f"serve --keyring-file, {' '.join(v)} -R: exit {rc2}, "
                                                          f"{len(got)} vs {len(want)} bytes: {got[-300:]!r} {err[-300:]}")
    finally:
        p.terminate()
        p.wait(timeout=10)


def main():
    tmp = tempfile.mkdtemp(prefix="binlogctl-mysqlenc-")
    try:
        enc_dir = os.path.join(tmp, "enc")
        clear_dir = os.path.join(tmp, "clear")
        os.makedirs(enc_dir)
        os.makedirs(clear_dir)
        enc = open(os.path.join(DATA, "binlog.encrypted"), "rb").read()
        shutil.copy(os.path.join(DATA, "binlog.encrypted"), os.path.join(enc_dir, NAME))
        shutil.copy(os.path.join(DATA, "binlog.decrypted"), os.path.join(clear_dir, NAME))
        keyring = os.path.join(DATA, "keyring")
        kr = open(keyring, "rb").read()
        ring = ["--keyring-file", keyring]

        views = [["dump"], ["dump", "--format", "json", "--decode", "--hexdump"], ["verify"],
                 ["verify", "--format", "json"], ["convert", "--format", "json"], ["stats"],
                 ["stats", "--format", "json"]]
        for v in views:
            rc1, want, err1 = run(v + [NAME], cwd=clear_dir)
            rc2, got, err2 = run(v + ring + [NAME], cwd=enc_dir)
            check(rc1 == 0 and rc2 == 0, f"{' '.join(v)}: exit {rc1} on the clear file, {rc2} with --keyring-file: {err1[-300:]} {err2[-300:]}")
            check(want and got == want, f"{' '.join(v)}: --keyring-file output differs from the clear file's "
                                        f"({len(got)} vs {len(want)} bytes): {got[-400:]!r}")
        # The positions are the clear stream's, as the server shows them: the Rotate at 609.
        rc, out, _ = run(["dump"] + ring + [NAME], cwd=enc_dir)
        check(b"609" in out and b"mysql-bin.000222" in out, f"dump: the Rotate at 609: {out[-300:]!r}")
        # A key file of MariaDB's format alongside: still read with the keyring.
        mkeys = os.path.join(tmp, "keys.txt")
        open(mkeys, "w").write("1;00112233445566778899aabbccddeeff\n")
        rc, out, err = run(["verify", "--key-file", mkeys] + ring + [NAME], cwd=enc_dir)
        check(rc == 0, f"verify --key-file --keyring-file: exit {rc}: {out[-300:]!r} {err[-300:]}")

        # No keyring: the refusal says what to give.
        rc, out, _ = run(["verify", NAME], cwd=enc_dir)
        check(rc == 1 and b"unsupported_format" in out and b"--keyring-file" in out, f"no keyring: exit {rc}: {out!r}")
        rc, out, err = run(["verify", "--key-file", mkeys, NAME], cwd=enc_dir)
        check(rc == 1 and b"decryption_failed" in out and b"--keyring-file" in out and KEY_ID.encode() in out,
              f"--key-file alone: exit {rc}: {out!r}")

        # A keyring without the file's master key (its id changed): the key id and the keyring named.
        other = os.path.join(tmp, "other-keyring")
        b = keyring_v1(kr)
        b[0xb8 + 57] = ord("7")
        open(other, "wb").write(b)
        rc, out, _ = run(["verify", "--keyring-file", other, NAME], cwd=enc_dir)
        check(rc == 1 and out.startswith(f"{NAME}:0: error: decryption_failed:".encode()) and KEY_ID.encode() in out
              and b"is not in the keyring" in out and other.encode() in out, f"key id not in the keyring: exit {rc}: {out!r}")
        # A wrong master key (one bit): the stream's magic number does not come out.
        wrong = os.path.join(tmp, "wrong-keyring")
        b = keyring_v1(kr)
        b[0xf5] ^= 1
        open(wrong, "wb").write(b)
        rc, out, err = run(["convert", "--format", "json", "--keyring-file", wrong, NAME], cwd=enc_dir)
        check(rc == 1 and out == b"" and "decryption_failed" in err and "encrypted-file offset 512" in err and KEY_ID in err
              and wrong in err, f"wrong key: exit {rc}, {len(out)} bytes out: {err!r}")

        # The header cut short, and a bit flipped in an event of the stream.
        cut = os.path.join(tmp, "cut", NAME)
        os.makedirs(os.path.dirname(cut))
        open(cut, "wb").write(enc[:300])
        rc, out, _ = run(["verify"] + ring + [cut])
        check(rc == 1 and b"decryption_failed" in out and b"inside its 512-byte encryption header" in out,
              f"header cut short: exit {rc}: {out!r}")
        flip = os.path.join(tmp, "flip", NAME)
        os.makedirs(os.path.dirname(flip))
        b = bytearray(enc)
        b[512 + 330] ^= 1  # inside the Query event at 313 (CREATE DATABASE)
        open(flip, "wb").write(b)
        rc, out, _ = run(["verify"] + ring + [flip])
        check(rc == 1 and f"{flip}:313: error: checksum_mismatch".encode() in out, f"flipped bit: exit {rc}: {out!r}")
        rc, out, err = run(["convert", "--format", "json"] + ring + [flip])
        check(rc == 1 and b"create database" not in out, f"convert of the flipped file: exit {rc}: {out!r}")

        # A damaged keyring (digest), an absent one, and --keyring-file with -R: usage errors.
        bad = os.path.join(tmp, "bad-keyring")
        b = bytearray(kr)
        b[0x100] ^= 1
        open(bad, "wb").write(b)
        rc, out, err = run(["verify", "--keyring-file", bad, NAME], cwd=enc_dir)
        check(rc == 2 and bad in err and "offset 411" in err and "digest" in err, f"damaged keyring: exit {rc}: {err!r}")
        rc, out, err = run(["verify", "--keyring-file", os.path.join(tmp, "absent"), NAME], cwd=enc_dir)
        check(rc == 2 and "absent" in err, f"absent keyring: exit {rc}: {err!r}")
        rc, out, err = run(["verify", "-R", "--keyring-file", keyring])
        check(rc == 2 and "--keyring-file" in err, f"-R --keyring-file: exit {rc}: {err!r}")
        # The key file is read, never printed: no byte of the master key in any output.
        master = bytes(x ^ ord("*305=Ljt0*!@$Hnm(*-9-w;:"[i % 24]) for i, x in enumerate(kr[0xf5:0xf5 + 32]))
        for v in views[:3]:
            rc, out, err = run(v + ring + [NAME], cwd=enc_dir)
            check(master.hex().encode() not in out.lower() and master not in out, f"{v}: the master key is printed")
        serve(tmp, enc_dir, clear_dir, ring)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)
    print("encrypted_mysql: all checks passed")


if __name__ == "__main__":
    main()
