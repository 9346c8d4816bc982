// Fixture: adapt including loop and runtime (allowed).
#pragma once
#include "loop/partition.hpp"
#include "runtime/clock.hpp"
