// Runs every decoder a consumer could reach over arbitrary bytes (robustness test, fuzzer).
#pragma once

#include <binlogctl/describe.h>
#include <binlogctl/event_stream.h>
#include <binlogctl/events.h>
#include <binlogctl/info.h>

#include <cstdint>
#include <string>
#include <vector>

namespace binlogctl::testing {

struct Count : DiagnosticSink {
  std::size_t n = 0;
  void report(const Diagnostic&) override { ++n; }
};

// Walks everything a consumer could ask for; returns the number of events seen.
inline std::size_t exercise(Bytes bytes) {
  auto src = memory_source(bytes);
  Count diag;
  EventStream s(*src, "fuzz", diag);
  Event ev;
  std::string out, body;
  InfoScratch scratch;
  std::size_t n = 0;
  while (s.next(ev)) {
    ++n;
    if (ev.raw.size() != ev.header.event_size || ev.body.size() > ev.raw.size()) __builtin_trap();
    out.clear();
    (void)append_info(out, ev, scratch);
    body.clear();
    JsonWriter w(body);
    w.begin_object();
    (void)describe_body(w, ev, scratch);
    if (ev.type() == EventType::transaction_payload) {
      auto p = decode_transaction_payload(ev.body_reader(), *ev.fde);
      if (p) {
        PayloadExpander x(ev, *p, "fuzz", diag);
        Event inner;
        std::size_t k = 0;
        while (x.next(inner) && k++ < 100000) {
          out.clear();
          (void)append_info(out, inner, scratch);
        }
      }
    }
  }
  return n;
}

}  // namespace binlogctl::testing
