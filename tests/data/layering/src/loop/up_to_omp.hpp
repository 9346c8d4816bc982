// Fixture: loop including the interposer (line 4); <omp.h> is not the omp/ layer.
#pragma once
#include <omp.h>
#include <omp/gomp_abi.hpp>
