/// @file error.hpp
/// The one exception type the C++ API throws on misuse at setup (never from a hot path).
#pragma once

#include <aloe/export.h>

#include <stdexcept>
#include <string>

namespace aloe {

/// Thrown for a malformed schedule string, a bad argument, or a call aloe cannot honour.
/// The message names what was wrong, e.g. "schedule 'hybrid,fs=1.5': fs must be in [0, 1]".
class ALOE_API error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace aloe
