// libFuzzer target: the server side of the protocol (lib/src/serve) driven from memory.
//
// The first byte picks what the rest is:
//   0: the bytes a client sends from the first byte of the connection (handshake response,
//      garbage, anything): the session must answer with an error or close, never crash or hang;
//   1: an authenticated client: the transport answers the handshake correctly, then the rest is
//      the raw command stream (framing included), against a fake archive whose cursor hands out
//      a few events, waits and an error;
//   2: every decoder alone (handshake response, COM_REGISTER_SLAVE, COM_BINLOG_DUMP(_GTID)) and
//      the query answerer on the same bytes.
// The transport never blocks: reads past the input are a close, waits time out at once.
#include "serve/serve_protocol.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

using namespace binlogctl;
namespace sp = binlogctl::serve_proto;

namespace {

struct FakeArchive final : BinlogArchive {
  ArchiveState st;
  FakeArchive() {
    st.mariadb = true;
    st.server_version = "10.11.6-MariaDB-log";
    st.server_id = 1;
    st.checksum_alg = 1;
    st.gtid_binlog_pos = "0-1-5";
    st.files = {{"bin.000001", "/nonexistent", 400, false}};
    st.end_file = "bin.000001";
    st.end_position = 400;
  }
  bool refresh(std::string&) override { return true; }
  ArchiveState state() const override { return st; }
};

struct FakeCursor final : DumpCursor {
  std::vector<std::uint8_t> ev = std::vector<std::uint8_t>(40, 0x11);
  std::vector<std::uint8_t> hb = std::vector<std::uint8_t>(30, 0x1b);
  std::string file_ = "bin.000001";
  int n = 0;
  CursorStep next() override {
    ++n;
    if (n <= 3) return {CursorStep::Kind::event, ev, {}};
    if (n <= 5) return {CursorStep::Kind::wait, {}, {}};
    return {CursorStep::Kind::error, {}, "bin.000001: offset 4: fuzz"};
  }
  const std::string& file() const override { return file_; }
  std::uint64_t position() const override { return 4; }
  std::int64_t last_event_time() const override { return 0; }
  Bytes heartbeat() override { return hb; }
};

struct FuzzTransport final : ServeTransport {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t at = 0;
  bool authenticate;
  bool answered = false;
  std::vector<std::uint8_t> prefix;  // the generated handshake response
  std::size_t prefix_at = 0;
  std::vector<std::uint8_t> out;

  FuzzTransport(const std::uint8_t* d, std::size_t n, bool auth) : data(d), size(n), authenticate(auth) {}

  void answer() {
    answered = true;
    // The handshake is the first packet written: the scramble sits after the version's NUL.
    if (out.size() < 5) return;
    std::size_t v = 5;
    while (v < out.size() && out[v] != 0) ++v;
    if (v + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10 + 12 > out.size()) return;
    std::array<std::uint8_t, 20> scramble{};
    std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(v + 5), 8, scramble.begin());
    std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(v + 5 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10), 12, scramble.begin() + 8);
    const auto resp = sp::native_password_response(scramble, "pw");
    std::vector<std::uint8_t> p;
    const std::uint32_t caps = sp::kClientProtocol41 | sp::kClientSecureConnection | sp::kClientPluginAuth;
    for (int i = 0; i < 4; ++i) p.push_back(static_cast<std::uint8_t>(caps >> (8 * i)));
    p.insert(p.end(), {0, 0, 0, 1, 45});
    p.insert(p.end(), 23, 0);
    p.insert(p.end(), {'u', 0, 20});
    p.insert(p.end(), resp.begin(), resp.end());
    const char* plugin = sp::kNativePlugin;
    p.insert(p.end(), plugin, plugin + std::strlen(plugin) + 1);
    std::uint8_t seq = 1;
    sp::frame_packets(p, seq, prefix);
  }

  Io read(std::uint8_t* p, std::size_t n, std::chrono::steady_clock::time_point) override {
    if (authenticate && !answered) answer();
    std::size_t got = 0;
    while (got < n && prefix_at < prefix.size()) p[got++] = prefix[prefix_at++];
    if (size - at < n - got) {
      at = size;
      return Io::closed;
    }
    std::memcpy(p + got, data + at, n - got);
    at += n - got;
    return Io::ok;
  }
  Io write(const std::uint8_t* p, std::size_t n) override {
    // Keep only the start (the handshake); the rest is counted, not stored.
    if (out.size() < 4096) out.insert(out.end(), p, p + std::min<std::size_t>(n, 4096 - out.size()));
    return Io::ok;
  }
  Io wait_readable(std::chrono::milliseconds) override { return at < size ? Io::ok : Io::timeout; }
  bool start_tls(std::string& e) override {
    e = "no TLS in the fuzzer";
    return false;
  }
  bool tls_offered() const override { return false; }
  bool tls_active() const override { return false; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0] % 3;
  ++data;
  --size;
  static FakeArchive archive;
  if (mode == 2) {
    const Bytes b(data, size);
    (void)sp::decode_handshake_response(b);
    (void)sp::decode_register_slave(b);
    ServeDumpRequest req;
    (void)sp::decode_binlog_dump(b, req);
    (void)sp::decode_binlog_dump_gtid(b, req);
    UserVars vars;
    QueryEnv env{&archive.st, 1, 0, 1, "u@h"};
    (void)answer_query(as_string_view(b), vars, env);
    return 0;
  }
  ServeContext ctx;
  ctx.archive = &archive;
  ctx.settings.users = {serve_user("u", "pw")};
  ctx.settings.poll_interval = std::chrono::milliseconds(0);
  ctx.settings.heartbeat = 0.0;
  ctx.open_cursor = [](BinlogArchive&, const ServeDumpRequest&, std::string&) -> std::unique_ptr<DumpCursor> {
    return std::make_unique<FakeCursor>();
  };
  FuzzTransport t(data, size, mode == 1);
  run_session(ctx, t, "fuzz:1");
  return 0;
}
