// Libraries loaded when first needed: libcrypto (encrypted binlogs, serve's authentication),
// libssl (serve's TLS) and libmariadb (-R, fetch). Linked the usual way, the dynamic loader
// maps and relocates them (about 22,000 relocations, most of them libcrypto's, built BIND_NOW)
// before main() for every command, though most never use them: about 200 page faults and a few
// milliseconds at every start (bench/README.md). Instead, the library defines each function it
// calls with the header's own signature (BINLOGCTL_LAZY below, one file per library next to its
// users), which loads the library with dlopen() on the first call and the function with dlsym().
//
// A library or function that cannot be loaded ends the program with status 127 and a message
// naming it, as the dynamic loader would have at start-up (it is part of the installation, not
// of the input).
#pragma once

#include <mutex>

namespace binlogctl::lazy {

struct Library {
  const char* soname;  // as the build found it (CMake passes it)
  const char* use;     // what needs it, for the message when it cannot be loaded
  std::once_flag once{};
  void* handle = nullptr;
};

// The address of `name` in `lib`, loading the library on the first call. Thread-safe.
void* symbol(Library& lib, const char* name);

}  // namespace binlogctl::lazy

// Defines `ret name params` (C linkage) as a call of the library's own function. The
// declaration from the library's header must agree: a mismatch is a compile error.
#define BINLOGCTL_LAZY(lib, ret, name, params, args)                                    \
  extern "C" ret name params {                                                          \
    using Fn = ret(*) params;                                                           \
    static const Fn fn = reinterpret_cast<Fn>(::binlogctl::lazy::symbol(lib, #name));   \
    return fn args;                                                                     \
  }
