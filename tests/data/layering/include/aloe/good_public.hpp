// Fixture: a public header that includes only the standard library.
#pragma once
#include <cstdint>
#include <stdint.h>
#include <vector>
