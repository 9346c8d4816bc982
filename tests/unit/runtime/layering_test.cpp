// Layering: includes point down the layers only (DESIGN.md, "Layers"; docs/ARCHITECTURE.md).
// Lowest first: src/runtime < src/loop < src/task < src/adapt < src/omp; a layer includes its own and
// lower layers' headers, tools/ includes anything. Public headers (include/aloe) include only
// include/aloe headers and the standard library. An include is placed by its first path
// component ("loop/...") or, for a quoted path found beside the including file, by where that
// file is. Commented-out includes do not count; includes inside #if blocks do.
#include "unit/source_scan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using aloe::testing::is_source;
using aloe::testing::read_file;
using aloe::testing::strip_comments;

// The layers under src/, lowest first. New layers (power/) join here. omp/
// and mpi/ are siblings; this order lets mpi/ include omp/, which the per-layer include
// views (CMakeLists.txt) forbid at compile time.
constexpr std::array<std::string_view, 7> layers = {"runtime", "loop", "task", "adapt", "coord", "omp", "mpi"};
constexpr std::size_t tools_rank = layers.size();  // tools/ stands above every layer

// The C++20 and C standard library headers a public header may include.
constexpr std::array<std::string_view, 115> standard_headers = {
    "algorithm", "any", "array", "atomic", "barrier", "bit", "bitset", "cassert", "cctype", "cerrno", "cfenv", "cfloat",
    "charconv", "chrono", "cinttypes", "climits", "clocale", "cmath", "codecvt", "compare", "complex", "concepts",
    "condition_variable", "coroutine", "csetjmp", "csignal", "cstdarg", "cstddef", "cstdint", "cstdio", "cstdlib",
    "cstring", "ctime", "cuchar", "cwchar", "cwctype", "deque", "exception", "execution", "filesystem", "format",
    "forward_list", "fstream", "functional", "future", "initializer_list", "iomanip", "ios", "iosfwd", "iostream",
    "istream", "iterator", "latch", "limits", "list", "locale", "map", "memory", "memory_resource", "mutex", "new",
    "numbers", "numeric", "optional", "ostream", "queue", "random", "ranges", "ratio", "regex", "scoped_allocator",
    "semaphore", "set", "shared_mutex", "source_location", "span", "sstream", "stack", "stdexcept", "stop_token",
    "streambuf", "string", "string_view", "syncstream", "system_error", "thread", "tuple", "type_traits", "typeindex",
    "typeinfo", "unordered_map", "unordered_set", "utility", "valarray", "variant", "vector", "version",
    // C (C11), for aloe.h, which C programs include.
    "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h", "limits.h", "math.h", "stdalign.h", "stdarg.h",
    "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h", "time.h", "wchar.h"};

struct include_directive {
    int line = 0;
    std::string target;  // as written, without the quotes or angle brackets
    bool angled = false;
};

// The #include directives of `code` (comments already stripped).
std::vector<include_directive> includes_of(const std::string& code) {
    std::vector<include_directive> out;
    std::istringstream lines(code);
    std::string text;
    for (int line = 1; std::getline(lines, text); ++line) {
        std::size_t i = text.find_first_not_of(" \t");
        if (i == std::string::npos || text[i] != '#') continue;
        i = text.find_first_not_of(" \t", i + 1);
        constexpr std::string_view directive = "include";
        if (i == std::string::npos || text.compare(i, directive.size(), directive) != 0) continue;
        i = text.find_first_not_of(" \t", i + directive.size());
        if (i == std::string::npos || (text[i] != '"' && text[i] != '<')) continue;  // macro, include_next
        const char close = text[i] == '"' ? '"' : '>';
        const std::size_t end = text.find(close, i + 1);
        if (end == std::string::npos) continue;
        out.push_back({line, text.substr(i + 1, end - i - 1), close == '>'});
    }
    return out;
}

// Where a file of the tree stands: a layer (its rank), tools, or the public headers.
struct place {
    enum class kind { layer, tools, public_header, other } what = kind::other;
    std::size_t rank = 0;
};

// The place of `relative` (a generic path under the root).
place place_of(const std::string& relative) {
    for (std::size_t r = 0; r < layers.size(); ++r) {
        if (relative.starts_with("src/" + std::string(layers[r]) + "/")) return {place::kind::layer, r};
    }
    if (relative.starts_with("tools/")) return {place::kind::tools, tools_rank};
    if (relative.starts_with("include/aloe/")) return {place::kind::public_header, 0};
    return {};
}

std::optional<std::size_t> layer_named(std::string_view name) {
    const auto at = std::find(layers.begin(), layers.end(), name);
    if (at == layers.end()) return std::nullopt;
    return static_cast<std::size_t>(at - layers.begin());
}

// The generic path of `p` under `root`, or nothing when it lies outside.
std::optional<std::string> under_root(const fs::path& root, const fs::path& p) {
    const std::string relative =
        fs::weakly_canonical(p).lexically_relative(fs::weakly_canonical(root)).generic_string();
    if (relative.empty() || relative.starts_with("..")) return std::nullopt;
    return relative;
}

struct violation {
    std::string file;  // generic path under the root
    int line = 0;
    std::string target;
    std::string why;
};

bool operator==(const violation& a, const violation& b) {
    return a.file == b.file && a.line == b.line && a.target == b.target;
}

std::ostream& operator<<(std::ostream& os, const violation& v) {
    return os << v.file << ":" << v.line << ": #include " << v.target << " (" << v.why << ")";
}

std::string may_include(std::size_t rank) {
    std::string s;
    for (std::size_t r = 0; r <= rank && r < layers.size(); ++r) s += (s.empty() ? "" : ", ") + std::string(layers[r]);
    return s;
}

// One file's violations; `seen_downward` counts includes of a strictly lower layer (so a test
// can tell that the scanner saw real cross-layer includes).
void check_file(const fs::path& root, const fs::path& file, std::vector<violation>& out, std::size_t& seen_downward) {
    const std::string relative = *under_root(root, file);
    const place from = place_of(relative);
    if (from.what == place::kind::other) return;
    for (const include_directive& inc : includes_of(strip_comments(read_file(file)))) {
        // A quoted include found beside the file, or a relative path, is placed by where it is.
        std::optional<place> to;
        bool public_target = false;
        if (!inc.angled && (inc.target.starts_with(".") || fs::exists(file.parent_path() / inc.target))) {
            const std::optional<std::string> resolved = under_root(root, file.parent_path() / inc.target);
            if (resolved) {
                to = place_of(*resolved);
                public_target = to->what == place::kind::public_header;
            }
        }
        const std::string first = inc.target.substr(0, inc.target.find('/'));
        if (!to) {
            if (const std::optional<std::size_t> r = layer_named(first); r && first != inc.target) {
                to = place{place::kind::layer, *r};
            } else if (first == "tools") {
                to = place{place::kind::tools, tools_rank};
            }
        }
        const std::string shown = inc.angled ? "<" + inc.target + ">" : "\"" + inc.target + "\"";
        if (from.what == place::kind::public_header) {
            const bool aloe_header = first == "aloe" && fs::exists(root / "include" / inc.target);
            const bool standard = inc.angled && std::find(standard_headers.begin(), standard_headers.end(),
                                                          inc.target) != standard_headers.end();
            if (!aloe_header && !public_target && !standard) {
                out.push_back({relative, inc.line, shown,
                               "a public header includes only include/aloe headers and the standard library"});
            }
            continue;
        }
        if (!to || to->what == place::kind::other || to->what == place::kind::public_header) continue;
        if (to->rank > from.rank) {
            const std::string what = to->what == place::kind::tools ? "tools" : std::string(layers[to->rank]);
            out.push_back(
                {relative, inc.line, shown,
                 std::string(layers[from.rank]) + " may include only " + may_include(from.rank) + ", not " + what});
        } else if (to->rank < from.rank) {
            ++seen_downward;
        }
    }
}

struct scan_result {
    std::vector<violation> violations;
    std::size_t files = 0;
    std::size_t downward = 0;
};

scan_result scan(const fs::path& root) {
    scan_result result;
    for (const char* dir : {"src", "tools", "include"}) {
        if (!fs::exists(root / dir)) continue;
        for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / dir)) {
            if (!e.is_regular_file() || !is_source(e.path())) continue;
            ++result.files;
            check_file(root, e.path(), result.violations, result.downward);
        }
    }
    std::sort(result.violations.begin(), result.violations.end(), [](const violation& a, const violation& b) {
        return a.file != b.file ? a.file < b.file : a.line < b.line;
    });
    return result;
}

TEST(Layering, ScannerReadsIncludeDirectives) {
    const auto incs =
        includes_of(strip_comments("#include \"loop/a.hpp\"\n"
                                   "  #  include <adapt/b.hpp> // trailing\n"
                                   "// #include \"omp/c.hpp\"\n"
                                   "/* #include \"omp/d.hpp\"\n#include \"omp/e.hpp\" */\n"
                                   "#include_next <f.h>\n#include HEADER\n"
                                   "#if 0\n#include \"omp/g.hpp\"\n#endif\n"));
    ASSERT_EQ(incs.size(), 3u);
    EXPECT_EQ(incs[0].target, "loop/a.hpp");
    EXPECT_FALSE(incs[0].angled);
    EXPECT_EQ(incs[1].target, "adapt/b.hpp");
    EXPECT_TRUE(incs[1].angled);
    EXPECT_EQ(incs[1].line, 2);
    EXPECT_EQ(incs[2].target, "omp/g.hpp");
    EXPECT_EQ(incs[2].line, 9);
}

// tests/data/layering is a small tree with a known set of upward includes: the scanner must
// find each of them and nothing else.
TEST(Layering, FixtureTreeViolationsAreFound) {
    const fs::path root = fs::path(ALOE_TEST_DATA_DIR) / "layering";
    const scan_result r = scan(root);
    const std::vector<violation> expected = {
        {"include/aloe/bad_public.hpp", 4, "\"runtime/team.hpp\"", ""},
        {"include/aloe/bad_public.hpp", 5, "<hwloc.h>", ""},
        {"include/aloe/bad_public.hpp", 6, "<aloe/missing.hpp>", ""},
        {"src/loop/up_to_adapt.cpp", 5, "\"adapt/probes.hpp\"", ""},
        {"src/loop/up_to_adapt.cpp", 6, "\"../adapt/probes.hpp\"", ""},
        {"src/loop/up_to_omp.hpp", 4, "<omp/gomp_abi.hpp>", ""},
        {"src/runtime/up_to_loop.hpp", 6, "\"loop/partition.hpp\"", ""},
        {"src/runtime/up_to_loop.hpp", 7, "\"../../tools/aloe/commands.hpp\"", ""},
    };
    EXPECT_EQ(r.violations, expected) << ::testing::PrintToString(r.violations);
    EXPECT_EQ(r.files, 10u);
    EXPECT_GT(r.downward, 0u);
}

TEST(Layering, SourceTreeIncludesPointDown) {
    const fs::path root = ALOE_SOURCE_DIR;
    for (std::string_view layer : layers) {
        EXPECT_TRUE(fs::is_directory(root / "src" / layer)) << "src/" << layer << " is gone: update layers[]";
    }
    const scan_result r = scan(root);
    std::ostringstream listed;
    for (const violation& v : r.violations) listed << "  " << v << "\n";
    EXPECT_TRUE(r.violations.empty()) << "includes against the layering (DESIGN.md, \"Layers\"):\n" << listed.str();
    // The scanner works on real files: loop/ includes runtime/, omp/ includes loop/, and so on.
    EXPECT_GT(r.files, 0u);
    EXPECT_GT(r.downward, 0u);
}

}  // namespace
