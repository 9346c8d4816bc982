// A small streaming writer for the run record: objects, arrays, keys and scalars, with the
// commas placed for the caller. Escaping and number format come from runtime/json_text.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aloe_apps {

class json_writer {
public:
    json_writer& begin_object();
    json_writer& end_object();
    json_writer& begin_array();
    json_writer& end_array();
    json_writer& key(std::string_view k);
    json_writer& value(double x);
    json_writer& value(std::int64_t x);
    json_writer& value(int x) { return value(static_cast<std::int64_t>(x)); }
    json_writer& value(bool b);
    json_writer& value(std::string_view s);
    json_writer& value(const char* s) { return value(std::string_view(s)); }
    json_writer& null();
    /// Already-formatted JSON (a nested record from elsewhere).
    json_writer& raw(std::string_view json);

    const std::string& text() const noexcept { return out_; }

private:
    void before_value();
    std::string out_;
    std::vector<bool> first_;  // per open container: nothing written in it yet
    bool after_key_ = false;
};

}  // namespace aloe_apps
