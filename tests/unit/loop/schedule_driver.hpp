// Drives a schedule without a team: workers take turns, one chunk per turn, in a fixed
// order, so tests can assert exact maps, steal counts and shared-memory effects
// deterministically (STYLE.md: "Schedules are tested without the team").
#pragma once

#include "loop/any_schedule.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace aloe::loop::testing {

struct driven_chunk {
    int worker;
    chunk range;
    bool is_static;
    take how;  ///< for dynamic chunks
};

struct drive_result {
    std::vector<int> owner;  ///< per iteration: the worker that ran it (-1 never, -2 twice)
    std::vector<driven_chunk> chunks;
    std::vector<std::uint64_t> steals;  ///< per worker
    std::vector<worker_record> records; ///< per worker, with iteration counts (no times)
};

/// Round-robin: each turn, every worker still busy takes one chunk (static first). `order`
/// chooses which workers move in a turn (default: all, in id order), e.g. to model a worker
/// that is slow and moves only every k-th turn.
template <class S>
drive_result drive(S& s, std::uint64_t count, int threads,
                   const std::function<bool(int worker, std::uint64_t turn)>& moves = {}) {
    drive_result r;
    r.owner.assign(count, -1);
    r.steals.assign(static_cast<std::size_t>(threads), 0);
    r.records.assign(static_cast<std::size_t>(threads), worker_record{});
    std::vector<worker_cursor> cursors(static_cast<std::size_t>(threads));
    std::vector<int> stage(static_cast<std::size_t>(threads), 0);  // 0 static, 1 dynamic, 2 done
    for (int w = 0; w < threads; ++w) cursors[static_cast<std::size_t>(w)].id = w;
    int busy = threads;
    for (std::uint64_t turn = 0; busy > 0; ++turn) {
        for (int w = 0; w < threads; ++w) {
            const auto wi = static_cast<std::size_t>(w);
            if (stage[wi] == 2 || (moves && !moves(w, turn))) continue;
            chunk c;
            bool got = false;
            bool is_static = false;
            take how = take::none;
            if (stage[wi] == 0) {
                if (s.next_static(cursors[wi], c)) {
                    got = true;
                    is_static = true;
                } else {
                    stage[wi] = 1;
                }
            }
            if (!got && stage[wi] == 1) {
                how = s.next_dynamic(cursors[wi], c);
                if (how == take::none) {
                    stage[wi] = 2;
                    --busy;
                    continue;
                }
                got = true;
            }
            if (!got) continue;
            r.chunks.push_back({w, c, is_static, how});
            for (std::uint64_t i = c.begin; i < c.end; ++i) r.owner[i] = r.owner[i] == -1 ? w : -2;
            if (is_static) r.records[wi].static_iterations += c.end - c.begin;
            else {
                r.records[wi].dynamic_iterations += c.end - c.begin;
                ++r.records[wi].chunks;
            }
            if (how == take::stolen) {
                ++r.steals[wi];
                ++r.records[wi].steals;
            }
        }
    }
    return r;
}

/// True when every iteration was run exactly once.
inline bool exactly_once(const drive_result& r) {
    for (int o : r.owner)
        if (o < 0) return false;
    return true;
}

}  // namespace aloe::loop::testing
