// Writing an output file (statistics, summary, trace) so that nothing is lost, torn or
// overwritten by accident.
//
// A regular file is never written in place: the text goes into a new file created next to
// the target (O_CREAT|O_EXCL|O_NOFOLLOW, so nothing planted there is opened), every write
// and the close are checked, and the new file is renamed over the target. Readers and other
// writers therefore see the old file or the new one, never a mix, and a symbolic link at the
// target is replaced, never written through. In a shared sticky folder (/tmp) a symbolic
// link that another user owns is refused outright: it can only have been planted. Character
// devices and FIFOs (/dev/null, a terminal, a named pipe), and the system's links to them
// under /dev and /proc (/dev/stdout), are written in place, appending: renaming over them
// would replace the device node or the link. Not durable against a crash (no fsync): these
// are reports, written at exit.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

namespace aloe::runtime {

/// Permission bits of a file aloe creates for the user to read (the umask still applies).
inline constexpr mode_t shared_file_mode = 0644;
/// Permission bits of a file only its owner may read (reports inside aloe run's folder).
inline constexpr mode_t private_file_mode = 0600;

/// Writes `text` to `path` as described above. Returns false and sets `error` to a sentence
/// naming the path and the cause (with strerror) when anything fails; the target is then
/// unchanged and no temporary file is left behind.
bool write_output_file(const std::string& path, std::string_view text, std::string& error,
                       mode_t mode = shared_file_mode);

/// Receives the file's text piece by piece; returns false once a write has failed.
using output_sink = std::function<bool(std::string_view piece)>;

/// The same for text too large to build in memory first (a long trace): `produce` hands its
/// pieces to the sink it is given; writes are buffered.
bool write_output_file(const std::string& path, const std::function<void(const output_sink&)>& produce,
                       std::string& error, mode_t mode = shared_file_mode);

/// Whether write_output_file writes `path` in place (an existing character device or FIFO,
/// a link to one, or a system link under /dev or /proc) rather than by rename: then the file
/// itself must be writable, not its folder. A planted link is reported by write_output_file.
bool written_in_place(const std::string& path) noexcept;

/// Whether a symbolic link owned by `link_owner` in a folder of mode `folder_mode` may have
/// been planted by another user (a sticky, world-writable folder such as /tmp), for the
/// process running as `me`. Exposed for tests.
bool planted_link(uid_t link_owner, mode_t folder_mode, uid_t me) noexcept;

}  // namespace aloe::runtime
