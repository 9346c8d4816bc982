// Command-line flags for the workloads: `--name value` or `--name=value`, each declared with
// its default and a help line, so `--help` lists exactly what a program reads.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace aloe_apps {

/// Thrown for a bad command line; the message names the flag and the value.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class args {
public:
    args(int argc, char** argv);

    /// Each reader consumes the flag when present and returns its value, else `fallback`.
    /// A value that does not parse completely throws usage_error naming the flag.
    std::int64_t integer(std::string_view flag, std::int64_t fallback, std::string_view help);
    double real(std::string_view flag, double fallback, std::string_view help);
    std::string text(std::string_view flag, std::string_view fallback, std::string_view help);
    /// A switch without a value (`--timeline`).
    bool present(std::string_view flag, std::string_view help);

    /// True when --help was given: the caller prints help() and exits 0 after reading
    /// every flag (so the help lists them all).
    bool help_requested() const noexcept { return help_; }
    std::string help(std::string_view program_summary) const;

    /// Throws usage_error naming the first flag nobody read (a typo must not be ignored).
    void reject_unread() const;

    /// The words as given, for re-executing the program.
    const std::vector<std::string>& words() const noexcept { return words_; }
    const std::string& program() const noexcept { return program_; }

private:
    std::optional<std::string> find_value(std::string_view flag, bool takes_value);

    std::string program_;
    std::vector<std::string> words_;
    std::vector<bool> read_;
    std::vector<std::string> help_lines_;
    bool help_ = false;
};

}  // namespace aloe_apps
