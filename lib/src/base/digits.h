// The decimal digit pairs 00..99, for number and date text written two digits at a time (one
// table for every renderer: JSON's numbers, temporal text, TIMESTAMP text in the session zone).
#pragma once

#include <cstdint>
#include <cstring>

namespace binlogctl {

inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// The two digits of v (< 100) at p: no division.
inline void put_two_digits(char* p, std::uint64_t v) noexcept { std::memcpy(p, kDigitPairs + 2 * v, 2); }

}  // namespace binlogctl
