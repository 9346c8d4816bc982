// parallel_for with `tasks[,grain=g|auto]`: the range is split in halves, each right half
// spawned as a task, until a piece has at most `grain` iterations (TBB's simple partitioner,
// on aloe's deques: thieves take the oldest, largest halves). The calling thread runs the
// leftmost piece and then helps until every piece is done.
//
// grain=auto: each loop site has a knob (include/aloe/knob.hpp) over grains from 1 to
// count/threads, started at count/(8·threads) (eight tasks per thread, a common default),
// and every call of the loop is one epoch judged by the task counters (objective overall).
// A site whose iteration count changes gets a fresh knob (its range depends on the count).
#include "adapt/task_loop_runner.hpp"

#include "loop/task_loop.hpp"
#include "runtime/counters.hpp"

#include <aloe/knob.hpp>
#include <aloe/task.hpp>
#include <aloe/team.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace aloe::adapt {

namespace {

struct split_job {
    detail::chunk_fn fn;
    void* ctx;
    std::uint64_t grain;
    task_group* group;
};

int this_worker() noexcept { return std::max(0, runtime::counter_worker()); }

void run_range(const split_job& job, std::uint64_t lo, std::uint64_t hi) {
    while (hi - lo > job.grain) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        job.group->run([&job, mid, hi] { run_range(job, mid, hi); });
        hi = mid;
    }
    job.fn(job.ctx, lo, hi, this_worker());
}

// The auto grain of each site: a knob per (site, iteration count).
struct site_knob {
    std::uint64_t count = 0;
    std::unique_ptr<knob> grain;
};

std::mutex knobs_mutex;
std::map<std::string, site_knob, std::less<>>& knobs() {
    static auto* m = new std::map<std::string, site_knob, std::less<>>;  // never destroyed: loops may run at exit
    return *m;
}

knob* knob_for(std::string_view site, std::uint64_t count) {
    const int threads = aloe::team::global().size();
    std::lock_guard lock(knobs_mutex);
    auto it = knobs().find(site);
    if (it == knobs().end()) it = knobs().emplace(std::string(site), site_knob{}).first;
    site_knob& k = it->second;
    if (k.grain == nullptr || k.count != count) {
        const auto hi = static_cast<std::int64_t>(std::max<std::uint64_t>(1, count / static_cast<std::uint64_t>(threads)));
        const std::int64_t start = std::max<std::int64_t>(1, hi / 8);
        k.grain = std::make_unique<knob>("tasks:" + std::string(site), aloe::knob_range::geometric(1, hi, 1.25), start,
                                         "objective=overall,search=golden");
        k.count = count;
    }
    return k.grain.get();
}

void run_as_tasks(const schedule& s, std::string_view site, std::uint64_t count, detail::chunk_fn fn, void* ctx) {
    knob* tuned = s.chunk() == 0 ? knob_for(site, count) : nullptr;
    const std::uint64_t grain = tuned != nullptr ? static_cast<std::uint64_t>(tuned->value())
                                                 : static_cast<std::uint64_t>(s.chunk());
    if (tuned != nullptr) tuned->epoch_begin();
    task_group group;
    const split_job job{fn, ctx, std::max<std::uint64_t>(1, grain), &group};
    run_range(job, 0, count);
    group.wait();  // the body's exceptions never get here: parallel_for's adapter catches them
    if (tuned != nullptr) tuned->epoch_done();
}

}  // namespace

void install_task_loop_runner() noexcept {
    loop::set_task_loop_runner(&run_as_tasks);
    // Knobs that measure a one-core baseline (objective=overhead+wait) limit the task
    // scheduler's workers by default.
    set_knob_concurrency_limit(&set_task_concurrency);
}

}  // namespace aloe::adapt
