// The call-path key of an intercepted call, at a bounded cost. The Kale thesis (after Adagio)
// hashes the whole stack, unwinding it with libunwind at every call: microseconds, and more
// with depth. Here the path is the call site (the wrapper's return address) and the depth of
// the stack there (how far below its thread's stack top the caller's frame is): two paths
// that reach one call site from different callers differ in depth unless their frames happen
// to have the same sizes. Cost: a return address, a frame address, and a subtraction; the
// thread's stack top is looked up once per thread.
#pragma once

#include "mpi/intercepted_calls.hpp"

#include <cstdint>

namespace aloe::mpi {

struct call_path {
    mpi_call call{};
    const void* site = nullptr;  ///< the program's return address into MPI
    std::uint32_t depth = 0;     ///< 16-byte units below the thread's stack top; 0: unknown
};

/// The top of the calling thread's stack (0 when it cannot be found), cached per thread.
std::uintptr_t thread_stack_top() noexcept;

/// The depth of `frame` (a frame address of the wrapper) below the thread's stack top.
inline std::uint32_t stack_depth(const void* frame) noexcept {
    const std::uintptr_t top = thread_stack_top();
    const auto here = reinterpret_cast<std::uintptr_t>(frame);
    if (top == 0 || here > top || top - here > (std::uintptr_t{1} << 36)) return 0;
    return static_cast<std::uint32_t>((top - here) >> 4);
}

/// The 64-bit key of a path, never 0.
inline std::uint64_t path_key(const call_path& p) noexcept {
    std::uint64_t h = reinterpret_cast<std::uintptr_t>(p.site) ^ (std::uint64_t{p.depth} << 40) ^
                      (std::uint64_t{static_cast<std::uint8_t>(p.call)} << 58);
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return h == 0 ? 1 : h;
}

}  // namespace aloe::mpi

/// In a wrapper: the path of the call being made to it.
#define ALOE_CALL_PATH(call) \
    ::aloe::mpi::call_path { call, __builtin_return_address(0), ::aloe::mpi::stack_depth(__builtin_frame_address(0)) }
