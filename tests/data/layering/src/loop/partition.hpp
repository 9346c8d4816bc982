// Fixture: loop including runtime (allowed).
#pragma once
#include "runtime/clock.hpp"
