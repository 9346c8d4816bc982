#include "json_writer.hpp"

#include "runtime/json_text.hpp"

namespace aloe_apps {

void json_writer::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) out_ += ", ";
        first_.back() = false;
    }
}

json_writer& json_writer::begin_object() {
    before_value();
    out_ += '{';
    first_.push_back(true);
    return *this;
}

json_writer& json_writer::end_object() {
    out_ += '}';
    first_.pop_back();
    return *this;
}

json_writer& json_writer::begin_array() {
    before_value();
    out_ += '[';
    first_.push_back(true);
    return *this;
}

json_writer& json_writer::end_array() {
    out_ += ']';
    first_.pop_back();
    return *this;
}

json_writer& json_writer::key(std::string_view k) {
    before_value();
    out_ += aloe::runtime::json_quote(k);
    out_ += ": ";
    after_key_ = true;
    return *this;
}

json_writer& json_writer::value(double x) {
    before_value();
    out_ += aloe::runtime::json_number(x);
    return *this;
}

json_writer& json_writer::value(std::int64_t x) {
    before_value();
    out_ += std::to_string(x);
    return *this;
}

json_writer& json_writer::value(bool b) {
    before_value();
    out_ += b ? "true" : "false";
    return *this;
}

json_writer& json_writer::value(std::string_view s) {
    before_value();
    out_ += aloe::runtime::json_quote(s);
    return *this;
}

json_writer& json_writer::null() {
    before_value();
    out_ += "null";
    return *this;
}

json_writer& json_writer::raw(std::string_view json) {
    before_value();
    out_ += json;
    return *this;
}

}  // namespace aloe_apps
