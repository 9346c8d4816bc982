// A process's scheduling state as /proc says it: aloe run asks whether its program is stopped
// now, a client whether a daemon's pid names a live process or a zombie.
#pragma once

#include <sys/types.h>

namespace aloe::runtime {

/// The state letter of /proc/<pid>/stat (R, S, D, T, t, Z, …); 0 when it cannot be read (no
/// such process, no /proc).
char process_state(pid_t pid) noexcept;

}  // namespace aloe::runtime
