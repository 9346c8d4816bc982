#include "omp/loop_rules.hpp"

#include <fstream>
#include <sstream>

namespace aloe::omp {

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
        error = "'" + std::string(text) + "' is neither program, forward nor an aloe schedule (" + message + ")";
        return std::nullopt;
    }
    c.kind = loop_choice::kind_t::schedule;
    return c;
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// "module+0x1f2c", "file.c:42" or "*".
bool valid_site(std::string_view s) {
    if (s == "*") return true;
    if (const std::size_t plus = s.rfind("+0x"); plus != std::string_view::npos && plus > 0) {
        const std::string_view hex = s.substr(plus + 3);
        return !hex.empty() && hex.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
    }
    if (const std::size_t colon = s.rfind(':'); colon != std::string_view::npos && colon > 0) {
        const std::string_view digits = s.substr(colon + 1);
        return !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
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
    const std::size_t errors_before = errors.size();
    int line_number = 0;
    while (!text.empty()) {
        ++line_number;
        const std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        const std::string where = std::string(file_name) + ":" + std::to_string(line_number) + ": ";
        std::size_t gap = 0;
        while (gap < line.size() && !is_space(line[gap])) ++gap;
        const std::string_view site = line.substr(0, gap);
        const std::string_view what = trim(line.substr(gap));
        if (what.empty()) {
            errors.push_back(where + "expected '<site> <schedule>', got only '" + std::string(site) + "'");
            continue;
        }
        if (!valid_site(site)) {
            errors.push_back(where + "site '" + std::string(site) +
                             "' is none of *, module+0xOFFSET (as aloe run prints it) or file:line");
            continue;
        }
        std::string message;
        std::optional<loop_choice> choice = parse_loop_choice(what, message);
        if (!choice) {
            errors.push_back(where + message);
            continue;
        }
        out.rules.push_back({std::string(site), *choice, line_number});
    }
    return errors.size() == errors_before;
}

bool load_loop_rules(const std::string& path, loop_rules& out, std::vector<std::string>& errors) {
    std::ifstream in(path);
    if (!in) {
        errors.push_back("cannot read the rules file '" + path + "'");
        return false;
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_loop_rules(text.str(), path, out, errors);
}

}  // namespace aloe::omp
