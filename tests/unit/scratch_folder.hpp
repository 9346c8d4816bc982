// Test helper: a fresh folder under the temporary directory for one test, removed with all
// it holds, and the reading and splitting of text that tests of files written share.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace aloe::testing {

class scratch_folder {
public:
    /// A new folder named `<prefix>-XXXXXX`; throws when none can be made.
    explicit scratch_folder(std::string_view prefix) {
        std::string pattern = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
        path_ = pattern;
    }
    ~scratch_folder() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    scratch_folder(const scratch_folder&) = delete;
    scratch_folder& operator=(const scratch_folder&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }
    /// The path of `name` in the folder (whether or not it exists).
    std::string file(const std::string& name) const { return (path_ / name).string(); }

    /// The names in the folder, sorted.
    std::vector<std::string> entries() const {
        std::vector<std::string> out;
        for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    std::filesystem::path path_;
};

/// The whole file, bytes as they are; empty when it cannot be read.
inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// `text` cut at each `at` (no empty last piece after a final `at`).
inline std::vector<std::string> split_text(const std::string& text, char at) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(text);
    while (std::getline(in, item, at)) out.push_back(item);
    return out;
}

}  // namespace aloe::testing
