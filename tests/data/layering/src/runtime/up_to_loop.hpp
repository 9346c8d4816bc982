// Fixture: runtime including loop (line 6) and tools (line 7); the rest is allowed or
// commented out.
#pragma once
#include "runtime/clock.hpp"
#include <aloe/good_public.hpp>
#include "loop/partition.hpp"
#include "../../tools/aloe/commands.hpp"
// #include "adapt/probes.hpp"
/*
#include "omp/gomp_abi.hpp"
*/
