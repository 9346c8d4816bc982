#include "epochs.hpp"

#include "common/harness.hpp"
#include "common/taskflow_header.hpp"

#include <aloe/task.hpp>

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/task_arena.h>

#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

namespace aloe_apps::stencil {

namespace {

/// The partitions partition p's update reads at the timestep before (itself and its two
/// neighbours), each once: fewer than three on a ring of one or two partitions.
int inputs_of(const partitioning& parts, std::int64_t p, std::array<std::int64_t, 3>& out) noexcept {
    int k = 0;
    for (const std::int64_t q : {parts.left(p), p, parts.right(p)}) {
        bool seen = false;
        for (int i = 0; i < k; ++i) seen = seen || out[i] == q;
        if (!seen) out[k++] = q;
    }
    return k;
}

class serial_runner final : public epoch_runner {
public:
    void prepare(const partitioning&, int) override {}
    void run(ring& r, const partitioning& parts, int steps) override {
        for (int s = 0; s < steps; ++s) step_serial(r, parts);
    }
};

class aloe_runner final : public epoch_runner {
public:
    void prepare(const partitioning&, int) override {}
    void run(ring& r, const partitioning& parts, int steps) override {
        using partition_future = aloe::shared_future<void>;
        const auto count = static_cast<std::size_t>(parts.count);
        const partition_future ready = aloe::make_ready_future().share();
        std::vector<partition_future> before(count, ready), after(count);
        const double c = r.coefficient;
        for (int s = 0; s < steps; ++s) {
            const double* in = r.state(s);
            double* out = r.state(s + 1);
            for (std::int64_t p = 0; p < parts.count; ++p) {
                after[static_cast<std::size_t>(p)] = aloe::dataflow(
                    [in, out, &parts, p, c](const partition_future&, const partition_future&, const partition_future&) {
                        update_partition(in, out, parts, p, c);
                    },
                    before[static_cast<std::size_t>(parts.left(p))], before[static_cast<std::size_t>(p)],
                    before[static_cast<std::size_t>(parts.right(p))]);
            }
            std::swap(before, after);
        }
        for (const partition_future& f : before) f.get();  // rethrows a task's failure
        r.now = (r.now + steps) & 1;
    }
};

class tbb_runner final : public epoch_runner {
public:
    explicit tbb_runner(tbb::task_arena& arena) : arena_(arena) {}
    ~tbb_runner() override {
        arena_.execute([&] { clear(); });
    }
    tbb_runner(const tbb_runner&) = delete;
    tbb_runner& operator=(const tbb_runner&) = delete;

    void prepare(const partitioning& parts, int steps) override {
        if (graph_ && parts == parts_ && steps == steps_) return;
        // The graph attaches to the arena it is made in: made in ours, it runs there.
        arena_.execute([&] {
            clear();
            parts_ = parts;
            steps_ = steps;
            graph_ = std::make_unique<tbb::flow::graph>();
            start_ = std::make_unique<tbb::flow::broadcast_node<tbb::flow::continue_msg>>(*graph_);
            nodes_.reserve(static_cast<std::size_t>(epoch_runner::tasks(parts, steps)));
            std::array<std::int64_t, 3> inputs{};
            for (int s = 0; s < steps; ++s) {
                for (std::int64_t p = 0; p < parts.count; ++p) {
                    nodes_.push_back(std::make_unique<node>(*graph_, [this, s, p](const tbb::flow::continue_msg&) {
                        update_partition(ring_->state(s), ring_->state(s + 1), parts_, p, ring_->coefficient);
                        return tbb::flow::continue_msg();
                    }));
                    if (s == 0) {
                        tbb::flow::make_edge(*start_, *nodes_.back());
                        continue;
                    }
                    for (int i = 0, k = inputs_of(parts, p, inputs); i < k; ++i)
                        tbb::flow::make_edge(*nodes_[index(s - 1, inputs[i])], *nodes_.back());
                }
            }
        });
    }

    void run(ring& r, const partitioning&, int steps) override {
        ring_ = &r;
        arena_.execute([&] {
            start_->try_put(tbb::flow::continue_msg());
            graph_->wait_for_all();
        });
        r.now = (r.now + steps) & 1;
    }

private:
    using node = tbb::flow::continue_node<tbb::flow::continue_msg>;
    std::size_t index(int s, std::int64_t p) const noexcept { return static_cast<std::size_t>(s * parts_.count + p); }
    void clear() {
        nodes_.clear();  // the nodes before their graph
        start_.reset();
        graph_.reset();
    }

    tbb::task_arena& arena_;
    std::unique_ptr<tbb::flow::graph> graph_;
    std::unique_ptr<tbb::flow::broadcast_node<tbb::flow::continue_msg>> start_;
    std::vector<std::unique_ptr<node>> nodes_;  // timestep s, partition p at s * count + p
    partitioning parts_;
    int steps_ = -1;
    ring* ring_ = nullptr;  // the ring of the epoch running
};

class omp_runner final : public epoch_runner {
public:
    void prepare(const partitioning&, int) override {}
    void run(ring& r, const partitioning& parts, int steps) override {
        // One token per partition per timestep parity: depend() orders the tasks by address.
        std::vector<char> tokens(static_cast<std::size_t>(2 * parts.count));
        const double c = r.coefficient;
#pragma omp parallel
#pragma omp single
        for (int s = 0; s < steps; ++s) {
            // [[maybe_unused]]: GCC 12 counts a use in a depend clause as none.
            [[maybe_unused]] const char* read = tokens.data() + (s & 1) * parts.count;
            [[maybe_unused]] char* written = tokens.data() + ((s + 1) & 1) * parts.count;
            const double* in = r.state(s);
            double* out = r.state(s + 1);
            for (std::int64_t p = 0; p < parts.count; ++p) {
                const std::int64_t left = parts.left(p), right = parts.right(p);
#pragma omp task depend(in : read[left], read[p], read[right]) depend(out : written[p]) firstprivate(in, out, p, c) \
    shared(parts)
                update_partition(in, out, parts, p, c);
            }
        }
        r.now = (r.now + steps) & 1;
    }
};

#ifdef ALOE_APPS_TASKFLOW
class taskflow_runner final : public epoch_runner {
public:
    explicit taskflow_runner(tf::Executor& executor) : executor_(executor) {}

    void prepare(const partitioning& parts, int steps) override {
        if (built_ && parts == parts_ && steps == steps_) return;
        flow_.clear();
        parts_ = parts;
        steps_ = steps;
        built_ = true;
        const auto count = static_cast<std::size_t>(parts.count);
        std::vector<tf::Task> before(count), after(count);
        std::array<std::int64_t, 3> inputs{};
        for (int s = 0; s < steps; ++s) {
            for (std::int64_t p = 0; p < parts.count; ++p) {
                tf::Task t = flow_.emplace([this, s, p] {
                    update_partition(ring_->state(s), ring_->state(s + 1), parts_, p, ring_->coefficient);
                });
                if (s > 0)
                    for (int i = 0, k = inputs_of(parts, p, inputs); i < k; ++i)
                        before[static_cast<std::size_t>(inputs[i])].precede(t);
                after[static_cast<std::size_t>(p)] = t;
            }
            std::swap(before, after);
        }
    }

    void run(ring& r, const partitioning&, int steps) override {
        ring_ = &r;
        executor_.run(flow_).wait();
        r.now = (r.now + steps) & 1;
    }

private:
    tf::Executor& executor_;
    tf::Taskflow flow_;
    bool built_ = false;
    partitioning parts_;
    int steps_ = -1;
    ring* ring_ = nullptr;
};
#endif

}  // namespace

std::unique_ptr<epoch_runner> make_epoch_runner(harness& h) {
    switch (h.runtime()) {
    case runtime_kind::serial: return std::make_unique<serial_runner>();
    case runtime_kind::aloe: return std::make_unique<aloe_runner>();
    case runtime_kind::tbb: return std::make_unique<tbb_runner>(h.tbb_arena());
    case runtime_kind::libgomp:
    case runtime_kind::libomp: return std::make_unique<omp_runner>();
    case runtime_kind::taskflow:
#ifdef ALOE_APPS_TASKFLOW
        return std::make_unique<taskflow_runner>(h.taskflow_executor());
#else
        break;
#endif
    }
    throw std::logic_error("stencil1d-tasks: no epoch runner for this runtime in this build");
}

}  // namespace aloe_apps::stencil
