// Mandelbrot: the rows of an escape-time image, a loop whose iteration costs are strongly
// uneven and spatially structured. A row that crosses the set runs many pixels to --max-iter,
// a row outside it escapes within a few iterations, so a static split of the rows leaves
// threads idle. The default view is off-centre (the set fills the lower part of the frame): a
// static split of the rows costs about 1.9x a balanced one on 2 threads, 2.2x on 4 and 2.5x on
// 8 (row costs summed in iterations). Each timestep renders one frame of a slow, deterministic
// vertical pan, like an animation: the row costs drift from step to step,
// which schedules that learn from earlier steps must follow.
//
// Each pixel's arithmetic depends only on its coordinates, so every runtime and schedule gives
// the same image; the checksum is the serial sum of the final frame's iteration counts.
// Checks: sampled rows of the final frame (--check full: every row, which is a complete serial
// re-run, as no frame depends on another), rendered again serially, pixel for pixel.
#include "common/harness.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

/// The complex-plane window of one frame: left edge, top edge and the (square) pixel size.
struct view {
    double x_min;
    double y_max;
    double pixel;
};

// The window: centred left of the origin and above the real axis, 3.0 wide, so the top rows
// miss the set (|Im c| > 1.13) and the rows near the real axis cross its widest part. The pan
// moves it up and back down over `pan_period` steps; chosen by tabulating row costs so that
// the imbalance above holds over the whole pan.
constexpr double center_x = -0.6;
constexpr double center_y = 0.7;
constexpr double span_x = 3.0;
constexpr int pan_period = 100;

/// The window of step `step`: shifted up by `pan` frame heights per step, bouncing back
/// every pan_period steps (a triangle wave, so long runs stay in the same region).
view frame(std::int64_t width, std::int64_t height, double pan, int step) {
    const int phase = step % (2 * pan_period);
    const int offset = phase < pan_period ? phase : 2 * pan_period - phase;
    const double pixel = span_x / static_cast<double>(width);
    const double frame_height = pixel * static_cast<double>(height);
    const double cy = center_y + pan * frame_height * offset;
    return {center_x - span_x / 2, cy + frame_height / 2, pixel};
}

/// Escape-iteration counts of the pixels of `row`, written to out[0, width).
void render_row(const view& v, std::int64_t width, std::int64_t row, int max_iter, std::int32_t* out) {
    const double ci = v.y_max - (static_cast<double>(row) + 0.5) * v.pixel;
    for (std::int64_t col = 0; col < width; ++col) {
        const double cr = v.x_min + (static_cast<double>(col) + 0.5) * v.pixel;
        double zr = 0, zi = 0, zr2 = 0, zi2 = 0;
        int it = 0;
        while (it < max_iter && zr2 + zi2 <= 4.0) {
            zi = 2.0 * zr * zi + ci;
            zr = zr2 - zi2 + cr;
            zr2 = zr * zr;
            zi2 = zi * zi;
            ++it;
        }
        out[col] = it;
    }
}

/// The rows the quick check recomputes: `count` rows spread evenly, first and last included.
std::vector<std::int64_t> sample_rows(std::int64_t height, std::int64_t count) {
    if (count >= height) count = height;
    std::vector<std::int64_t> rows;
    for (std::int64_t k = 0; k < count; ++k) rows.push_back(count == 1 ? 0 : k * (height - 1) / (count - 1));
    return rows;
}

// Rows compared by the quick check: a guess, cheap next to one frame and spread over it.
constexpr std::int64_t quick_sample_rows = 17;

}  // namespace

int main(int argc, char** argv) {
    return aloe_apps::run_workload("mandelbrot", argc, argv, [](aloe_apps::harness& h) {
        h.default_steps(20, 2);  // 0.2-0.4 s of timed steps at the defaults on 2 cores
        auto& f = h.flags();
        const std::int64_t width = f.integer("--width", 384, "pixels per row");
        const std::int64_t height = f.integer("--height", 288, "rows (the threaded loop)");
        const std::int64_t max_iter = f.integer("--max-iter", 300, "iteration limit per pixel");
        const double pan = f.real("--pan", 0.001, "vertical shift of the view per step, in frame heights");
        if (width < 1 || width > 65536) throw aloe_apps::usage_error("--width must be in [1, 65536]");
        if (height < 1 || height > 65536) throw aloe_apps::usage_error("--height must be in [1, 65536]");
        if (max_iter < 1 || max_iter > std::numeric_limits<std::int32_t>::max())
            throw aloe_apps::usage_error("--max-iter must be in [1, 2^31)");
        if (!(pan >= 0 && pan <= 0.01)) throw aloe_apps::usage_error("--pan must be in [0, 0.01]");
        h.start();
        h.param("width", width);
        h.param("height", height);
        h.param("max_iter", max_iter);
        h.param("pan", pan);
        const int limit = static_cast<int>(max_iter);

        std::vector<std::int32_t> image(static_cast<std::size_t>(width * height));
        view last{};
        h.run_steps([&](int step) {
            const view v = frame(width, height, pan, step);
            h.parallel_for("mandelbrot/rows", height, [&](std::int64_t row) {
                render_row(v, width, row, limit, image.data() + row * width);
            });
            last = v;
        });

        const auto rows = h.full_check() ? sample_rows(height, height) : sample_rows(height, quick_sample_rows);
        if (h.corrupt_result()) image[static_cast<std::size_t>(rows[rows.size() / 2] * width + width / 2)] += 1;

        std::int64_t total = 0;
        for (const std::int32_t it : image) total += it;
        h.checksum(static_cast<double>(total));

        std::vector<std::int32_t> expected(static_cast<std::size_t>(width));
        std::int64_t differing = 0;
        for (const std::int64_t row : rows) {
            render_row(last, width, row, limit, expected.data());
            const std::int32_t* got = image.data() + row * width;
            for (std::size_t col = 0; col < expected.size(); ++col) differing += expected[col] != got[col] ? 1 : 0;
        }
        const std::string which = h.full_check() ? "every row" : std::to_string(rows.size()) + " sampled rows";
        h.check(differing == 0, "pixels differing from a serial render of " + which, static_cast<double>(differing), 0);
    });
}
