#include "args.hpp"

#include <charconv>
#include <cstdlib>
#include <sstream>

namespace aloe_apps {

args::args(int argc, char** argv) : program_(argc > 0 ? argv[0] : "aloe-app") {
    for (int i = 1; i < argc; ++i) words_.emplace_back(argv[i]);
    read_.assign(words_.size(), false);
    for (std::size_t i = 0; i < words_.size(); ++i) {
        if (words_[i] == "--help" || words_[i] == "-h") {
            help_ = true;
            read_[i] = true;
        }
    }
}

// Finds `--flag value` or `--flag=value`, marks the words read and returns the value (for a
// switch, the flag word itself). The last occurrence wins, as in most Unix tools.
std::optional<std::string> args::find_value(std::string_view flag, bool takes_value) {
    std::optional<std::string> found;
    for (std::size_t i = 0; i < words_.size(); ++i) {
        const std::string& w = words_[i];
        const bool with_equals = w.size() > flag.size() && w.starts_with(flag) && w[flag.size()] == '=';
        if (w == flag) {
            read_[i] = true;
            if (!takes_value) {
                found = w;
            } else if (i + 1 < words_.size()) {
                read_[i + 1] = true;
                found = words_[++i];
            } else {
                throw usage_error("flag " + std::string(flag) + " needs a value");
            }
        } else if (with_equals) {
            if (!takes_value) throw usage_error("flag " + std::string(flag) + " takes no value (got '" + w + "')");
            read_[i] = true;
            found = w.substr(flag.size() + 1);
        }
    }
    return found;
}

namespace {
std::string help_line(std::string_view flag, std::string_view value, std::string_view help) {
    std::ostringstream s;
    s << "  " << flag;
    if (!value.empty()) s << " " << value;
    s << "\n      " << help;
    return s.str();
}
}  // namespace

std::int64_t args::integer(std::string_view flag, std::int64_t fallback, std::string_view help) {
    help_lines_.push_back(help_line(flag, "N", std::string(help) + " (default " + std::to_string(fallback) + ")"));
    const std::optional<std::string> v = find_value(flag, true);
    if (!v) return fallback;
    std::int64_t out = 0;
    const char* end = v->data() + v->size();
    const auto [p, ec] = std::from_chars(v->data(), end, out);
    if (ec != std::errc() || p != end) {
        throw usage_error("flag " + std::string(flag) + ": '" + *v + "' is not an integer");
    }
    return out;
}

double args::real(std::string_view flag, double fallback, std::string_view help) {
    std::ostringstream d;
    d << fallback;
    help_lines_.push_back(help_line(flag, "X", std::string(help) + " (default " + d.str() + ")"));
    const std::optional<std::string> v = find_value(flag, true);
    if (!v) return fallback;
    char* end = nullptr;
    const double out = std::strtod(v->c_str(), &end);
    if (v->empty() || end != v->c_str() + v->size()) {
        throw usage_error("flag " + std::string(flag) + ": '" + *v + "' is not a number");
    }
    return out;
}

std::string args::text(std::string_view flag, std::string_view fallback, std::string_view help) {
    help_lines_.push_back(help_line(flag, "TEXT", std::string(help) + " (default '" + std::string(fallback) + "')"));
    const std::optional<std::string> v = find_value(flag, true);
    return v ? *v : std::string(fallback);
}

bool args::present(std::string_view flag, std::string_view help) {
    help_lines_.push_back(help_line(flag, "", help));
    return find_value(flag, false).has_value();
}

std::string args::help(std::string_view program_summary) const {
    std::ostringstream s;
    s << "usage: " << program_ << " [flags]\n" << program_summary << "\n\nflags:\n";
    for (const std::string& line : help_lines_) s << line << '\n';
    return s.str();
}

void args::reject_unread() const {
    for (std::size_t i = 0; i < words_.size(); ++i) {
        if (!read_[i]) {
            throw usage_error("unknown flag or stray word '" + words_[i] + "' (see --help)");
        }
    }
}

}  // namespace aloe_apps
