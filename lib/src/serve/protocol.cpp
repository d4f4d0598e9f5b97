// Packet codecs of the server side of the client/server protocol (layouts in serve.h). Every read
// goes through ByteReader; no length field drives an allocation larger than the packet.
#include <binlogctl/gtid.h>

#include "serve/serve_protocol.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>

namespace binlogctl {

namespace serve_proto {

namespace {

void put_u16(std::vector<std::uint8_t>& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}
void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_str(std::vector<std::uint8_t>& out, std::string_view s) { out.insert(out.end(), s.begin(), s.end()); }

// A NUL-terminated string inside the reader's bytes (the NUL consumed), or fail.
std::string_view read_cstr(ByteReader& r, const char* what) {
  const Bytes rest = r.data().subspan(r.position());
  if (!r.ok()) return {};
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(rest.data(), 0, rest.size()));
  if (nul == nullptr) {
    r.fail(Errc::truncated, what);
    return {};
  }
  std::string_view s = r.str(static_cast<std::size_t>(nul - rest.data()));
  r.skip(1);
  return s;
}

}  // namespace

std::string handshake_version(std::string_view server_version, bool mariadb) {
  std::string v(server_version);
  if (v.empty()) v = mariadb ? "10.0.0-MariaDB" : "5.7.0";
  // MariaDB 10+: RPL_VERSION_HACK, so that clients which compare major versions see 5.5.5.
  if (mariadb && !v.starts_with("5.5.5-") && !v.empty() && v[0] >= '1' && v[0] <= '9' && v.size() > 1 &&
      v[1] >= '0' && v[1] <= '9')
    v = "5.5.5-" + v;
  return v;
}

std::array<std::uint8_t, 20> make_scramble() {
  std::array<std::uint8_t, 20> s{};
  if (RAND_bytes(s.data(), static_cast<int>(s.size())) != 1) throw std::runtime_error("RAND_bytes failed");
  for (auto& c : s) c = static_cast<std::uint8_t>(33 + c % 94);  // printable, no NUL
  return s;
}

void encode_handshake(const Handshake& h, std::vector<std::uint8_t>& out) {
  out.push_back(10);
  put_str(out, h.server_version);
  out.push_back(0);
  put_u32(out, h.connection_id);
  out.insert(out.end(), h.scramble.begin(), h.scramble.begin() + 8);
  out.push_back(0);
  put_u16(out, static_cast<std::uint16_t>(h.capabilities & 0xffff));
  out.push_back(h.charset);
  put_u16(out, h.status);
  put_u16(out, static_cast<std::uint16_t>(h.capabilities >> 16));
  out.push_back(21);
  out.insert(out.end(), 10, 0);
  out.insert(out.end(), h.scramble.begin() + 8, h.scramble.end());
  out.push_back(0);
  put_str(out, kNativePlugin);
  out.push_back(0);
}

Result<HandshakeResponse> decode_handshake_response(Bytes payload) {
  ByteReader r(payload);
  HandshakeResponse h;
  h.capabilities = r.u32();
  if (!r.ok()) return DecodeError{Errc::truncated, 0, "handshake response shorter than 4 bytes"};
  if ((h.capabilities & kClientProtocol41) == 0)
    return DecodeError{Errc::unsupported_format, 0, "client without CLIENT_PROTOCOL_41 (pre-4.1 protocol)"};
  h.max_packet = r.u32();
  h.charset = r.u8();
  r.skip(23);
  if (!r.ok()) return DecodeError{Errc::truncated, r.offset(), "handshake response shorter than 32 bytes"};
  if (r.empty()) {
    if ((h.capabilities & kClientSsl) == 0)
      return DecodeError{Errc::truncated, r.offset(), "handshake response without a user name"};
    h.ssl_request = true;
    return h;
  }
  h.user = read_cstr(r, "user name not terminated");
  if (h.capabilities & kClientPluginAuthLenencData) {
    h.auth_response = r.bytes(r.packed_len());
  } else if (h.capabilities & kClientSecureConnection) {
    h.auth_response = r.bytes(r.u8());
  } else {
    std::string_view s = read_cstr(r, "auth response not terminated");
    h.auth_response = Bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  }
  if (!r.ok()) return r.error();
  if ((h.capabilities & kClientConnectWithDb) && !r.empty()) h.database = read_cstr(r, "database name not terminated");
  if ((h.capabilities & kClientPluginAuth) && !r.empty()) {
    // Some clients end the plugin name with the packet instead of a NUL.
    const Bytes rest = r.data().subspan(r.position());
    if (std::memchr(rest.data(), 0, rest.size()) != nullptr)
      h.plugin = read_cstr(r, "plugin name not terminated");
    else
      h.plugin = r.str(r.remaining());
  }
  if (!r.ok()) return r.error();
  return h;  // connection attributes (CLIENT_CONNECT_ATTRS) are not needed: ignored
}

void encode_auth_switch(std::string_view plugin, const std::array<std::uint8_t, 20>& scramble,
                        std::vector<std::uint8_t>& out) {
  out.push_back(0xfe);
  put_str(out, plugin);
  out.push_back(0);
  out.insert(out.end(), scramble.begin(), scramble.end());
  out.push_back(0);
}

std::array<std::uint8_t, 20> sha1(Bytes data) {
  std::array<std::uint8_t, 20> d{};
  SHA1(data.data(), data.size(), d.data());
  return d;
}

namespace {
std::array<std::uint8_t, 20> sha1_two(const std::array<std::uint8_t, 20>& a, const std::array<std::uint8_t, 20>& b) {
  std::array<std::uint8_t, 40> buf{};
  std::copy(a.begin(), a.end(), buf.begin());
  std::copy(b.begin(), b.end(), buf.begin() + 20);
  return sha1(buf);
}
}  // namespace

bool check_native_password(const std::array<std::uint8_t, 20>& scramble, Bytes response,
                           const std::array<std::uint8_t, 20>& stage2) {
  if (response.size() != 20) return false;
  const std::array<std::uint8_t, 20> mask = sha1_two(scramble, stage2);
  std::array<std::uint8_t, 20> stage1{};
  for (std::size_t i = 0; i < 20; ++i) stage1[i] = response[i] ^ mask[i];
  const std::array<std::uint8_t, 20> candidate = sha1(stage1);
  return CRYPTO_memcmp(candidate.data(), stage2.data(), 20) == 0;
}

std::array<std::uint8_t, 20> native_password_response(const std::array<std::uint8_t, 20>& scramble,
                                                      std::string_view password) {
  const std::array<std::uint8_t, 20> stage1 =
      sha1(Bytes(reinterpret_cast<const std::uint8_t*>(password.data()), password.size()));
  const std::array<std::uint8_t, 20> stage2 = sha1(stage1);
  const std::array<std::uint8_t, 20> mask = sha1_two(scramble, stage2);
  std::array<std::uint8_t, 20> out{};
  for (std::size_t i = 0; i < 20; ++i) out[i] = stage1[i] ^ mask[i];
  return out;
}

void put_lenenc_int(std::vector<std::uint8_t>& out, std::uint64_t v) {
  if (v < 251) {
    out.push_back(static_cast<std::uint8_t>(v));
  } else if (v < 0x10000) {
    out.push_back(0xfc);
    put_u16(out, static_cast<std::uint16_t>(v));
  } else if (v < 0x1000000) {
    out.push_back(0xfd);
    for (int i = 0; i < 3; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  } else {
    out.push_back(0xfe);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
}

void put_lenenc_str(std::vector<std::uint8_t>& out, std::string_view s) {
  put_lenenc_int(out, s.size());
  put_str(out, s);
}

void encode_ok(std::vector<std::uint8_t>& out, std::uint64_t affected, std::uint8_t header, std::uint16_t status) {
  out.push_back(header);
  put_lenenc_int(out, affected);
  put_lenenc_int(out, 0);
  put_u16(out, status);
  put_u16(out, 0);
}

void encode_eof(std::vector<std::uint8_t>& out, std::uint16_t status) {
  out.push_back(0xfe);
  put_u16(out, 0);
  put_u16(out, status);
}

void encode_err(std::vector<std::uint8_t>& out, ServerError e, std::string_view message) {
  out.push_back(0xff);
  put_u16(out, e.code);
  out.push_back('#');
  put_str(out, std::string_view(e.sqlstate, 5));
  put_str(out, message.substr(0, 512));
}

std::vector<std::vector<std::uint8_t>> encode_result_set(const ResultSet& rs, bool deprecate_eof) {
  std::vector<std::vector<std::uint8_t>> packets;
  packets.emplace_back();
  put_lenenc_int(packets.back(), rs.columns.size());
  for (const Column& c : rs.columns) {
    std::vector<std::uint8_t>& p = packets.emplace_back();
    put_lenenc_str(p, "def");
    put_lenenc_str(p, "");  // schema
    put_lenenc_str(p, "");  // table
    put_lenenc_str(p, "");  // org_table
    put_lenenc_str(p, c.name);
    put_lenenc_str(p, "");  // org_name
    p.push_back(0x0c);
    put_u16(p, c.numeric ? kCharsetBinary : kCharsetUtf8mb4);
    put_u32(p, c.numeric ? 21 : 1024);          // column length
    p.push_back(c.numeric ? 0x08 : 0xfd);       // MYSQL_TYPE_LONGLONG / MYSQL_TYPE_VAR_STRING
    put_u16(p, c.numeric ? 0x0080 | 0x0020 : 0);  // BINARY_FLAG | UNSIGNED_FLAG
    p.push_back(c.numeric ? 0 : 0x27);           // decimals: 39 = NOT_FIXED_DEC for strings
    put_u16(p, 0);
  }
  if (!deprecate_eof) encode_eof(packets.emplace_back());
  for (const auto& row : rs.rows) {
    std::vector<std::uint8_t>& p = packets.emplace_back();
    for (const auto& v : row) {
      if (v)
        put_lenenc_str(p, *v);
      else
        p.push_back(0xfb);
    }
  }
  if (deprecate_eof)
    encode_ok(packets.emplace_back(), 0, 0xfe);
  else
    encode_eof(packets.emplace_back());
  return packets;
}

Result<RegisterSlave> decode_register_slave(Bytes body) {
  ByteReader r(body);
  RegisterSlave s;
  s.server_id = r.u32();
  if (!r.ok()) return DecodeError{Errc::truncated, 0, "COM_REGISTER_SLAVE shorter than its server id"};
  if (r.empty()) return s;
  s.host = std::string(r.str(r.u8()));
  s.user = std::string(r.str(r.u8()));
  r.skip(r.u8());  // the password: skipped, never kept
  if (!r.ok()) return DecodeError{Errc::truncated, r.error().offset, "COM_REGISTER_SLAVE: a string runs past the packet"};
  if (r.remaining() >= 2) s.port = r.u16();
  return s;
}

Status decode_binlog_dump(Bytes body, ServeDumpRequest& req) {
  ByteReader r(body);
  const std::uint32_t pos = r.u32();
  const std::uint16_t flags = r.u16();
  const std::uint32_t server_id = r.u32();
  if (!r.ok()) return DecodeError{Errc::truncated, r.error().offset, "COM_BINLOG_DUMP shorter than 10 bytes"};
  req.position = pos;
  req.non_blocking = (flags & kDumpNonBlock) != 0;
  req.send_annotate_rows = (flags & kDumpAnnotateRows) != 0;
  req.replica_server_id = server_id;
  std::string_view name = r.str(r.remaining());
  // Some clients send the name NUL-terminated.
  if (const auto nul = name.find('\0'); nul != std::string_view::npos) name = name.substr(0, nul);
  req.file = std::string(name);
  return {};
}

Status decode_binlog_dump_gtid(Bytes body, ServeDumpRequest& req) {
  ByteReader r(body);
  const std::uint16_t flags = r.u16();
  const std::uint32_t server_id = r.u32();
  const std::uint32_t name_len = r.u32();
  if (!r.ok()) return DecodeError{Errc::truncated, r.error().offset, "COM_BINLOG_DUMP_GTID shorter than 10 bytes"};
  if (name_len > r.remaining())
    return DecodeError{Errc::bad_length, 6, "COM_BINLOG_DUMP_GTID: file name length runs past the packet"};
  std::string_view name = r.str(name_len);
  const std::uint64_t pos = r.u64();
  if (!r.ok()) return DecodeError{Errc::truncated, r.error().offset, "COM_BINLOG_DUMP_GTID: position missing"};
  req.file = std::string(name);
  req.position = pos;
  req.non_blocking = (flags & kDumpNonBlock) != 0;
  req.replica_server_id = server_id;
  req.mysql_gtids.reset();
  // The server reads the data size whatever the flags say (READ_INT(data_size, 4) in
  // com_binlog_dump_gtid); a client that sends none asks by file and position alone.
  if (r.empty()) {
    if (flags & kDumpThroughGtid)
      return DecodeError{Errc::truncated, r.offset(), "COM_BINLOG_DUMP_GTID: BINLOG_THROUGH_GTID without a GTID set"};
    return {};
  }
  const std::uint32_t size = r.u32();
  if (!r.ok()) return DecodeError{Errc::truncated, r.error().offset, "COM_BINLOG_DUMP_GTID: GTID data size cut short"};
  if (size != r.remaining())
    return DecodeError{Errc::bad_length, r.offset() - 4, "COM_BINLOG_DUMP_GTID: GTID data size is not what the packet holds"};
  if (size == 0) {
    req.mysql_gtids = GtidSet{};
    return {};
  }
  ByteReader set = r.sub(size);
  Result<GtidSet> gs = decode_previous_gtids(set);
  if (!gs) return gs.error();
  req.mysql_gtids = std::move(*gs);
  return {};
}

void frame_packets(Bytes payload, std::uint8_t& seq, std::vector<std::uint8_t>& out) {
  std::size_t at = 0;
  for (;;) {
    const std::size_t n = std::min(kMaxPayload, payload.size() - at);
    out.push_back(static_cast<std::uint8_t>(n));
    out.push_back(static_cast<std::uint8_t>(n >> 8));
    out.push_back(static_cast<std::uint8_t>(n >> 16));
    out.push_back(seq++);
    out.insert(out.end(), payload.begin() + static_cast<std::ptrdiff_t>(at),
               payload.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    if (n < kMaxPayload) break;  // a full packet is always followed by another (maybe empty)
  }
}

}  // namespace serve_proto

// ---- users ----

ServeUser serve_user(std::string name, std::string_view password) {
  ServeUser u;
  u.name = std::move(name);
  u.stage2 = serve_proto::sha1(serve_proto::sha1(Bytes(reinterpret_cast<const std::uint8_t*>(password.data()), password.size())));
  return u;
}

bool read_users_file(const std::string& path, std::vector<ServeUser>& users, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  const std::size_t before = users.size();
  std::string line;
  std::size_t lineno = 0;
  bool ok = true;
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (int c = 0; ok && c != EOF;) {
    line.clear();
    while ((c = std::fgetc(f)) != EOF && c != '\n') {
      if (line.size() > 4096) {
        error = path + ":" + std::to_string(lineno + 1) + ": line longer than 4096 bytes";
        ok = false;
        break;
      }
      line.push_back(static_cast<char>(c));
    }
    if (!ok) break;
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0) {
      error = path + ":" + std::to_string(lineno) + ": expected `user:password` or `user:*SHA1HEX`";
      ok = false;
      break;
    }
    const std::string name = line.substr(0, colon);
    const std::string_view secret = std::string_view(line).substr(colon + 1);
    if (secret.empty()) {
      error = path + ":" + std::to_string(lineno) + ": user '" + name + "' has an empty password (not allowed)";
      ok = false;
      break;
    }
    ServeUser u;
    if (secret.size() == 41 && secret[0] == '*' &&
        std::all_of(secret.begin() + 1, secret.end(), [&](char ch) { return hexval(ch) >= 0; })) {
      u.name = name;
      for (std::size_t i = 0; i < 20; ++i)
        u.stage2[i] = static_cast<std::uint8_t>(hexval(secret[1 + 2 * i]) * 16 + hexval(secret[2 + 2 * i]));
    } else if (secret[0] == '*' && secret.size() != 1) {
      // Looks like a hash but is not one: refuse rather than take it for a password.
      error = path + ":" + std::to_string(lineno) + ": user '" + name +
              "': a value starting with '*' must be '*' and 40 hex digits (mysql_native_password's hash)";
      ok = false;
      break;
    } else {
      u = serve_user(name, secret);
    }
    users.push_back(std::move(u));
  }
  std::fclose(f);
  if (ok && users.size() == before) {
    error = path + ": no user in the file";
    ok = false;
  }
  return ok;
}

}  // namespace binlogctl
