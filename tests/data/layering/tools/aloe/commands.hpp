// Fixture: tools including any layer (allowed).
#pragma once
#include "omp/gomp_abi.hpp"
#include "adapt/probes.hpp"
#include <aloe/good_public.hpp>
