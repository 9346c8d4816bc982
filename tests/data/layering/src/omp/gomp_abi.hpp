// Fixture: the interposer including every layer below it (allowed).
#pragma once
#include "adapt/probes.hpp"
#include "loop/partition.hpp"
#include "runtime/clock.hpp"
