#include <binlogctl/crc32.h>
#include <zlib.h>

#ifdef BINLOGCTL_HAVE_ISAL
#  include <isa-l/crc.h>
#endif

namespace binlogctl {
namespace {

#ifdef BINLOGCTL_HAVE_ISAL_BY8
extern "C" std::uint32_t crc32_gzip_refl_by8(std::uint32_t, const unsigned char*, std::uint64_t);

// ISA-L's dispatcher (crc32_gzip_refl) takes its AVX-512 VPCLMULQDQ variant on CPUs that have
// one. Alone on a buffer that variant is the fastest (8.1 against 7.1 GB/s on 325-byte pieces
// here), but run beside the other threads of a convert it made the whole process slower: 0.5
// CPU-seconds more per GiB, 2.2 s against 1.87 s wall for convert --format json, and verify
// 0.89 s against 0.35 s on the 1 GiB bench binlog (bench/README.md). Binlog events are a few
// hundred bytes, where the wide folding gains least, so the 128-bit PCLMULQDQ variant is used
// whenever the CPU has the instructions it needs (PCLMULQDQ, SSE4.1).
bool use_by8() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
const bool kUseBy8 = use_by8();
#endif

}  // namespace

std::uint32_t crc32_update(std::uint32_t prev, const std::uint8_t* data, std::size_t len) noexcept {
#ifdef BINLOGCTL_HAVE_ISAL
  // crc32_gzip_refl is the reflected 0x04C11DB7 CRC with zlib's pre/post inversion.
#  ifdef BINLOGCTL_HAVE_ISAL_BY8
  if (kUseBy8) return crc32_gzip_refl_by8(prev, data, static_cast<std::uint64_t>(len));
#  endif
  return crc32_gzip_refl(prev, data, static_cast<std::uint64_t>(len));
#else
  std::uint32_t crc = prev;
  while (len > 0) {  // zlib takes uInt lengths
    const uInt chunk = len > (1u << 30) ? (1u << 30) : static_cast<uInt>(len);
    crc = static_cast<std::uint32_t>(::crc32(crc, data, chunk));
    data += chunk;
    len -= chunk;
  }
  return crc;
#endif
}

const char* crc32_implementation() noexcept {
#ifdef BINLOGCTL_HAVE_ISAL
#  ifdef BINLOGCTL_HAVE_ISAL_BY8
  if (kUseBy8) return "ISA-L, 128-bit PCLMULQDQ";
#  endif
  return "ISA-L";
#else
  return "zlib";
#endif
}

}  // namespace binlogctl
