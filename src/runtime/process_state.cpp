#include "runtime/process_state.hpp"

#include "runtime/small_file.hpp"

#include <string>

namespace aloe::runtime {

char process_state(pid_t pid) noexcept {
    try {
        const small_file f = read_small_file("/proc/" + std::to_string(pid) + "/stat");
        if (!f.text) return 0;
        // "pid (comm) state …": comm may hold blanks and ')', so only the last ')' closes it.
        const std::string& text = *f.text;
        const std::size_t close = text.rfind(')');
        return close != std::string::npos && close + 2 < text.size() ? text[close + 2] : 0;
    } catch (...) {  // no memory for the path
        return 0;
    }
}

}  // namespace aloe::runtime
