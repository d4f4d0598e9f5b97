#include <binlogctl/chain.h>
#include <binlogctl/dump.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/inputs.h>
#include <binlogctl/output.h>
#include <binlogctl/source.h>

#include "dump/describe.h"
#include "dump/info.h"
#include "events/events.h"
#include "render/json_out.h"
#include "txn/txn_front.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

namespace binlogctl {


namespace {

// Text column widths (SHOW BINLOG EVENTS columns; Info is last and unpadded).
constexpr int kPosW = 10, kTypeW = 25, kServerW = 10, kEndW = 11;

// Control characters escaped so that one event is one line and no byte of a statement reaches
// the terminal as a control code: `\n \t \0 \\` as the mysql client's --batch mode writes them,
// every other C0 control byte and DEL as `\xHH`.
void append_batch_escaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto plain = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f && c != '\\';
  };
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    while (j < s.size() && plain(s[j])) ++j;
    out.append(s.data() + i, j - i);
    if (j == s.size()) break;
    switch (s[j]) {
      case '\n': out.append("\\n"); break;
      case '\t': out.append("\\t"); break;
      case '\0': out.append("\\0"); break;
      case '\\': out.append("\\\\"); break;
      default: {
        const auto u = static_cast<unsigned char>(s[j]);
        out.append("\\x");
        out.push_back(kHex[u >> 4]);
        out.push_back(kHex[u & 15]);
      }
    }
    i = j + 1;
  }
}

// A right-aligned decimal number in a column of `width`.
void append_num_right(std::string& out, std::uint64_t v, int width) {
  char buf[20];
  char* const e = buf + sizeof buf;
  const char* b = format_u64_backward(e, v);
  const int n = static_cast<int>(e - b);
  if (width > n) out.append(static_cast<std::size_t>(width - n), ' ');
  out.append(b, static_cast<std::size_t>(n));
}

void append_padded(std::string& out, std::string_view s, int width, bool right) {
  const int pad = width - static_cast<int>(s.size());
  if (right && pad > 0) out.append(static_cast<std::size_t>(pad), ' ');
  out.append(s);
  if (!right && pad > 0) out.append(static_cast<std::size_t>(pad), ' ');
}

void append_hexdump_lines(LineOutput& o, Bytes raw, std::uint64_t base) {
  for (std::size_t i = 0; i < raw.size(); i += 16) {
    std::string& b = o.buf();
    b.append(fmt::format("  {:08x} ", base + i));
    for (std::size_t j = 0; j < 16; ++j) {
      if (j == 8) b.push_back(' ');
      if (i + j < raw.size()) {  // " %02x", without a format call per byte (a 1 GiB event has 1 Gi)
        static constexpr char kHexDigits[] = "0123456789abcdef";
        const char h[3] = {' ', kHexDigits[raw[i + j] >> 4], kHexDigits[raw[i + j] & 15]};
        b.append(h, 3);
      } else {
        b.append("   ");
      }
    }
    b.append("  |");
    for (std::size_t j = 0; j < 16 && i + j < raw.size(); ++j) {
      const std::uint8_t c = raw[i + j];
      b.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.');
    }
    b.push_back('|');
    o.end_line();
  }
}

class Dumper {
 public:
  Dumper(const DumpOptions& opts, LineOutput& out, StderrDiagnostics& diag, int log_name_width)
      : opts_(opts), out_(out), diag_(diag), name_w_(log_name_width) {}

  void header() {
    if (opts_.format != OutputFormat::text) return;
    std::string& b = out_.buf();
    append_padded(b, "Log_name", name_w_, false);
    b.push_back(' ');
    append_padded(b, "Pos", kPosW, true);
    b.push_back(' ');
    append_padded(b, "Event_type", kTypeW, false);
    b.push_back(' ');
    append_padded(b, "Server_id", kServerW, true);
    b.push_back(' ');
    append_padded(b, "End_log_pos", kEndW, true);
    b.append(" Info");
    out_.end_line();
  }

  void event(const Event& ev, const std::string& log_name) {
    info_.clear();
    // A huge statement (a 1 GiB QUERY) is written out in pieces as it is escaped, never held
    // as a whole Info text nor as a whole line: memory stays bounded by the piece.
    // A MariaDB compressed QUERY event is huge by its inflated statement.
    const bool compressed = ev.type() == EventType::mariadb_query_compressed;
    bool have_info = false;
    if (ev.header.event_size >= kStreamAt || compressed) {
      head_.clear();
      tail_.clear();
      std::string_view sql;
      if (query_info_parts(ev, scratch_, head_, sql, tail_)) {
        if (ev.header.event_size >= kStreamAt || sql.size() >= kStreamAt) return streamed(ev, log_name, sql);
        info_.append(head_).append(sql).append(tail_);  // what append_info gives
        have_info = true;
      }
    }
    Status st = have_info ? Status{} : append_info(info_, ev, scratch_);
    if (!st) {
      info_.clear();
      diag_.report(Diagnostic{Check::undecodable_event, Severity::error, log_name,
                              ev.is_inner() ? ev.payload_pos : ev.pos,
                              fmt::format("{} event does not decode: {} at offset {}",
                                          event_type_constant(ev.type_code()), st.error().what, st.error().offset)});
    }
    const std::string_view type_name = event_type_name(ev.type_code(), ev.fde->flavor, ev.fde->version_product);
    const std::uint64_t pos = ev.is_inner() ? ev.payload_pos : ev.pos;
    if (opts_.format == OutputFormat::json) {
      if (!opts_.decode && !opts_.hexdump) {
        // The common line, built in a RenderBuf (an append is a compare and inline copies, not
        // std::string's call per key and number) and handed to the output at once.
        line_.clear();
        json_head(line_, ev, log_name, type_name, pos);
        append_json_quoted(line_, info_);
        json_header_keys(line_, ev);
        line_.push_back('}');
        out_.buf().append(line_.view());
        out_.end_line();
        return;
      }
      std::string& b = out_.buf();
      json_head(b, ev, log_name, type_name, pos);
      append_json_quoted(b, info_);
      json_rest(b, ev);
    } else {
      std::string& b = out_.buf();
      text_columns(b, ev, log_name, type_name);
      append_batch_escaped(b, info_);
      finish_text(ev);
    }
  }

 private:
  static constexpr std::uint32_t kStreamAt = 1u << 20;  // events this large: Info in pieces
  static constexpr std::size_t kPiece = 256 * 1024;

  // The text line's columns before Info.
  void text_columns(std::string& b, const Event& ev, const std::string& log_name, std::string_view type_name) {
    append_padded(b, log_name, name_w_, false);
    b.push_back(' ');
    if (ev.is_inner()) {
      append_padded(b, fmt::format("{}#{}", ev.payload_pos, ev.inner_index), kPosW, true);
    } else {
      append_num_right(b, ev.pos, kPosW);
    }
    b.push_back(' ');
    append_padded(b, type_name, kTypeW, false);
    b.push_back(' ');
    append_num_right(b, ev.header.server_id, kServerW);
    b.push_back(' ');
    append_num_right(b, ev.header.log_pos, kEndW);
    b.push_back(' ');
  }

  // `sql` in pieces of about kPiece bytes that end before a UTF-8 lead byte (or an ASCII one),
  // so that no character is cut: `put` escapes each; the line so far is written out whenever
  // it is a block long.
  template <class Put>
  void pieces(std::string_view sql, Put put) {
    while (!sql.empty()) {
      const std::size_t n = utf8_piece(sql, kPiece);
      put(out_.buf(), sql.substr(0, n));
      sql.remove_prefix(n);
      if (out_.buf().size() >= kPiece) out_.flush();
    }
  }

  // event() for a huge statement event: the same line, its Info written piece by piece.
  void streamed(const Event& ev, const std::string& log_name, std::string_view sql) {
    const std::string_view type_name = event_type_name(ev.type_code(), ev.fde->flavor, ev.fde->version_product);
    std::string& b = out_.buf();
    if (opts_.format == OutputFormat::json) {
      json_head(b, ev, log_name, type_name, ev.is_inner() ? ev.payload_pos : ev.pos);
      b.push_back('"');
      append_json_escaped(b, head_);
      pieces(sql, [](std::string& o, std::string_view p) { append_json_escaped(o, p); });
      std::string& t = out_.buf();
      append_json_escaped(t, tail_);
      t.push_back('"');
      json_rest(t, ev);
    } else {
      text_columns(b, ev, log_name, type_name);
      append_batch_escaped(b, head_);
      pieces(sql, [](std::string& o, std::string_view p) { append_batch_escaped(o, p); });
      append_batch_escaped(out_.buf(), tail_);
      finish_text(ev);
    }
  }

  // The JSON record up to the value of "info" (keys are literals: no escaping work per event).
  template <class Out>
  void json_head(Out& b, const Event& ev, const std::string& log_name, std::string_view type_name,
                 std::uint64_t pos) {
    b.append(R"({"log_name":)");
    append_json_quoted(b, log_name);
    b.append(R"(,"pos":)");
    append_u64(b, pos);
    b.append(R"(,"event_type":")");
    b.append(type_name);  // our own table: plain ASCII
    b.append(R"(","server_id":)");
    append_u64(b, ev.header.server_id);
    b.append(R"(,"end_log_pos":)");
    append_u64(b, ev.header.log_pos);
    b.append(R"(,"info":)");
  }

  // The header's keys after "info".
  template <class Out>
  void json_header_keys(Out& b, const Event& ev) {
    b.append(R"(,"timestamp":)");
    append_u64(b, ev.header.timestamp);
    b.append(R"(,"event_size":)");
    append_u64(b, ev.header.event_size);
    b.append(R"(,"flags":)");
    append_u64(b, ev.header.flags);
    b.append(R"(,"type_code":)");
    append_u64(b, ev.type_code());
    if (ev.is_inner()) {
      b.append(R"(,"payload_pos":)");
      append_u64(b, ev.payload_pos);
      b.append(R"(,"inner_index":)");
      append_u64(b, static_cast<std::uint64_t>(ev.inner_index));
    }
  }

  // The JSON record's keys after "info", --decode's and --hexdump's, and its end.
  void json_rest(std::string& b, const Event& ev) {
    json_header_keys(b, ev);
    if (opts_.decode) {
      b.append(R"(,"body":)");
      if (!body_in_pieces(ev, true)) {
        body_.clear();
        JsonWriter bw(body_);
        bw.begin_object();
        Status ds = describe_body(bw, ev, scratch_);
        bw.end_object();
        b.append(ds ? std::string_view(body_) : std::string_view("null"));
      }
    }
    if (opts_.hexdump) {
      b.append(R"(,"hex":")");
      if (ev.raw.size() < kStreamAt) {
        append_hex(b, ev.raw.data(), ev.raw.size());
      } else {  // a huge event: written out as it is converted
        for (std::size_t at = 0; at < ev.raw.size(); at += kPiece) {
          append_hex(b, ev.raw.data() + at, std::min(kPiece, ev.raw.size() - at));
          if (b.size() >= kPiece) out_.flush();
        }
      }
      b.push_back('"');
    }
    b.push_back('}');
    out_.end_line();
  }

  // The text line's end, then --decode's and --hexdump's lines.
  void finish_text(const Event& ev) {
    out_.end_line();
    if (opts_.decode) {
      // The decoded body on the next line, indented, as the JSON object --format json gives.
      out_.buf().append("    body: ");
      if (!body_in_pieces(ev, false)) {
        body_.clear();
        JsonWriter bw(body_);
        bw.begin_object();
        const Status ds = describe_body(bw, ev, scratch_);
        bw.end_object();
        std::string& l = out_.buf();
        if (ds) append_batch_escaped(l, body_);
        else l.append(fmt::format("does not decode: {} at offset {}", ds.error().what, ds.error().offset));
      }
      out_.end_line();
    }
    if (opts_.hexdump) append_hexdump_lines(out_, ev.raw, ev.pos);
  }

  // --decode's body of a huge statement event (a 1 GiB QUERY) appended to the line, its "sql"
  // escaped and written out piece by piece (then escaped again for text, as the whole body is);
  // false, nothing written, for other events.
  bool body_in_pieces(const Event& ev, bool json) {
    if (ev.header.event_size < kStreamAt && ev.type() != EventType::mariadb_query_compressed) return false;
    body_.clear();
    std::string_view sql;
    std::size_t at = 0;
    if (!describe_statement_parts(body_, ev, scratch_, sql, at)) return false;
    const std::string_view bv = body_;
    if (json) {
      out_.buf().append(bv.substr(0, at));
      pieces(sql, [](std::string& o, std::string_view p) { append_json_escaped(o, p); });
      out_.buf().append(bv.substr(at));
    } else {
      append_batch_escaped(out_.buf(), bv.substr(0, at));
      pieces(sql, [this](std::string& o, std::string_view p) {
        piece_.clear();
        append_json_escaped(piece_, p);
        append_batch_escaped(o, piece_);
      });
      append_batch_escaped(out_.buf(), bv.substr(at));
    }
    return true;
  }

  const DumpOptions& opts_;
  LineOutput& out_;
  StderrDiagnostics& diag_;
  int name_w_;
  std::string info_;
  std::string head_, tail_;  // a streamed statement's Info around it
  std::string piece_;        // a piece of a streamed statement, JSON-escaped
  std::string body_;
  RenderBuf line_;  // a JSON line without --decode or --hexdump
  InfoScratch scratch_;
};

}  // namespace

int run_dump(const DumpOptions& opts, std::FILE* outf, std::FILE* errf) {
  StderrDiagnostics diag(errf);
  // The Log_name column is as wide as the longest name of the chain.
  int name_w = 8;
  const InputList listed = opts.input_set != nullptr ? opts.input_set->list() : expand_inputs(opts.inputs);
  for (const InputFile& f : listed.files)
    name_w = std::max(name_w, static_cast<int>(f.log_name.size()));
  LineOutput out(outf);
  Dumper dumper(opts, out, diag, name_w);
  // The header comes with the first file that opens: a run where no input could be opened
  // prints nothing on stdout.
  // With a GTID selection, the transaction front tells which transaction each event belongs to.
  struct Visitor : ChainVisitor, TransactionFront::Hooks {
    Dumper& d;
    // (A unique_ptr, not an optional: GCC 12 with the sanitizers finds a "maybe uninitialized"
    // string in the optional's emplace, -Werror.)
    std::unique_ptr<TransactionFront> front;
    std::unique_ptr<DatabaseFilter> database;  // -d/--database
    const TableFilter* tables = nullptr;        // --filter
    std::vector<std::uint64_t> filtered_out;    // ids of the TABLE_MAPs --filter left out (this file)
    bool headed = false;
    explicit Visitor(Dumper& dd) : d(dd) {}
    void begin_file(const InputFile& f) override {
      if (!headed) d.header();
      headed = true;
      if (front) front->new_file(f.log_name);
      if (database) database->reset();
      filtered_out.clear();
    }
    // --filter: a TABLE_MAP of a table it does not match, and the rows events using that id.
    bool table_selected(const Event& ev) {
      if (ev.type() == EventType::table_map) {
        auto t = decode_table_map(ev.body_reader(), *ev.fde);
        if (!t) return true;  // shown as undecodable, not hidden
        std::erase(filtered_out, t->table_id);
        if (tables->matches(t->db, t->table)) return true;
        filtered_out.push_back(t->table_id);
        return false;
      }
      if (filtered_out.empty() || !is_rows_event(ev.type_code())) return true;
      auto h = decode_rows_header(ev.body_reader(), *ev.fde, ev.type_code());
      return !h || std::find(filtered_out.begin(), filtered_out.end(), h->table_id) == filtered_out.end();
    }
    void event(const Event& ev, const InputFile& f) override {
      if (!front && !database && tables == nullptr) return d.event(ev, f.log_name);
      bool show = true;
      if (front) {
        front->begin(ev, *this);
        show = !front->state().open || front->selected();
      }
      if (show && database) show = database->keep(ev);
      if (show && tables != nullptr) show = table_selected(ev);
      if (show) d.event(ev, f.log_name);
      if (front) front->end();
    }
    // dump words undecodable bodies itself (Info), once per event.
    void statement_undecodable(const Event&, std::string_view, const DecodeError&) override {}
    void gtid_undecodable(const Event&) override {}
  } visitor(dumper);
  if (opts.include_gtids || opts.exclude_gtids)
    visitor.front = std::make_unique<TransactionFront>(opts.include_gtids ? &*opts.include_gtids : nullptr,
                                                       opts.exclude_gtids ? &*opts.exclude_gtids : nullptr);
  if (!opts.database.empty()) visitor.database = std::make_unique<DatabaseFilter>(opts.database);
  if (!opts.filter.empty()) visitor.tables = &opts.filter;
  ChainOptions co = chain_options_of(opts);
  co.expand_payloads = opts.expand_payloads;
  co.threads = opts.threads;
  const bool readable = read_chain(co, visitor, diag, errf);
  out.flush();
  if (readable) warn_unmatched_filter_rules(opts.filter, errf);
  if (readable && visitor.database) warn_unmatched_database(opts.database, visitor.database->matched(), errf);
  if (!readable) return 2;
  return diag.errors() > 0 ? 1 : 0;
}

}  // namespace binlogctl
