// Test helper: captures every line report.hpp emits while it lives, and forgets which
// messages were already reported before and after, so each test starts clean. It also
// pins the info verbosity to "none", so neither the developer's ALOE_VERBOSE nor a first
// load of the real configuration can add lines; a test that wants info lines sets the
// verbosity after creating the capture.
#pragma once

#include "runtime/report.hpp"

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace aloe::runtime::testing {

class report_capture {
public:
    report_capture() {
        set_report_verbosity(no_categories);
        reset_reported_for_tests();
        previous_ = set_report_sink([this](std::string_view line) {
            std::lock_guard guard(lock_);
            lines_.emplace_back(line);
        });
    }
    ~report_capture() {
        set_report_verbosity(no_categories);
        set_report_sink(previous_);
        reset_reported_for_tests();
    }
    report_capture(const report_capture&) = delete;
    report_capture& operator=(const report_capture&) = delete;

    std::vector<std::string> lines() const {
        std::lock_guard guard(lock_);
        return lines_;
    }

    /// The captured lines that contain `needle`.
    std::vector<std::string> containing(std::string_view needle) const {
        std::vector<std::string> out;
        for (const std::string& l : lines()) {
            if (l.find(needle) != std::string::npos) out.push_back(l);
        }
        return out;
    }

private:
    mutable std::mutex lock_;
    std::vector<std::string> lines_;
    report_sink previous_;
};

}  // namespace aloe::runtime::testing
