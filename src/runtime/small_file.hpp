// Reading the small text files of /proc and /sys under a root folder ("/" in production, a
// recorded tree in tests/data/ for tests): machine capabilities and cgroup limits.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace aloe::runtime {

/// `relative` (leading slashes ignored) under `root`; "/" and "" both mean the real root.
std::filesystem::path under_root(const std::string& root, std::string_view relative);

struct small_file {
    std::optional<std::string> text;  ///< the file's contents, trailing blanks removed
    int error = 0;                    ///< errno when it could not be read
};

/// The whole file at `path` (these files are a few KB at most; mountinfo is the largest).
small_file read_small_file(const std::filesystem::path& path);

}  // namespace aloe::runtime
