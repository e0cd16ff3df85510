#pragma once

// STRATA_CHECK: an invariant that, when broken, means a bug in strata rather
// than bad input or an operating error. It stays on in release builds (keep
// the condition cheap), prints the file, line and message to stderr and
// aborts, so a crash report names the broken invariant.

#include <cstdio>
#include <cstdlib>

#define STRATA_CHECK(condition, message)                                            \
  do {                                                                              \
    if (__builtin_expect(!(condition), 0)) {                                        \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s: %s\n", __FILE__, __LINE__,     \
                   #condition, message);                                            \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
