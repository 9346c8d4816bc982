// C++ worksharing loops: loop bodies and bounds the way C++ programs write them. Templates
// instantiated for int, long, unsigned long long and std::size_t (the last two reach the
// GOMP_loop_ull_* entry points), lambdas and functors as bodies, loops inside lambdas,
// range-based for and random-access iterator loops over std::vector, a class's member
// function that runs a loop over its own data, collapse(2) over a vector of vectors, a
// user-defined reduction, and exceptions thrown and caught inside one iteration (never
// across the OpenMP region's boundary, which the OpenMP rules forbid).
//
// Like the C programs: every iteration exactly once, results equal to serial ones, and
// stdout only what correctness fixes.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

volatile long v_offset = 0;
long V(long x) { return x + v_offset; }

int failures = 0;

void fail(const std::string& what, const std::string& why) {
    std::fprintf(stderr, "FAIL %s: %s\n", what.c_str(), why.c_str());
    ++failures;
}

// Runs of each logical iteration of one loop.
class coverage {
public:
    explicit coverage(std::size_t n) : hits_(n) {}
    void hit(std::uint64_t k) {
        if (k >= hits_.size())
            stray_.fetch_add(1, std::memory_order_relaxed);
        else
            hits_[k].fetch_add(1, std::memory_order_relaxed);
    }
    // Checks each of the n iterations ran once and prints "<label>: n=<n>".
    void check(const std::string& label) const {
        for (std::size_t k = 0; k < hits_.size(); ++k) {
            const int h = hits_[k].load();
            if (h != 1) {
                fail(label, "iteration " + std::to_string(k) + " of " + std::to_string(hits_.size()) + " ran " +
                                std::to_string(h) + " times");
                break;
            }
        }
        if (stray_.load() != 0) fail(label, std::to_string(stray_.load()) + " runs outside the loop");
        std::printf("%s: n=%zu\n", label.c_str(), hits_.size());
    }

private:
    std::vector<std::atomic<int>> hits_;
    std::atomic<long> stray_{0};
};

template <typename T> const char* type_name();
template <> const char* type_name<int>() { return "int"; }
template <> const char* type_name<long>() { return "long"; }
template <> const char* type_name<unsigned long long>() { return "unsigned long long"; }
template <> const char* type_name<unsigned long>() { return "unsigned long"; }

// The schedules on a loop variable of type T, from `first` in `n` steps of `step`.
template <typename T> void typed_loops(T first, T step, std::size_t n) {
    const T last = static_cast<T>(first + static_cast<T>(n) * step);
    const std::string t = type_name<T>();
    auto index = [&](T i) { return static_cast<std::uint64_t>((i - first) / step); };

    coverage dyn(n), gui(n), run(n), mono(n);
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3) nowait
        for (T i = first; i < last; i += step) dyn.hit(index(i));
#pragma omp for schedule(guided)
        for (T i = first; i < last; i += step) gui.hit(index(i));
#pragma omp for schedule(runtime)
        for (T i = first; i < last; i += step) run.hit(index(i));
#pragma omp for schedule(monotonic : dynamic)
        for (T i = first; i < last; i += step) mono.hit(index(i));
    }
    dyn.check(t + " dynamic,3 nowait");
    gui.check(t + " guided");
    run.check(t + " runtime");
    mono.check(t + " monotonic:dynamic");

    // Summed with a reduction, against the closed form.
    T sum = 0;
#pragma omp parallel for schedule(nonmonotonic : dynamic, 5) reduction(+ : sum)
    for (T i = first; i < last; i += step) sum += i;
    T want = 0;
    for (T i = first; i < last; i += step) want += i;
    if (sum != want) fail(t + " reduction", "sum differs from the serial one");
    std::printf("%s parallel for reduction sum: %s\n", t.c_str(), std::to_string(sum).c_str());
}

// Combined parallel for whose trip count is a template constant: GOMP_parallel_loop_*.
template <int N> long constant_trip() {
    std::vector<int> seen(N, 0);
#pragma omp parallel for schedule(dynamic, 2)
    for (int i = 0; i < N; ++i) seen[i] += 1; // each element is written by one iteration
    return std::count(seen.begin(), seen.end(), 1);
}

// A functor used as the loop body.
struct scale {
    double factor;
    void operator()(double& x) const { x *= factor; }
};

void containers() {
    const std::size_t n = static_cast<std::size_t>(V(2000));
    std::vector<double> v(n);
    std::iota(v.begin(), v.end(), 0.0);

    // range-based for
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 7)
        for (double& x : v) x = x * 0.5 + 1.0;
    }
    // random-access iterators, step 1 and step 2
#pragma omp parallel for schedule(guided)
    for (auto it = v.begin(); it < v.end(); ++it) *it += 2.0;
#pragma omp parallel for schedule(runtime)
    for (auto it = v.begin(); it < v.end(); it += 2) *it += 0.25;
    // a functor and a lambda as the body
    const scale twice{2.0};
#pragma omp parallel for schedule(dynamic)
    for (std::size_t i = 0; i < n; ++i) twice(v[i]);
    // (The lambda takes the accumulator as an argument: captured by reference it would name
    // the shared original, not the thread's reduction copy.)
    double total = 0;
    auto add = [](double& acc, double x) { acc += x; };
#pragma omp parallel for schedule(nonmonotonic : guided, 3) reduction(+ : total)
    for (std::size_t i = 0; i < n; ++i) add(total, v[i]);

    double want = 0;
    for (std::size_t i = 0; i < n; ++i)
        want += ((static_cast<double>(i) * 0.5 + 1.0 + 2.0) + (i % 2 == 0 ? 0.25 : 0)) * 2;
    if (total != want) fail("vector loops", "total " + std::to_string(total) + ", serial " + std::to_string(want));
    std::printf("vector: range-for, iterators, functor, lambda: total %.17g\n", total);

    // collapse(2) over a vector of vectors
    std::vector<std::vector<int>> grid(static_cast<std::size_t>(V(40)), std::vector<int>(37, 0));
    const int rows = static_cast<int>(grid.size());
#pragma omp parallel for collapse(2) schedule(dynamic, 4)
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < 37; ++c) grid[r][c] += r * 100 + c;
    long cells = 0, wrong = 0;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < 37; ++c) {
            ++cells;
            wrong += grid[r][c] != r * 100 + c;
        }
    if (wrong) fail("collapse(2) vector of vectors", std::to_string(wrong) + " cells wrong");
    std::printf("collapse(2) over vector<vector<int>>: %ld cells\n", cells);

    // A loop inside a lambda, and a std::function body.
    std::vector<int> marks(n, 0);
    std::function<void(std::size_t)> mark = [&marks](std::size_t i) { marks[i] += 1; };
    auto run_loop = [&](std::size_t count) {
#pragma omp parallel for schedule(guided, 2)
        for (std::size_t i = 0; i < count; ++i) mark(i);
    };
    run_loop(n);
    run_loop(n / 2);
    long twice_marked = std::count(marks.begin(), marks.begin() + static_cast<long>(n / 2), 2);
    long once_marked = std::count(marks.begin() + static_cast<long>(n / 2), marks.end(), 1);
    if (twice_marked + once_marked != static_cast<long>(n)) fail("loop inside a lambda", "marks are wrong");
    std::printf("loops inside a lambda: %ld twice, %ld once\n", twice_marked, once_marked);
}

// A class whose member function runs worksharing loops over its own data.
class heat_rod {
public:
    explicit heat_rod(int cells) : t_(static_cast<std::size_t>(cells), 0.0), next_(t_) { t_[0] = 1024.0; }

    // One explicit step; called from inside a parallel region (orphaned loops on `this`).
    void step() {
#pragma omp for schedule(dynamic, 8)
        for (int i = 1; i < size() - 1; ++i) next_[i] = 0.5 * t_[i] + 0.25 * (t_[i - 1] + t_[i + 1]);
#pragma omp single
        {
            next_[0] = t_[0];
            next_.back() = t_.back();
            t_.swap(next_);
        }
    }
    double heat() const { return std::accumulate(t_.begin(), t_.end(), 0.0); }
    int size() const { return static_cast<int>(t_.size()); }

private:
    std::vector<double> t_, next_;
};

void member_loops() {
    heat_rod rod(static_cast<int>(V(300)));
    heat_rod serial(static_cast<int>(V(300)));
#pragma omp parallel
    {
        for (int s = 0; s < 20; ++s) rod.step();
    }
    for (int s = 0; s < 20; ++s) serial.step(); // outside a region: teams of one
    if (rod.heat() != serial.heat()) fail("member function loops", "heat differs from the serial run");
    std::printf("member function loops: heat %.17g\n", rod.heat());
}

// Exceptions stay inside one iteration: thrown and caught there.
void exceptions() {
    const int n = static_cast<int>(V(1000));
    std::vector<int> v(static_cast<std::size_t>(n), 1);
    long caught = 0, normal = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 3) reduction(+ : caught, normal)
        for (int i = 0; i < n; ++i) {
            try {
                if (i % 97 == 0) throw std::runtime_error("iteration " + std::to_string(i));
                (void)v.at(static_cast<std::size_t>(i % 13 == 0 ? n + i : i)); // out of range now and then
                ++normal;
            } catch (const std::out_of_range&) {
                ++caught;
            } catch (const std::runtime_error&) {
                ++caught;
            }
        }
    }
    long want_caught = 0;
    for (int i = 0; i < n; ++i) want_caught += (i % 97 == 0 || i % 13 == 0);
    if (caught != want_caught || caught + normal != n)
        fail("exceptions inside iterations", std::to_string(caught) + " caught, " + std::to_string(normal) + " normal");
    std::printf("exceptions caught inside iterations: %ld, normal %ld\n", caught, normal);
}

// A user-defined reduction over a struct.
struct summary {
    long count = 0, sum = 0;
    long lo = std::numeric_limits<long>::max(), hi = std::numeric_limits<long>::min();
    void add(long x) {
        ++count;
        sum += x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    void merge(const summary& o) {
        count += o.count;
        sum += o.sum;
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
    }
};
#pragma omp declare reduction(merge : summary : omp_out.merge(omp_in)) initializer(omp_priv = summary())

void user_reduction() {
    const long n = V(5000);
    summary s, want;
#pragma omp parallel
    {
#pragma omp for schedule(guided, 4) reduction(merge : s)
        for (long i = 0; i < n; ++i) s.add((i * 7919) % 10007 - 5000);
    }
    for (long i = 0; i < n; ++i) want.add((i * 7919) % 10007 - 5000);
    if (s.count != want.count || s.sum != want.sum || s.lo != want.lo || s.hi != want.hi)
        fail("declare reduction", "the merged summary differs from the serial one");
    std::printf("declare reduction: count %ld sum %ld min %ld max %ld\n", s.count, s.sum, s.lo, s.hi);
}

// An ordered loop building a string in iteration order (forwarded to libgomp).
void ordered_string() {
    std::string text;
#pragma omp parallel for ordered schedule(dynamic)
    for (int i = 0; i < static_cast<int>(V(26)); ++i) {
#pragma omp ordered
        text += static_cast<char>('a' + i);
    }
    if (text != "abcdefghijklmnopqrstuvwxyz") fail("ordered string", "got '" + text + "'");
    std::printf("ordered string: %s\n", text.c_str());
}

} // namespace

int main() {
    typed_loops<int>(static_cast<int>(V(-500)), 3, 700);
    typed_loops<long>(V(1000000000000L), 7, 900);
    typed_loops<unsigned long long>(
        std::numeric_limits<unsigned long long>::max() - static_cast<unsigned long long>(V(5000)), 5, 800);
    typed_loops<unsigned long>(static_cast<unsigned long>(V(10)), 1, 1000);
    const long c = constant_trip<1500>();
    if (c != 1500) fail("parallel for with a template-constant trip count", std::to_string(c) + " elements once");
    std::printf("parallel for dynamic,2 over a template constant: %ld\n", c);
    containers();
    member_loops();
    exceptions();
    user_reduction();
    ordered_string();
    if (failures != 0) {
        std::fprintf(stderr, "cxx_loops: %d check(s) failed\n", failures);
        return 1;
    }
    std::printf("cxx_loops: all checks passed\n");
    return 0;
}
