"""The MySQL/MariaDB wire, seen from the middle: a TCP proxy on 127.0.0.1 (dynamic port) that logs
every packet each way as readable text (direction, sequence id, command, COM_QUERY texts, result
sets decoded, hex of the other packets, binlog event headers decoded), for the serve captures
(serve_capture.py) and the serve tests (serve.py).

    p = LogProxy(target_port, "label"); p.start(); ... connect clients to p.port ...; p.close()
    p.text() -> the log so far

Plain TCP only (no TLS, no compression): the captures are made without either.
"""
import socket
import struct
import threading
import time
import zlib

COMMANDS = {0x01: "COM_QUIT", 0x02: "COM_INIT_DB", 0x03: "COM_QUERY", 0x04: "COM_FIELD_LIST", 0x0e: "COM_PING",
            0x12: "COM_BINLOG_DUMP", 0x15: "COM_REGISTER_SLAVE", 0x16: "COM_STMT_PREPARE", 0x17: "COM_STMT_EXECUTE",
            0x19: "COM_STMT_CLOSE", 0x1b: "COM_SET_OPTION", 0x1e: "COM_BINLOG_DUMP_GTID", 0x1f: "COM_RESET_CONNECTION"}

EVENTS = {0: "UNKNOWN", 2: "QUERY", 3: "STOP", 4: "ROTATE", 5: "INTVAR", 13: "RAND", 14: "USER_VAR",
          15: "FORMAT_DESCRIPTION", 16: "XID", 19: "TABLE_MAP", 23: "WRITE_ROWS_V1", 24: "UPDATE_ROWS_V1",
          25: "DELETE_ROWS_V1", 27: "HEARTBEAT", 29: "ROWS_QUERY", 30: "WRITE_ROWS", 31: "UPDATE_ROWS",
          32: "DELETE_ROWS", 33: "GTID(MySQL)", 35: "PREVIOUS_GTIDS", 38: "XA_PREPARE",
          160: "ANNOTATE_ROWS", 161: "BINLOG_CHECKPOINT", 162: "GTID", 163: "GTID_LIST",
          164: "START_ENCRYPTION", 165: "QUERY_COMPRESSED", 166: "WRITE_ROWS_COMPRESSED_V1",
          169: "WRITE_ROWS_COMPRESSED", 170: "UPDATE_ROWS_COMPRESSED", 171: "DELETE_ROWS_COMPRESSED"}

CAPS = {0x1: "LONG_PASSWORD", 0x2: "FOUND_ROWS", 0x4: "LONG_FLAG", 0x8: "CONNECT_WITH_DB", 0x10: "NO_SCHEMA",
        0x20: "COMPRESS", 0x40: "ODBC", 0x80: "LOCAL_FILES", 0x100: "IGNORE_SPACE", 0x200: "PROTOCOL_41",
        0x400: "INTERACTIVE", 0x800: "SSL", 0x1000: "IGNORE_SIGPIPE", 0x2000: "TRANSACTIONS", 0x4000: "RESERVED",
        0x8000: "SECURE_CONNECTION", 0x10000: "MULTI_STATEMENTS", 0x20000: "MULTI_RESULTS",
        0x40000: "PS_MULTI_RESULTS", 0x80000: "PLUGIN_AUTH", 0x100000: "CONNECT_ATTRS",
        0x200000: "PLUGIN_AUTH_LENENC_CLIENT_DATA", 0x400000: "CAN_HANDLE_EXPIRED_PASSWORDS",
        0x800000: "SESSION_TRACK", 0x1000000: "DEPRECATE_EOF", 0x2000000: "OPTIONAL_RESULTSET_METADATA",
        0x4000000: "ZSTD_COMPRESSION", 0x8000000: "QUERY_ATTRIBUTES", 0x20000000: "CAPABILITY_EXTENSION",
        0x40000000: "SSL_VERIFY_SERVER_CERT", 0x80000000: "REMEMBER_OPTIONS"}
MARIADB_CAPS = {0x1: "MARIADB_PROGRESS", 0x2: "MARIADB_COM_MULTI", 0x4: "MARIADB_STMT_BULK_OPERATIONS",
                0x8: "MARIADB_EXTENDED_TYPE_INFO", 0x10: "MARIADB_CACHE_METADATA"}


def caps_text(v, table=CAPS):
    return "|".join(name for bit, name in sorted(table.items()) if v & bit) or "0"


def hexdump(b, limit=None, indent="      "):
    shown = b if limit is None else b[:limit]
    lines = []
    for i in range(0, len(shown), 32):
        chunk = shown[i:i + 32]
        asc = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        lines.append(f"{indent}{i:06x}  {chunk.hex(' '):<95}  {asc}")
    if limit is not None and len(b) > limit:
        lines.append(f"{indent}... {len(b) - limit} more bytes")
    return "\n".join(lines)


def lenenc(b, i):
    """(value, next index) of a length-encoded integer at b[i] (None for NULL 0xfb)."""
    c = b[i]
    if c < 0xfb:
        return c, i + 1
    if c == 0xfb:
        return None, i + 1
    if c == 0xfc:
        return struct.unpack_from("<H", b, i + 1)[0], i + 3
    if c == 0xfd:
        return int.from_bytes(b[i + 1:i + 4], "little"), i + 4
    return struct.unpack_from("<Q", b, i + 1)[0], i + 9


def lenenc_str(b, i):
    n, i = lenenc(b, i)
    if n is None:
        return None, i
    return b[i:i + n], i + n


def ok_text(p):
    try:
        rows, i = lenenc(p, 1)
        last_id, i = lenenc(p, i)
        status, warnings = struct.unpack_from("<HH", p, i)
        rest = p[i + 4:]
        return f"OK affected_rows={rows} last_insert_id={last_id} status=0x{status:04x} warnings={warnings}" + \
            (f" info={rest!r}" if rest else "")
    except (IndexError, struct.error):
        return "OK (short)"


def err_text(p):
    code = struct.unpack_from("<H", p, 1)[0] if len(p) >= 3 else None
    if len(p) >= 9 and p[3:4] == b"#":
        return f"ERR {code} [{p[4:9].decode(errors='replace')}] {p[9:].decode(errors='replace')!r}"
    if code == 0xffff and len(p) >= 5:  # progress report (MariaDB)
        return f"ERR 65535 (progress) {p[3:].hex()}"
    return f"ERR {code} {p[3:].decode(errors='replace')!r}"


def event_text(ev):
    """One binlog event (without the 0x00 OK byte): its header and a few body fields."""
    if len(ev) < 19:
        return f"short event ({len(ev)} bytes)"
    ts, typ, sid, size, pos, flags = struct.unpack_from("<IBIIIH", ev, 0)
    name = EVENTS.get(typ, f"type{typ}")
    fl = []
    if flags & 0x1:
        fl.append("IN_USE")
    if flags & 0x20:
        fl.append("ARTIFICIAL")
    if flags & 0x40:
        fl.append("RELAY_LOG")
    if flags & 0x4:
        fl.append("THREAD_SPECIFIC")
    if flags & 0x8:
        fl.append("SUPPRESS_USE")
    if flags & 0x80:
        fl.append("IGNORABLE")
    if flags & 0x100:
        fl.append("NO_FILTER")
    if flags & 0x200:
        fl.append("MTS_ISOLATE")
    if flags & 0x800:
        fl.append("SKIP_REPLICATION")
    crc = ""
    body_end = len(ev)
    if len(ev) >= 23:
        stored = struct.unpack_from("<I", ev, len(ev) - 4)[0]
        if zlib.crc32(ev[:-4]) & 0xffffffff == stored:
            crc, body_end = " crc32=ok", len(ev) - 4
        elif typ == 15:  # the FDE's CRC is computed with IN_USE cleared
            fixed = ev[:20] + bytes([ev[20] & ~1]) + ev[21:-4]
            if zlib.crc32(fixed) & 0xffffffff == stored:
                crc, body_end = " crc32=ok(in-use cleared)", len(ev) - 4
    if crc == "" and typ != 15:
        crc = " (no checksum)"
    head = (f"EVENT {name}({typ}) ts={ts} server_id={sid} size={size}{'' if size == len(ev) else '!=' + str(len(ev))} "
            f"log_pos={pos} flags=0x{flags:x}{'[' + ','.join(fl) + ']' if fl else ''}{crc}")
    body = ev[19:body_end]
    try:
        if typ == 4:
            p = struct.unpack_from("<Q", body, 0)[0]
            head += f" -> {body[8:].decode(errors='replace')!r} @{p}"
        elif typ == 27:
            head += f" file={body.decode(errors='replace')!r}"
        elif typ == 15:
            ver = body[2:52].rstrip(b"\0").decode(errors="replace")
            alg = ev[-5] if crc else body[-1]
            head += f" binlog_version={struct.unpack_from('<H', body, 0)[0]} server_version={ver!r} " \
                    f"created={struct.unpack_from('<I', body, 52)[0]} header_len={body[56]} checksum_alg={alg}"
        elif typ == 162:
            seq, dom, f2 = struct.unpack_from("<QIB", body, 0)
            head += f" gtid={dom}-{sid}-{seq} flags2=0x{f2:02x}"
            if f2 & 0x40 or f2 & 0x80:  # XA: format id, gtrid/bqual lengths and data
                head += f" (xa) {body[13:].hex()}"
            elif f2 & 0x02 and len(body) >= 21:
                head += f" commit_id={struct.unpack_from('<Q', body, 13)[0]}"
        elif typ == 163:
            n = struct.unpack_from("<I", body, 0)[0]
            cnt = n & 0x0fffffff
            gl = []
            for k in range(min(cnt, 64)):
                d, s, q = struct.unpack_from("<IIQ", body, 4 + 16 * k)
                gl.append(f"{d}-{s}-{q}")
            head += f" count={cnt} flags={n >> 28} [{','.join(gl)}]"
        elif typ == 161:
            n = struct.unpack_from("<I", body, 0)[0]
            head += f" file={body[4:4 + n].decode(errors='replace')!r}"
        elif typ == 2 or typ == 165:
            thread, exec_time, dblen, err, svlen = struct.unpack_from("<IIBHH", body, 0)
            db = body[13 + svlen:13 + svlen + dblen].decode(errors="replace")
            q = body[13 + svlen + dblen + 1:]
            head += f" db={db!r} " + (f"query={q.decode(errors='replace')!r}" if typ == 2 else "(compressed)")
        elif typ == 16:
            head += f" xid={struct.unpack_from('<Q', body, 0)[0]}"
        elif typ == 160:
            head += f" annotate={body.decode(errors='replace')!r}"
        elif typ == 19:
            tid = int.from_bytes(body[0:6], "little")
            dl = body[8]
            db = body[9:9 + dl].decode(errors="replace")
            tl = body[10 + dl]
            tb = body[11 + dl:11 + dl + tl].decode(errors="replace")
            head += f" table_id={tid} {db}.{tb}"
        elif typ in (23, 24, 25, 30, 31, 32):
            head += f" table_id={int.from_bytes(body[0:6], 'little')} flags=0x{struct.unpack_from('<H', body, 6)[0]:x}"
    except (struct.error, IndexError):
        head += " (body short)"
    return head


class Conn:
    """The decoder's state for one client connection."""

    def __init__(self, n):
        self.n = n
        self.client_caps = 0
        self.ext_caps = 0  # MariaDB extended capabilities both sides have (greeting AND response)
        self.server_ext = 0
        self.handshake_seen = False
        self.response_seen = False
        self.authed = False
        self.last_cmd = None
        self.rs = None  # result set state: [columns left, phase]
        self.dump = False
        self.events = 0


class LogProxy(threading.Thread):
    """A logging TCP proxy to 127.0.0.1:target. event_hex: bytes of hex shown per binlog event
    (None: all of it); hex_limit: per other packet."""

    def __init__(self, target, label="", event_hex=160, hex_limit=2048):
        super().__init__(daemon=True)
        self.lsn = socket.socket()
        self.lsn.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsn.bind(("127.0.0.1", 0))
        self.lsn.listen(16)
        self.port = self.lsn.getsockname()[1]
        self.target, self.label = target, label
        self.event_hex, self.hex_limit = event_hex, hex_limit
        self.lines = []
        self.lock = threading.Lock()
        self.t0 = time.time()
        self.nconn = 0
        self.socks = []
        self.closed = False

    def log(self, line):
        with self.lock:
            self.lines.append(line)

    def text(self):
        with self.lock:
            return "\n".join(self.lines) + "\n"

    def run(self):
        while True:
            try:
                c, addr = self.lsn.accept()
            except OSError:
                return
            self.nconn += 1
            conn = Conn(self.nconn)
            try:
                s = socket.create_connection(("127.0.0.1", self.target))
            except OSError as e:
                self.log(f"{self.stamp()} conn {conn.n}: connect to the server failed: {e}")
                c.close()
                continue
            self.socks += [c, s]
            self.log(f"{self.stamp()} conn {conn.n}: opened")
            threading.Thread(target=self.pump, args=(c, s, conn, True), daemon=True).start()
            threading.Thread(target=self.pump, args=(s, c, conn, False), daemon=True).start()

    def stamp(self):
        return f"{time.time() - self.t0:8.3f}"

    def pump(self, src, dst, conn, from_client):
        buf = b""
        logical = b""
        try:
            while True:
                data = src.recv(1 << 16)
                if not data:
                    break
                buf += data
                while len(buf) >= 4:
                    n = int.from_bytes(buf[0:3], "little")
                    if len(buf) < 4 + n:
                        break
                    seq, payload = buf[3], buf[4:4 + n]
                    buf = buf[4 + n:]
                    logical += payload
                    if n == 0xffffff:
                        continue
                    self.packet(conn, from_client, seq, logical)
                    logical = b""
                dst.sendall(data)  # after logging: a reply is never logged before its request
        except OSError:
            pass
        finally:
            self.log(f"{self.stamp()} conn {conn.n}: {'client' if from_client else 'server'} closed"
                     + (f" ({len(buf)} bytes of a partial packet left)" if buf else ""))
            for x in (src, dst):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def packet(self, conn, from_client, seq, p):
        d = "C>S" if from_client else "S>C"
        pre = f"{self.stamp()} conn {conn.n} {d} seq={seq} len={len(p)}"
        try:
            text, show_hex = self.describe(conn, from_client, p)
        except Exception as e:  # a decoder bug must not stop the proxy
            text, show_hex = f"(undecoded: {e})", self.hex_limit
        line = f"{pre} {text}"
        if show_hex != 0 and p:
            line += "\n" + hexdump(p, show_hex)
        self.log(line)

    def describe(self, conn, from_client, p):
        if from_client:
            if not conn.response_seen:
                conn.response_seen = True
                return self.handshake_response(conn, p), self.hex_limit
            if not conn.authed:
                return "auth continuation", self.hex_limit
            cmd = p[0] if p else None
            name = COMMANDS.get(cmd, f"command 0x{cmd:02x}" if cmd is not None else "empty")
            conn.last_cmd = cmd
            conn.rs = None
            if cmd == 0x03:
                return f"COM_QUERY {p[1:].decode(errors='replace')!r}", 0
            if cmd == 0x12:
                pos, flags, sid = struct.unpack_from("<IHI", p, 1)
                conn.dump = True
                return (f"COM_BINLOG_DUMP pos={pos} flags=0x{flags:x}{'(NON_BLOCK)' if flags & 1 else ''} "
                        f"server_id={sid} file={p[11:].decode(errors='replace')!r}"), self.hex_limit
            if cmd == 0x15:
                sid = struct.unpack_from("<I", p, 1)[0]
                i = 5
                parts = []
                for _ in range(3):
                    ln = p[i]
                    parts.append(p[i + 1:i + 1 + ln])
                    i += 1 + ln
                port, rank, mid = struct.unpack_from("<HII", p, i)
                return (f"COM_REGISTER_SLAVE server_id={sid} host={parts[0]!r} user={parts[1]!r} "
                        f"password=({len(parts[2])} bytes) port={port} rank={rank} master_id={mid}"), self.hex_limit
            if cmd == 0x1e:
                conn.dump = True
                return "COM_BINLOG_DUMP_GTID", self.hex_limit
            if cmd == 0x02:
                return f"COM_INIT_DB {p[1:]!r}", 0
            return name, self.hex_limit
        # from the server
        if not conn.handshake_seen:
            conn.handshake_seen = True
            return self.handshake(conn, p), self.hex_limit
        if not conn.authed:
            if p[:1] == b"\x00":
                conn.authed = True
                return "auth " + ok_text(p), self.hex_limit
            if p[:1] == b"\xff":
                return "auth " + err_text(p), self.hex_limit
            if p[:1] == b"\xfe":
                end = p.find(b"\0", 1)
                return f"AuthSwitchRequest plugin={p[1:end]!r}", self.hex_limit
            return "auth more data", self.hex_limit
        if conn.dump:
            if p[:1] == b"\x00" and len(p) >= 20:
                conn.events += 1
                return event_text(p[1:]), (None if len(p) <= 320 else self.event_hex)
            if p[:1] == b"\xfe" and len(p) < 9:
                conn.dump = False
                return "EOF (end of the dump)", self.hex_limit
            if p[:1] == b"\xff":
                conn.dump = False
                return err_text(p), self.hex_limit
            return "dump packet?", self.hex_limit
        return self.response(conn, p), self.hex_limit

    def handshake(self, conn, p):
        if p[:1] == b"\xff":
            return "greeting " + err_text(p)
        proto = p[0]
        end = p.index(b"\0", 1)
        ver = p[1:end].decode(errors="replace")
        i = end + 1
        cid = struct.unpack_from("<I", p, i)[0]
        i += 4 + 8 + 1
        caps_lo = struct.unpack_from("<H", p, i)[0]
        cs, status, caps_hi, auth_len = struct.unpack_from("<BHHB", p, i + 2)
        ext = struct.unpack_from("<I", p, i + 2 + 1 + 2 + 2 + 1 + 6)[0]
        caps = caps_lo | caps_hi << 16
        conn.server_ext = ext if not caps & 1 else 0
        tail = p[i + 2 + 1 + 2 + 2 + 1 + 10:]
        s2 = max(13, auth_len - 8)
        plugin = tail[s2:].rstrip(b"\0").decode(errors="replace")
        return (f"HandshakeV10 protocol={proto} version={ver!r} connection_id={cid} charset={cs} "
                f"status=0x{status:04x} auth_data_len={auth_len} plugin={plugin!r}\n      caps=0x{caps:08x} "
                f"{caps_text(caps)}\n      mariadb_ext_caps=0x{ext:08x} "
                f"{caps_text(ext, MARIADB_CAPS) if not caps & 1 else '(unused: LONG_PASSWORD set)'}")

    def handshake_response(self, conn, p):
        caps, maxp, cs = struct.unpack_from("<IIB", p, 0)
        conn.client_caps = caps
        if len(p) == 32:
            return f"SSLRequest caps=0x{caps:08x}"
        ext = struct.unpack_from("<I", p, 28)[0]
        conn.ext_caps = ext & conn.server_ext if not caps & 1 else 0
        i = 32
        end = p.index(b"\0", i)
        user = p[i:end].decode(errors="replace")
        i = end + 1
        if caps & 0x200000:
            n, i = lenenc(p, i)
        else:
            n, i = p[i], i + 1
        auth = p[i:i + n]
        i += n
        db = ""
        if caps & 0x8:
            end = p.index(b"\0", i)
            db = p[i:end].decode(errors="replace")
            i = end + 1
        plugin = ""
        if caps & 0x80000:
            end = p.find(b"\0", i)
            end = len(p) if end < 0 else end
            plugin = p[i:end].decode(errors="replace")
            i = end + 1
        attrs = []
        if caps & 0x100000 and i < len(p):
            total, i = lenenc(p, i)
            stop = i + total
            while i < stop:
                k, i = lenenc_str(p, i)
                v, i = lenenc_str(p, i)
                attrs.append(f"{k.decode(errors='replace')}={v.decode(errors='replace')}")
        return (f"HandshakeResponse41 user={user!r} auth_response=({len(auth)} bytes) db={db!r} plugin={plugin!r} "
                f"charset={cs} max_packet={maxp}\n      caps=0x{caps:08x} {caps_text(caps)}\n      "
                f"mariadb_ext_caps=0x{ext:08x}\n      attrs: {' '.join(attrs)}")

    def response(self, conn, p):
        deprecate_eof = conn.client_caps & 0x1000000
        if conn.rs is None:
            if p[:1] == b"\x00":
                return ok_text(p)
            if p[:1] == b"\xff":
                return err_text(p)
            if p[:1] == b"\xfb":
                return "LOCAL INFILE request"
            n, i = lenenc(p, 0)
            conn.rs = [n, "cols"]
            if conn.ext_caps & 0x10 and i < len(p):  # MARIADB_CLIENT_CACHE_METADATA: a metadata-follows byte
                return f"result set: {n} column(s), metadata follows={p[i]}"
            return f"result set: {n} column(s)"
        left, phase = conn.rs
        if phase == "cols":
            cat, i = lenenc_str(p, 0)
            schema, i = lenenc_str(p, i)
            table, i = lenenc_str(p, i)
            otable, i = lenenc_str(p, i)
            name, i = lenenc_str(p, i)
            oname, i = lenenc_str(p, i)
            extmeta = b""
            if conn.ext_caps & 0x8:  # MARIADB_CLIENT_EXTENDED_TYPE_INFO: extended metadata
                extmeta, i = lenenc_str(p, i)
            fixed, i = lenenc(p, i)
            cs, length, typ, flags, dec = struct.unpack_from("<HIBHB", p, i)
            conn.rs[0] -= 1
            if conn.rs[0] == 0:
                conn.rs[1] = "rows" if deprecate_eof else "eof1"
            return (f"  column {name!r} (schema={schema!r} table={table!r} org={oname!r}) type={typ} "
                    f"charset={cs} length={length} flags=0x{flags:x} decimals={dec}"
                    + (f" extended_metadata={extmeta!r}" if extmeta else ""))
        if phase == "eof1":
            conn.rs[1] = "rows"
            return "  EOF (end of columns) " + p.hex()
        if p[:1] == b"\xfe" and len(p) < 0xffffff and (len(p) < 9 or deprecate_eof):
            conn.rs = None
            return ("  OK/EOF (end of rows) " if deprecate_eof else "  EOF (end of rows) ") + p.hex()
        if p[:1] == b"\xff":
            conn.rs = None
            return "  " + err_text(p)
        vals, i = [], 0
        while i < len(p):
            v, i = lenenc_str(p, i)
            vals.append(None if v is None else v.decode(errors="replace"))
        return f"  row {vals!r}"

    def close(self):
        self.closed = True
        try:
            self.lsn.close()
        except OSError:
            pass
        for x in self.socks:
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
