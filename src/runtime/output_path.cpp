#include "runtime/output_path.hpp"

#include "runtime/config.hpp"

#include <unistd.h>

#include <climits>

namespace aloe::runtime {

process_identity process_identity::of_this_process(const config& cfg) {
    process_identity who;
    who.pid = static_cast<long>(::getpid());
    who.rank = cfg.job_rank;
    who.job_size = cfg.job_size;
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof host - 1) == 0) who.host = host;
    if (who.host.empty()) who.host = "localhost";
    return who;
}

namespace {

// "dir/stats.json" -> "dir/stats.rank3.json"; a name without an extension (or a dot file)
// gets the suffix at its end.
std::string with_rank(const std::string& path, int rank) {
    const std::string tag = ".rank" + std::to_string(rank);
    const std::size_t slash = path.rfind('/');
    const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
    const std::size_t dot = path.rfind('.');
    if (dot == std::string::npos || dot <= base) return path + tag;
    return path.substr(0, dot) + tag + path.substr(dot);
}

}  // namespace

std::string expand_output_path(std::string_view pattern, const process_identity& who) {
    // Empty is "not asked for": it must stay empty, or every rank of a job would write a
    // stray `.rank<r>` file (and turn on what the empty setting meant to leave off).
    if (pattern.empty()) return {};
    std::string out;
    bool names_process = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c != '%' || i + 1 == pattern.size()) {
            out += c;
            continue;
        }
        switch (pattern[i + 1]) {
        case 'p': out += std::to_string(who.pid); names_process = true; break;
        case 'r': out += std::to_string(who.rank < 0 ? 0 : who.rank); names_process = true; break;
        case 'h': out += who.host; break;
        case '%': out += '%'; break;
        default: out += c; continue;  // not an escape: keep the % and read on
        }
        ++i;
    }
    if (!names_process && who.rank >= 0 && who.job_size > 1 && out != "-") return with_rank(out, who.rank);
    return out;
}

}  // namespace aloe::runtime
