// Fixture: loop including adapt by layer name (line 5) and by relative path (line 6); the
// runtime and loop includes are allowed.
#include "runtime/clock.hpp"
#include "loop/partition.hpp"
#include "adapt/probes.hpp"
#include "../adapt/probes.hpp"
#include "partition.hpp"
