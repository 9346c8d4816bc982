// Fixture: a public header with three includes it may not have (lines 4, 5, 6).
#pragma once
#include <aloe/good_public.hpp>
#include "runtime/team.hpp"
#include <hwloc.h>
#include <aloe/missing.hpp>
#include <cstdint>
#include "good_public.hpp"
