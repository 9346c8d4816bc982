#include "runtime/small_file.hpp"

#include <cerrno>
#include <cstdio>

namespace aloe::runtime {

std::filesystem::path under_root(const std::string& root, std::string_view relative) {
    while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
    return std::filesystem::path(root.empty() ? "/" : root) / std::filesystem::path(relative);
}

small_file read_small_file(const std::filesystem::path& path) {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return {std::nullopt, errno};
    std::string text;
    char buf[4096];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    const bool failed = std::ferror(f) != 0;
    const int err = errno;
    std::fclose(f);
    if (failed) return {std::nullopt, err};
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                             text.back() == '\t')) {
        text.pop_back();
    }
    return {std::move(text), 0};
}

}  // namespace aloe::runtime
