#include <binlogctl/crc32.h>
#include <zlib.h>

#ifdef BINLOGCTL_HAVE_ISAL
#  include <isa-l/crc.h>
#endif

namespace binlogctl {

std::uint32_t crc32_update(std::uint32_t prev, const std::uint8_t* data, std::size_t len) noexcept {
#ifdef BINLOGCTL_HAVE_ISAL
  // crc32_gzip_refl is the reflected 0x04C11DB7 CRC with zlib's pre/post inversion.
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
  return "isa-l";
#else
  return "zlib";
#endif
}

}  // namespace binlogctl
