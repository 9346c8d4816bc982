// Fixture: the lowest layer, including only the standard library.
#pragma once
#include <chrono>
