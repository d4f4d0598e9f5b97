// <regex> for the library's sources (not a public header).
// libstdc++ 12's <regex> trips -Wmaybe-uninitialized inside std::function at -O1/-O2 with
// sanitizers (a known false positive, GCC PR 105562); keep it from failing -Werror builds.
#pragma once

#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic push
#  pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <regex>
#if defined(__GNUC__) && !defined(__clang__)
#  pragma GCC diagnostic pop
#endif
