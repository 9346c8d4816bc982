// The process's tuning memory (ALOE_TUNING, `aloe run --tuning FILE`): what each adaptive
// site learnt (site_memory.hpp), kept in a text file for the next run of the same binary on
// the same kind of machine (docs/tuning.md).
//
// Key of an entry: the machine (a fingerprint of the CPU model and the online CPU count, so
// that the nodes of a cluster share their tuning and a different machine does not), the
// GNU build-id of the site's module (another build of the binary: stale), the site's name
// and the team size.
//
// Life: the file is read once, when the first adaptive site asks; entries of other machines
// and other builds are kept in the file but not used (one note says how many). At exit the
// entries this process kept are merged into the file as it is then, under an exclusive lock
// on a sibling `FILE.lock`, and the file is replaced atomically (runtime/output_file.hpp):
// several processes of a job write one file without losing each other's entries. For one
// key the entry with more invocations behind it wins (a tie: the later writer). A file that
// cannot be parsed is never written: its entries are not recalled, and the note names the
// line and why. A child of fork() forgets what its parent kept.
#pragma once

#include "adapt/site_memory.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace aloe::adapt {

class tuning_file final : public tuning_memory {
public:
    /// `machine`: the fingerprint of this machine (machine_fingerprint()); `build_id_of`: the
    /// build-id of a site's module (module_build_id()). Both injectable for tests.
    using build_id_lookup = std::string (*)(std::string_view site);
    tuning_file(std::string path, std::string machine, build_id_lookup build_id_of);

    std::optional<site_memory> recall(std::string_view site, int threads) override;
    void keep(std::string_view site, int threads, const site_memory& memory) override;

    /// Merges what this process kept into the file (locked, atomic). False with `error` set
    /// when the file could not be written or was not parseable (then it is left as it was).
    bool write(std::string& error);
    /// Reads the file now (recall() does it the first time); false with `error` when it is
    /// unreadable or corrupt. A missing file is empty, not an error.
    bool load(std::string& error);
    /// Forgets what this process kept (a child of fork()).
    void forget_kept();

    const std::string& path() const noexcept { return path_; }
    std::size_t kept_count() const;

    struct key {
        std::string machine, build_id, site;
        int threads = 0;
        auto operator<=>(const key&) const = default;
    };
    struct entry {
        site_memory memory;
    };
    /// The file's text for `entries` and its parse (exposed for tests).
    static std::string format(const std::map<key, entry>& entries);
    static bool parse(std::string_view text, std::map<key, entry>& entries, std::string& error);

private:
    bool load_locked(std::string& error);

    std::string path_;
    std::string machine_;
    build_id_lookup build_id_of_;
    mutable std::mutex mutex_;
    bool loaded_ = false;
    bool corrupt_ = false;
    std::map<key, entry> on_disk_;  // as read at start
    std::map<key, entry> kept_;     // what this process kept
};

/// "model name" of the first CPU in /proc/cpuinfo (else the architecture) and the count of
/// online CPUs: what makes a tuning carry over between two machines.
std::string machine_fingerprint();
/// The GNU build-id (hex) of the module a site belongs to: "module+0xOFFSET" names the
/// module; any other name (a native API site) belongs to the main program. A module without
/// a build-id: "size-<bytes>-mtime-<seconds>" of its file; unknown: "".
std::string module_build_id(std::string_view site);

/// The process's tuning memory: null unless ALOE_TUNING names a file. Writes it at exit.
tuning_memory* process_tuning_memory();

}  // namespace aloe::adapt
