/// @file version.hpp
#pragma once

#include <aloe/export.h>

namespace aloe {

/// The library's version, e.g. "0.1.0".
ALOE_API const char* version() noexcept;

}  // namespace aloe
