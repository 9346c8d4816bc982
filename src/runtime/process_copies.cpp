#include "runtime/process_copies.hpp"

#include "runtime/report.hpp"

#include <dlfcn.h>

// Every copy defines the anchor; a dynamic lookup finds libaloe.so's (an executable's copy
// is not in the dynamic symbol table), so only a copy that is not libaloe.so sees another.
extern "C" __attribute__((visibility("default"), used)) const char aloe_runtime_anchor = 0;

namespace aloe::runtime {

bool another_copy_loaded() noexcept {
    const void* found = dlsym(RTLD_DEFAULT, "aloe_runtime_anchor");
    return found != nullptr && found != &aloe_runtime_anchor;
}

void note_other_copies() {
    static const bool noted = [] {
        if (!another_copy_loaded()) return false;
        report_once({report_level::warning, report_category::runtime, "W015",
                     "this program carries its own copy of aloe (libaloe.a) and another one (libaloe.so, "
                     "e.g. from aloe run's interposer) is loaded too: each keeps its own team, counters and "
                     "tuners, and their threads compete for the cores",
                     "link the program with libaloe.so (aloe::aloe, or pkg-config aloe) to share one"});
        return true;
    }();
    (void)noted;
}

}  // namespace aloe::runtime
