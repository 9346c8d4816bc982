// mandelbrot (taskflow/benchmarks/mandelbrot): an N × N image of the Mandelbrot set over
// [−2.5, 1] × [−1, 1], one parallel-loop iteration per image row, for N = 100, 200, … 1000; a
// row's size is N. A pixel's value is its escape time (at most 200 steps of z ← z^d + c with
// d = 2, read at run time, the power taken in polar form: |z|^d · (cos dθ, sin dθ)), coloured
// from a 16-entry palette (black inside the set and for 0), three bytes a pixel. Rows differ in
// cost (rows through the set take the full 200 steps), so the loop is balanced dynamically.
//
// The schedule is `dynamic,chunk=1` by default (one row at a time, as OpenMP's
// schedule(dynamic, 1) and Taskflow's DynamicPartitioner(1) there); --schedule names another.
#include "ports.hpp"

#include <aloe/parallel_for.hpp>
#include <aloe/schedule.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

namespace taskflow_ports {
namespace {

constexpr int max_steps = 200;
// The power d, read at run time: Taskflow's program passes it as a parameter, so its loop calls
// pow(|z|², d/2) and cos/sin(d·θ). A compile-time 2 would let the compiler fold pow(r, 1.0) to r
// and skip half of the work (it did: 37% faster than every peer).
volatile int power = 2;
constexpr double x_left = -2.5, x_right = 1.0, y_bottom = -1.0, y_top = 1.0;

struct rgb {
    unsigned char r, g, b;
};

// The widely used 16-colour gradient of Mandelbrot renderings (dark blue to orange).
constexpr std::array<rgb, 16> palette{{{66, 30, 15},
                                       {25, 7, 26},
                                       {9, 1, 47},
                                       {4, 4, 73},
                                       {0, 7, 100},
                                       {12, 44, 138},
                                       {24, 82, 177},
                                       {57, 125, 209},
                                       {134, 181, 229},
                                       {211, 236, 248},
                                       {241, 233, 191},
                                       {248, 201, 95},
                                       {255, 170, 0},
                                       {204, 128, 0},
                                       {153, 87, 0},
                                       {106, 52, 3}}};

// Steps before z leaves the disc of radius 2, at most max_steps.
inline int escape_steps(double cx, double cy, int d) {
    double x = cx, y = cy;
    int step = 0;
    while (x * x + y * y <= 4.0 && step < max_steps) {
        const double next_x = std::pow(x * x + y * y, d / 2.0) * std::cos(d * std::atan2(y, x)) + cx;
        y = std::pow(x * x + y * y, d / 2.0) * std::sin(d * std::atan2(y, x)) + cy;
        x = next_x;
        ++step;
    }
    return step;
}

inline rgb colour(int steps) {
    if (steps == 0 || steps >= max_steps) return {0, 0, 0};
    return palette[static_cast<std::size_t>(steps % 16)];
}

// Pixel (i, j) with i the loop's index over [0, height) mapped on x and j on y, written at
// 3·(j·width + i), as the benchmark lays its image out.
inline void render_row(unsigned char* image, int i, int width, int height, int d) {
    for (int j = 0; j < width; ++j) {
        const double cx = x_left + (x_right - x_left) / width * i;
        const double cy = y_bottom + (y_top - y_bottom) / height * j;
        const rgb c = colour(escape_steps(cx, cy, d));
        unsigned char* pixel = image + 3 * (static_cast<std::size_t>(j) * width + i);
        pixel[0] = c.r;
        pixel[1] = c.g;
        pixel[2] = c.b;
    }
}

}  // namespace

void run_mandelbrot(const options& o) {
    const std::string text = o.schedule.empty() ? "dynamic,chunk=1" : o.schedule;
    aloe::schedule s;
    std::string why;
    if (!aloe::schedule::try_parse(text, s, why)) bad_choice("mandelbrot", "schedule", text, why);

    print_header();
    for (int n = 100; n <= 1000; n += 100) {
        const auto bytes = 3 * static_cast<std::size_t>(n) * n;
        auto image = std::make_unique_for_overwrite<unsigned char[]>(bytes);
        double total_us = 0;
        for (unsigned round = 0; round < o.num_rounds; ++round) {
            total_us += static_cast<double>(time_us([&] {
                            unsigned char* pixels = image.get();
                            const int d = power;
                            aloe::parallel_for(0, n, s, [pixels, n, d](aloe::subrange r, int) {
                                for (std::int64_t i = r.first(); i < r.bound(); ++i)
                                    render_row(pixels, static_cast<int>(i), n, n, d);
                            });
                        }).count());
        }
        // The image is the serial one (checked on the first and the middle rows' pixels).
        auto reference = std::make_unique<unsigned char[]>(bytes);
        for (int i : {0, n / 2}) render_row(reference.get(), i, n, n, power);
        for (int i : {0, n / 2})
            for (int j = 0; j < n; ++j)
                for (int c = 0; c < 3; ++c) {
                    const std::size_t k = 3 * (static_cast<std::size_t>(j) * n + i) + c;
                    if (image[k] != reference[k])
                        fail("mandelbrot", "pixel (" + std::to_string(i) + ", " + std::to_string(j) + ") differs");
                }
        print_row(static_cast<std::size_t>(n), total_us, o.num_rounds);
    }
}

}  // namespace taskflow_ports
