#include "omp/loop_rules.hpp"

#include <charconv>
#include <cstdint>

#include "runtime/plain_text.hpp"
#include "runtime/printable_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aloe::omp {

using runtime::printable;

std::string loop_choice::text() const {
    switch (kind) {
        case kind_t::program: return "program";
        case kind_t::forward: return "forward";
        case kind_t::schedule: return spec.to_string();
    }
    return "?";
}

std::optional<loop_choice> parse_loop_choice(std::string_view text, std::string& error) {
    loop_choice c;
    if (text == "program") return c;
    if (text == "forward") {
        c.kind = loop_choice::kind_t::forward;
        return c;
    }
    std::string message;
    if (!schedule::try_parse(text, c.spec, message)) {
        error = "'" + printable(text) + "' is neither program, forward nor an aloe schedule (" + message + ")";
        return std::nullopt;
    }
    c.kind = loop_choice::kind_t::schedule;
    return c;
}

namespace {

constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

using runtime::trim;

// "module+0x1f2c", "file.c:42" or "*".
bool valid_site(std::string_view s) {
    if (s == "*") return true;
    if (const std::size_t plus = s.rfind("+0x"); plus != std::string_view::npos && plus > 0) {
        const std::string_view hex = s.substr(plus + 3);
        return !hex.empty() && hex.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
    }
    if (const std::size_t colon = s.rfind(':'); colon != std::string_view::npos && colon > 0) {
        // A line number: 1 and up, as addr2line prints it (a line 0 or one too large to be
        // any file's could never match).
        const std::string_view digits = s.substr(colon + 1);
        std::uint32_t line = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), line);
        return !digits.empty() && ec == std::errc() && end == digits.data() + digits.size() &&
               digits.find_first_not_of("0123456789") == std::string_view::npos && line > 0;
    }
    return false;
}

bool is_source_line(std::string_view s) { return s != "*" && s.rfind("+0x") == std::string_view::npos; }

// "dir/stencil.c:42" matches a rule "stencil.c:42" and "dir/stencil.c:42", not "il.c:42".
bool source_line_matches(std::string_view rule, std::string_view line) {
    if (line.size() < rule.size() || line.substr(line.size() - rule.size()) != rule) return false;
    return line.size() == rule.size() || line[line.size() - rule.size() - 1] == '/';
}

}  // namespace

bool loop_rules::names_source_lines() const {
    for (const loop_rule& r : rules)
        if (is_source_line(r.site)) return true;
    return false;
}

const loop_rule* loop_rules::match(std::string_view site_name, std::string_view source_line) const {
    const loop_rule* fallback = nullptr;
    for (const loop_rule& r : rules) {
        if (r.site == "*") {
            if (fallback == nullptr) fallback = &r;
        } else if (r.site == site_name || (!source_line.empty() && is_source_line(r.site) &&
                                           source_line_matches(r.site, source_line))) {
            return &r;
        }
    }
    return fallback;
}

bool parse_loop_rules(std::string_view text, std::string_view file_name, loop_rules& out,
                      std::vector<std::string>& errors) {
    const std::string file = printable(file_name, runtime::printable_path_limit);
    std::size_t bad_lines = 0;
    // Keeps the first max_rules_errors messages; the rest are only counted.
    const auto error = [&](int line_number, const std::string& what) {
        if (++bad_lines <= max_rules_errors) errors.push_back(file + ":" + std::to_string(line_number) + ": " + what);
    };
    if (text.substr(0, utf8_bom.size()) == utf8_bom) text.remove_prefix(utf8_bom.size());  // editors add it
    int line_number = 0;
    while (!text.empty()) {
        ++line_number;
        const std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        if (line.size() > max_rules_line_bytes) {
            error(line_number, "the line is longer than " + std::to_string(max_rules_line_bytes) + " bytes");
            continue;
        }
        if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        line = trim(line);  // also drops the '\r' of a CRLF line end
        if (line.empty()) continue;
        std::size_t gap = 0;
        while (gap < line.size() && !is_space(line[gap])) ++gap;
        const std::string_view site = line.substr(0, gap);
        const std::string_view what = trim(line.substr(gap));
        if (what.empty()) {
            error(line_number, "expected '<site> <schedule>', got only '" + printable(site) + "'");
            continue;
        }
        if (!valid_site(site)) {
            error(line_number, "site '" + printable(site) +
                                   "' is none of *, module+0xOFFSET (as aloe run prints it) or file:line");
            continue;
        }
        std::string message;
        std::optional<loop_choice> choice = parse_loop_choice(what, message);
        if (!choice) {
            error(line_number, message);
            continue;
        }
        out.rules.push_back({std::string(site), *choice, line_number});
    }
    if (bad_lines > max_rules_errors)
        errors.push_back(file + ": \xE2\x80\xA6 and " + std::to_string(bad_lines - max_rules_errors) + " more errors");
    return bad_lines == 0;
}

namespace {

// What a file that is not a regular file is, for the message refusing it.
std::string_view file_type_name(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// Closes the descriptor on every path out of load_loop_rules.
struct file_descriptor {
    int fd;
    ~file_descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

bool load_loop_rules(const std::string& path, loop_rules& out, std::vector<std::string>& errors) {
    const std::string name = "the rules file '" + printable(path, runtime::printable_path_limit) + "'";
    const auto refuse = [&](const std::string& why) {
        errors.push_back(name + " " + why);
        return false;
    };
    // A first look by name, so a device is never opened (opening one can have effects).
    struct stat by_name {};
    if (::stat(path.c_str(), &by_name) != 0) return refuse(std::string("cannot be read: ") + std::strerror(errno));
    if (!S_ISREG(by_name.st_mode)) return refuse("is " + std::string(file_type_name(by_name.st_mode)));
    // O_NONBLOCK: if the name became a FIFO since the stat, open must not wait for a writer.
    // A symbolic link is followed: it is the user's own input file.
    file_descriptor f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
    if (f.fd < 0) return refuse(std::string("cannot be read: ") + std::strerror(errno));
    // The type that counts is the opened file's (the name may have changed since the stat).
    struct stat opened {};
    if (::fstat(f.fd, &opened) != 0) return refuse(std::string("cannot be read: ") + std::strerror(errno));
    if (!S_ISREG(opened.st_mode)) return refuse("is " + std::string(file_type_name(opened.st_mode)));
    const std::string too_large = "is larger than " + std::to_string(max_rules_file_bytes / 1024 / 1024) + " MiB";
    if (opened.st_size > static_cast<off_t>(max_rules_file_bytes)) return refuse(too_large);
    // Read at most one byte beyond the limit: a file that grows while read is still bounded.
    std::string text(max_rules_file_bytes + 1, '\0');
    std::size_t have = 0;
    while (have < text.size()) {
        const ssize_t n = ::read(f.fd, text.data() + have, text.size() - have);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            return refuse(std::string("cannot be read: ") + std::strerror(errno));
        }
        have += static_cast<std::size_t>(n);
    }
    if (have > max_rules_file_bytes) return refuse(too_large);
    text.resize(have);
    return parse_loop_rules(text, path, out, errors);
}

}  // namespace aloe::omp
