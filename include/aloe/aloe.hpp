/// @file aloe.hpp
/// Umbrella header of the aloe C++ API.
#pragma once

#include <aloe/error.hpp>
#include <aloe/knob.hpp>
#include <aloe/loop_handle.hpp>
#include <aloe/loop_site.hpp>
#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>
#include <aloe/stats.hpp>
#include <aloe/subrange.hpp>
#include <aloe/team.hpp>
#include <aloe/version.hpp>
