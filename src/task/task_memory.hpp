// task_memory.cpp's one internal entry: the lock of the depot through which threads hand
// batches of blocks to each other. Held around a vector's push or pop; the fork hooks take
// it (fork_rank::task_memory), and tests hold it to show a fork child does not inherit it held.
#pragma once

#include <mutex>

namespace aloe::detail {

std::mutex& task_memory_depot_mutex();

}  // namespace aloe::detail
