// aloe::version(): the project version CMake passes in (src/runtime/CMakeLists.txt).
#include <aloe/version.hpp>

#ifndef ALOE_VERSION_STRING
#error "ALOE_VERSION_STRING must be defined by the build (project(aloe VERSION ...))"
#endif

namespace aloe {

const char* version() noexcept { return ALOE_VERSION_STRING; }

}  // namespace aloe
