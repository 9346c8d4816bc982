// What the interposer does with a loop it could take over: the loop's own schedule run by
// aloe ("program"), libgomp unchanged ("forward"), or an aloe schedule. Chosen for every
// loop by --schedule / ALOE_SCHEDULE, and per loop site by a rules file (ALOE_OMP_RULES):
//
//   # site                  what
//   *                       adaptive                 # every site the lines below do not name
//   jacobi3d+0x1f2c         staggered,fs=0.7,chunk=8 # a site as `aloe run` prints it
//   stencil.c:42            forward                  # a source line (needs -g and addr2line)
//
// The first line naming a site wins; `*` applies where no line names the site. Parsing is
// strict: a bad line is an error naming the file, the line and what was wrong.
#pragma once

#include <aloe/schedule.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::omp {

struct loop_choice {
    enum class kind_t { program, forward, schedule } kind = kind_t::program;
    aloe::schedule spec;  ///< kind_t::schedule only
    std::string text() const;
};

/// "program", "forward" or an aloe schedule string; nullopt and `error` when it is none.
std::optional<loop_choice> parse_loop_choice(std::string_view text, std::string& error);

struct loop_rule {
    std::string site;  ///< "*", "module+0xOFF" or "file:line"
    loop_choice choice;
    int line = 0;      ///< in the rules file
};

struct loop_rules {
    std::vector<loop_rule> rules;
    /// Whether some rule names a source line (then sites need addr2line at first use).
    bool names_source_lines() const;
    /// The rule for a site named `site_name` whose call is at `source_line` ("file:line",
    /// empty when unknown); nullptr when no rule applies.
    const loop_rule* match(std::string_view site_name, std::string_view source_line) const;
};

/// Largest rules file read: 1 MiB holds about ten thousand rules of a hundred bytes, more
/// loop sites than ALOE_SITE_LIMIT keeps (4096 by default), yet reading it costs a
/// millisecond in every interposed process. A bound at all is what matters: `--rules
/// /dev/zero` or a wrong multi-gigabyte file must be refused at once, not read.
inline constexpr std::size_t max_rules_file_bytes = std::size_t{1} << 20;
/// Longest line: a site and a schedule are under a hundred bytes; a 4 KiB line is no rule.
inline constexpr std::size_t max_rules_line_bytes = 4096;
/// Messages kept for one file; beyond them one more line says how many were left out, so a
/// binary file given by mistake prints a screen of errors, not a million.
inline constexpr std::size_t max_rules_errors = 20;

/// Parses a rules file's text; false and one message per bad line in `errors`, each starting
/// `file:line: ` (the first max_rules_errors, then one "file: … and N more errors"). A
/// leading UTF-8 byte order mark is skipped and CRLF line ends are accepted; the file name
/// and the quoted text are escaped with runtime::printable.
bool parse_loop_rules(std::string_view text, std::string_view file_name, loop_rules& out,
                      std::vector<std::string>& errors);

/// Reads and parses `path` (a symbolic link is followed). One error, naming the file, when it
/// cannot be read, is not a regular file ("is a directory", "is a character device", "is a
/// FIFO", …; checked on the opened descriptor, so a renamed file cannot slip in) or is larger
/// than max_rules_file_bytes ("is larger than 1 MiB"; at most that many bytes plus one are
/// read, so /dev/zero-like inputs end at once).
bool load_loop_rules(const std::string& path, loop_rules& out, std::vector<std::string>& errors);

}  // namespace aloe::omp
