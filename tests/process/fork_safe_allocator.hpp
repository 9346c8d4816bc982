// Whether this build's allocator survives a fork() taken while another thread allocates.
//
// AddressSanitizer's allocator takes its own locks, and before LLVM 18 (llvm/llvm-project
// pull request 75290; GCC 15's copy) it did not hold them across fork(): a child forked
// while another thread is inside the allocator inherits that lock held and blocks in its
// first malloc, or in LeakSanitizer's check at exit (seen with GCC 12: 2 hangs in 150 runs of
// a probe whose counter-printing thread had just started). That is the sanitizer's, not
// aloe's (glibc's malloc holds its locks across fork()), so a case that forks beside a
// running thread skips itself where ALOE_ALLOCATOR_NOT_FORK_SAFE is defined; the release
// and ThreadSanitizer suites run it.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define ALOE_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALOE_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(ALOE_TEST_UNDER_ASAN) && ((defined(__clang__) && __clang_major__ < 18) || (!defined(__clang__) && __GNUC__ < 15))
#define ALOE_ALLOCATOR_NOT_FORK_SAFE 1
#define ALOE_ALLOCATOR_NOT_FORK_SAFE_WHY                                                                               \
    "this AddressSanitizer does not hold its allocator's locks across fork(), so a child forked while another "      \
    "thread allocates can block inside the sanitizer (LLVM < 18, GCC < 15); the release and ThreadSanitizer suites " \
    "run this case"
#endif
