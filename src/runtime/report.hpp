// Diagnostics: one module, three levels, one category per layer, each cause reported once.
//
// Format: `aloe: warning W014 [loop]: <what>; using <fallback>`. Warnings and fatal
// errors always print; info lines print only for the categories named in ALOE_VERBOSE
// ("all", or a comma list such as "runtime,loop").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace aloe::runtime {

enum class report_level { info, warning, fatal };
enum class report_category { runtime, topology, config, loop, caps, omp, mpi, coord };

/// One message: a stable ID (e.g. "W014"), what happened, and the fallback or hint.
struct report_message {
    report_level level;
    report_category category;
    std::string_view id;
    std::string what;
    std::string fallback;  ///< "using …" part; empty when there is none
};

/// Emits `msg` unless the same ID and text were already reported in this process.
/// Returns true when it was emitted (or, for an info line reported while the configuration
/// is still loading, queued). Thread-safe. The sink runs under report's lock: a sink must
/// not report.
bool report_once(const report_message& msg);

/// Emits `msg` every time (for user-requested output). Thread-safe.
void report(const report_message& msg);

/// The text one message prints as, without the trailing newline.
std::string format_report(const report_message& msg);

/// Whether a message's fallback ("; using …") is printed. A caller that refuses bad settings
/// instead of falling back (aloe run's check before the program starts) leaves it out: the
/// fallback would not happen.
enum class fallback_text { shown, left_out };

/// Where messages go: stderr unless a test replaces it. Returns the previous sink; the
/// fallback setting holds until the next call.
using report_sink = std::function<void(std::string_view line)>;
report_sink set_report_sink(report_sink sink, fallback_text fallbacks = fallback_text::shown);

/// Forgets which messages were already reported (tests only).
void reset_reported_for_tests();

/// Writes user-requested text of several lines (the settings table of ALOE_DISPLAY_ENV)
/// through the sink, one call per line, with no prefix. Thread-safe.
void report_text(std::string_view text);

/// A set of categories, one bit per report_category.
using category_set = std::uint32_t;

constexpr category_set category_bit(report_category c) noexcept {
    return category_set{1} << static_cast<unsigned>(c);
}
inline constexpr category_set no_categories = 0;
inline constexpr category_set all_categories = category_bit(report_category::runtime) |
    category_bit(report_category::topology) | category_bit(report_category::config) |
    category_bit(report_category::loop) | category_bit(report_category::caps) |
    category_bit(report_category::omp) | category_bit(report_category::mpi) |
    category_bit(report_category::coord);

/// Sets the categories whose info lines print. config.cpp calls it with ALOE_VERBOSE once
/// the configuration is loaded; info lines reported before that are held back and then
/// printed or dropped. Tests call it directly. Thread-safe.
void set_report_verbosity(category_set shown);

/// Whether info lines of `c` print. Loads the configuration on first use (unless this
/// thread is loading it, in which case the answer is false and report() holds lines back).
bool info_enabled(report_category c);

/// The category named `name` ("runtime", "topology", "config", "loop", "caps", "omp", "mpi",
/// "coord"); nullopt
/// when there is none. Exact, lower-case match.
std::optional<report_category> parse_report_category(std::string_view name);

/// Every category, in declaration order (for help texts and validation).
inline constexpr report_category all_report_categories[] = {
    report_category::runtime, report_category::topology, report_category::config,
    report_category::loop, report_category::caps, report_category::omp, report_category::mpi,
    report_category::coord};

std::string_view to_string(report_level l);
std::string_view to_string(report_category c);

}  // namespace aloe::runtime
