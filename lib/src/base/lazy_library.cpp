// Libraries loaded when first needed (lazy_library.h).
#include "base/lazy_library.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace binlogctl::lazy {

namespace {

[[noreturn]] void cannot_load(const Library& lib, const char* what) {
  std::fprintf(stderr, "binlogctl: %s is needed for %s and cannot be loaded: %s\n", lib.soname, lib.use,
               what != nullptr ? what : "unknown error");
  std::fflush(stderr);
  std::_Exit(127);
}

}  // namespace

void* symbol(Library& lib, const char* name) {
  std::call_once(lib.once, [&lib] {
    // RTLD_GLOBAL as if linked: libmariadb's authentication plugins resolve against it.
    lib.handle = dlopen(lib.soname, RTLD_NOW | RTLD_GLOBAL);
    if (lib.handle == nullptr) cannot_load(lib, dlerror());
  });
  void* f = dlsym(lib.handle, name);
  if (f == nullptr) cannot_load(lib, dlerror());
  return f;
}

}  // namespace binlogctl::lazy
