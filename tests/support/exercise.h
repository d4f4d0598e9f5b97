// Runs every decoder a consumer could reach over arbitrary bytes (robustness test, fuzzer).
#pragma once

#include <binlogctl/chain.h>
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

// Walks everything a consumer could ask for, reading through the input seam and the chain
// reader (as a mapped file, or as a stream when `as_stream`: resynchronisation then works on a
// window that moves); returns the number of top-level events seen.
inline std::size_t exercise(Bytes bytes, bool as_stream = false) {
  auto inputs = memory_inputs({{"fuzz", bytes}}, as_stream);
  Count diag;
  ChainHooks hooks;
  ChainOptions o;
  o.input_set = inputs.get();
  o.progress = ProgressMode::never;
  o.threads = 1;
  ChainReader reader(o, hooks, diag);
  Event ev;
  std::string out, body;
  InfoScratch scratch;
  std::size_t n = 0;
  while (reader.next(ev)) {
    if (ev.raw.size() != ev.header.event_size || ev.body.size() > ev.raw.size()) __builtin_trap();
    out.clear();
    (void)append_info(out, ev, scratch);
    if (ev.is_inner()) continue;
    ++n;
    body.clear();
    JsonWriter w(body);
    w.begin_object();
    (void)describe_body(w, ev, scratch);
  }
  return n;
}

}  // namespace binlogctl::testing
