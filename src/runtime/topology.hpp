// The machine's cores, found by hwloc, and binding of worker threads to them.
//
// hwloc is the one source of topology; when it fails, one core per online CPU is assumed
// and that fallback is reported once.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace aloe::runtime {

enum class proc_bind_kind;

class topology {
public:
    /// Discovers this machine (or, for tests, loads an hwloc XML file when `xml_path` is
    /// not empty).
    explicit topology(const std::string& xml_path = {});
    ~topology();
    topology(const topology&) = delete;
    topology& operator=(const topology&) = delete;

    int cores() const noexcept;           ///< physical cores usable by this process
    int processing_units() const noexcept;///< hardware threads usable by this process
    int packages() const noexcept;
    int numa_nodes() const noexcept;
    bool from_hwloc() const noexcept;     ///< false when the fallback is in use
    std::string describe() const;         ///< a few lines for `aloe info`

    /// The core (index among cores()) worker `worker` of a `team_size` team goes to.
    int core_for_worker(int worker, int team_size, proc_bind_kind bind) const noexcept;

    /// Binds the calling thread to core `core`. Returns false (and reports once) on failure.
    bool bind_current_thread(int core) const;

    /// The OS indexes of the hardware threads of core `core` (what the kernel calls CPUs);
    /// empty when `core` is out of range.
    std::vector<int> cpus_of_core(int core) const;

    /// The topology of this process, discovered on first use.
    static const topology& machine();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace aloe::runtime
