/// @file task.hpp
/// Tasks on the process team: task groups, futures, continuations and dataflow.
///
/// Tasks run on the same workers as aloe's loops (one team per process, no second pool), on
/// per-worker work-stealing deques. A thread that waits (task_group::wait, future::get/wait)
/// runs other tasks meanwhile, so waiting inside a task never blocks a worker.
///
/// Semantics:
/// - every task runs exactly once; tasks are never cancelled;
/// - an exception thrown by a task travels: into its future (get() rethrows it), or into its
///   task_group (wait() rethrows the first one, the group's other tasks still run);
/// - a task may spawn tasks, wait on futures, and call parallel_for (which then runs on the
///   workers idle at that moment, or serially: never more threads than the team);
/// - futures are move-only, shared_future copyable; then() and dataflow() pass the ready
///   futures themselves to the function (HPX's convention: a failed input is visible there
///   through get(), which rethrows);
/// - destroying a task_group waits for its tasks; dropping a future does not cancel its task.
///
/// Example:
/// @code
///   aloe::task_group g;
///   for (auto& part : parts) g.run([&part] { part.update(); });
///   g.wait();
///
///   aloe::future<int> a = aloe::async([] { return 20; });
///   aloe::future<int> b = a.then([](aloe::future<int> x) { return x.get() + 1; });
///   aloe::future<int> c = aloe::dataflow([](aloe::future<int> x, aloe::future<int> y) {
///       return x.get() + y.get(); }, std::move(b), aloe::async([] { return 21; }));
///   int answer = c.get();  // 42
/// @endcode
#pragma once

#include <aloe/error.hpp>
#include <aloe/export.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace aloe {

namespace detail {

/// One unit of work the task scheduler runs: `execute(this)` runs it exactly once and
/// releases it (the scheduler never touches a node after calling execute).
struct task_node {
    void (*execute)(task_node*) noexcept = nullptr;
    union {
        std::uint64_t queued_at = 0;  ///< the scheduler's stamp for queue wait time (0: not sampled)
        void* owner;                  ///< a continuation run inline (never queued): what it serves
    };
};

/// Memory for a task or a shared state: thread-cached blocks of a few size classes.
ALOE_API void* task_allocate(std::size_t bytes);
ALOE_API void task_deallocate(void* p, std::size_t bytes) noexcept;

/// Makes `t` runnable: on the calling worker's own deque (LIFO for it, stolen FIFO by the
/// others), or on the team's shared queue from a thread that has no deque. Wakes idle
/// workers when there are some.
ALOE_API void task_spawn(task_node* t) noexcept;

/// Waits until `done(ctx)` is true, running other tasks meanwhile (own deque, then steals);
/// spins, yields and finally sleeps when there is nothing to run. `done` must become true by
/// the action of a task or of another thread that then calls task_wake_waiters().
ALOE_API void task_help_until(bool (*done)(const void* ctx) noexcept, const void* ctx) noexcept;

/// Wakes threads sleeping in task_help_until (after the condition one may wait for became
/// true). Cheap when none sleeps: one load.
ALOE_API void task_wake_waiters() noexcept;

/// A task node that can wait on a future_state's stack of continuations: the link lives in
/// the node itself, so waiting needs no allocation of its own.
struct linked_task : task_node {
    linked_task* next_waiting = nullptr;
    /// Run by the thread that makes the state ready, at once, instead of spawned: for tiny
    /// bookkeeping (a dataflow input's arrival), which must not count as a task.
    bool run_inline = false;
};

inline void run_continuation(linked_task* node) noexcept {
    if (node->run_inline) node->execute(node);
    else task_spawn(node);
}

template <class T>
void destroy_and_free(T* p) noexcept {
    p->~T();
    task_deallocate(p, sizeof(T));
}

/// A task that runs a callable once.
template <class F>
struct callable_task final : task_node {
    F fn;
    template <class G>
    explicit callable_task(G&& g) : fn(std::forward<G>(g)) {
        execute = &run;
    }
    static void run(task_node* self) noexcept {
        auto* t = static_cast<callable_task*>(self);
        t->fn();  // fn is noexcept by construction (the wrappers below catch)
        destroy_and_free(t);
    }
};

template <class F>
task_node* make_task(F&& f) {
    using task_type = callable_task<std::decay_t<F>>;
    void* memory = task_allocate(sizeof(task_type));
    try {
        return ::new (memory) task_type(std::forward<F>(f));
    } catch (...) {
        task_deallocate(memory, sizeof(task_type));
        throw;
    }
}

/// The shared state of a future: a value or an exception, once; continuations (task nodes)
/// pushed on a lock-free stack that setting the state closes and spawns.
template <class T>
class future_state {
public:
    using value_type = std::conditional_t<std::is_void_v<T>, char, T>;

    future_state() = default;
    future_state(const future_state&) = delete;
    future_state& operator=(const future_state&) = delete;

    void add_ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
    void release() noexcept {
        if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_and_free(this);
    }

    bool ready() const noexcept { return continuations_.load(std::memory_order_acquire) == closed(); }

    template <class... A>
    void set_value(A&&... a) {
        value_.emplace(std::forward<A>(a)...);
        finish();
    }
    void set_exception(std::exception_ptr e) noexcept {
        error_ = std::move(e);
        finish();
    }

    /// Runs `node` when the state is ready (spawned then; at once when it is ready already).
    void on_ready(linked_task* node) noexcept {
        linked_task* head = continuations_.load(std::memory_order_acquire);
        for (;;) {
            if (head == closed()) {
                run_continuation(node);
                return;
            }
            node->next_waiting = head;
            if (continuations_.compare_exchange_weak(head, node, std::memory_order_release, std::memory_order_acquire))
                return;
        }
    }

    void wait() const noexcept {
        if (ready()) return;
        // seq_cst, with finish()'s exchange: it sees the waiter or the waiter sees it ready.
        has_waiter_.store(true, std::memory_order_seq_cst);
        if (!ready())
            task_help_until([](const void* s) noexcept { return static_cast<const future_state*>(s)->ready(); },
                            this);
    }

    bool has_exception() const noexcept { return static_cast<bool>(error_); }
    void rethrow_if_failed() const {
        if (error_) std::rethrow_exception(error_);
    }
    value_type& value() noexcept { return *value_; }

private:
    static linked_task* closed() noexcept { return reinterpret_cast<linked_task*>(std::uintptr_t{1}); }

    void finish() noexcept {
        // acq_rel: publishes the value (release) to whoever sees the state closed, and
        // takes the continuations pushed before (acquire).
        linked_task* head = continuations_.exchange(closed(), std::memory_order_seq_cst);
        // Run in push order (the stack is LIFO): reverse first.
        linked_task* reversed = nullptr;
        while (head != nullptr) {
            linked_task* next = head->next_waiting;
            head->next_waiting = reversed;
            reversed = head;
            head = next;
        }
        for (linked_task* l = reversed; l != nullptr;) {
            linked_task* next = l->next_waiting;  // read before: running lets the node free itself
            run_continuation(l);
            l = next;
        }
        // Only a state someone waits on wakes sleepers (a syscall when one sleeps).
        if (has_waiter_.load(std::memory_order_seq_cst)) task_wake_waiters();
    }

    std::atomic<std::uint32_t> refs_{1};
    std::atomic<linked_task*> continuations_{nullptr};
    mutable std::atomic<bool> has_waiter_{false};
    std::optional<value_type> value_;
    std::exception_ptr error_;
};


template <class T>
struct state_ref {
    future_state<T>* p = nullptr;
    state_ref() = default;
    explicit state_ref(future_state<T>* s) noexcept : p(s) {}
    state_ref(const state_ref& o) noexcept : p(o.p) {
        if (p) p->add_ref();
    }
    state_ref(state_ref&& o) noexcept : p(std::exchange(o.p, nullptr)) {}
    state_ref& operator=(state_ref o) noexcept {
        std::swap(p, o.p);
        return *this;
    }
    ~state_ref() {
        if (p) p->release();
    }
    future_state<T>* operator->() const noexcept { return p; }
    explicit operator bool() const noexcept { return p != nullptr; }
};

template <class T>
state_ref<T> make_state() {
    void* memory = task_allocate(sizeof(future_state<T>));
    return state_ref<T>(::new (memory) future_state<T>());
}

/// Runs f(args...) and stores what it returned or threw in `state`.
template <class T, class F, class... A>
void fulfil(future_state<T>& state, F& f, A&&... args) noexcept {
    try {
        if constexpr (std::is_void_v<T>) {
            std::invoke(f, std::forward<A>(args)...);
            state.set_value();
        } else {
            state.set_value(std::invoke(f, std::forward<A>(args)...));
        }
    } catch (...) {
        state.set_exception(std::current_exception());
    }
}

[[noreturn]] ALOE_API void throw_no_state(const char* what);

}  // namespace detail

template <class T>
class shared_future;

/// The result of a task, once. Move-only; get() consumes it.
template <class T>
class future {
public:
    future() noexcept = default;
    future(future&&) noexcept = default;
    future& operator=(future&&) noexcept = default;

    bool valid() const noexcept { return static_cast<bool>(state_); }
    bool is_ready() const noexcept { return state_ && state_->ready(); }

    /// Waits (running other tasks meanwhile).
    void wait() const {
        check("wait");
        state_->wait();
    }

    /// Waits, then returns the value or rethrows the task's exception; the future is then
    /// invalid (valid() == false).
    T get() {
        check("get");
        state_->wait();
        detail::state_ref<T> s = std::move(state_);
        s->rethrow_if_failed();
        if constexpr (!std::is_void_v<T>) return std::move(s->value());
    }

    /// Runs f(ready future) as a task when this one is ready; returns its future. Invalidates
    /// this future.
    template <class F>
    auto then(F&& f) -> future<std::invoke_result_t<std::decay_t<F>&, future<T>>>;

    shared_future<T> share() noexcept;

    explicit future(detail::state_ref<T> s) noexcept : state_(std::move(s)) {}
    detail::state_ref<T>& state() noexcept { return state_; }

private:
    void check(const char* what) const {
        if (!state_) detail::throw_no_state(what);
    }
    detail::state_ref<T> state_;
};

/// A result several consumers read: copyable; get() returns a reference (const for values).
template <class T>
class shared_future {
public:
    shared_future() noexcept = default;
    shared_future(future<T>&& f) noexcept : state_(std::move(f.state())) {}  // NOLINT: as std's

    bool valid() const noexcept { return static_cast<bool>(state_); }
    bool is_ready() const noexcept { return state_ && state_->ready(); }
    void wait() const {
        check("wait");
        state_->wait();
    }
    decltype(auto) get() const {
        check("get");
        state_->wait();
        state_->rethrow_if_failed();
        if constexpr (std::is_void_v<T>) return;
        else return static_cast<const T&>(state_->value());
    }

    template <class F>
    auto then(F&& f) const -> future<std::invoke_result_t<std::decay_t<F>&, shared_future<T>>>;

    explicit shared_future(detail::state_ref<T> s) noexcept : state_(std::move(s)) {}
    const detail::state_ref<T>& state() const noexcept { return state_; }

private:
    void check(const char* what) const {
        if (!state_) detail::throw_no_state(what);
    }
    detail::state_ref<T> state_;
};

template <class T>
shared_future<T> future<T>::share() noexcept {
    return shared_future<T>(std::move(state_));
}

/// A future that is ready already.
template <class T>
future<std::decay_t<T>> make_ready_future(T&& value) {
    auto s = detail::make_state<std::decay_t<T>>();
    s->set_value(std::forward<T>(value));
    return future<std::decay_t<T>>(std::move(s));
}
inline future<void> make_ready_future() {
    auto s = detail::make_state<void>();
    s->set_value();
    return future<void>(std::move(s));
}

/// Runs f(args...) as a task; its result (or exception) arrives in the future.
template <class F, class... A>
auto async(F&& f, A&&... args) -> future<std::invoke_result_t<std::decay_t<F>&, std::decay_t<A>&...>> {
    using R = std::invoke_result_t<std::decay_t<F>&, std::decay_t<A>&...>;
    detail::state_ref<R> s = detail::make_state<R>();
    s->add_ref();  // the task's reference
    detail::task_node* node;
    try {
        node = detail::make_task(
            [state = s.p, fn = std::forward<F>(f), tup = std::make_tuple(std::forward<A>(args)...)]() mutable noexcept {
                std::apply([&](auto&... a) { detail::fulfil(*state, fn, a...); }, tup);
                state->release();
            });
    } catch (...) {
        s->release();
        throw;
    }
    detail::task_spawn(node);
    return future<R>(std::move(s));
}

namespace detail {

/// A continuation: runs when the state it waits on is ready.
template <class Body>
struct continuation final : linked_task {
    Body body;
    template <class B>
    explicit continuation(B&& b) : body(std::forward<B>(b)) {
        execute = &run;
    }
    static void run(task_node* self) noexcept {
        auto* c = static_cast<continuation*>(self);
        c->body();
        destroy_and_free(c);
    }
};

template <class Body>
linked_task* make_continuation(Body&& b) {
    using node_type = continuation<std::decay_t<Body>>;
    void* memory = task_allocate(sizeof(node_type));
    try {
        return ::new (memory) node_type(std::forward<Body>(b));
    } catch (...) {
        task_deallocate(memory, sizeof(node_type));
        throw;
    }
}

/// then(): f(input) once the input's state is ready.
template <class In, class T, class F>
auto chain(state_ref<T> input, F&& f) {
    using R = std::invoke_result_t<std::decay_t<F>&, In>;
    state_ref<R> out = make_state<R>();
    out->add_ref();
    future_state<T>* in = input.p;
    linked_task* node;
    try {
        node = make_continuation([out_state = out.p, fn = std::forward<F>(f), held = std::move(input)]() mutable noexcept {
            fulfil(*out_state, fn, In(std::move(held)));
            out_state->release();
        });
    } catch (...) {
        out->release();
        throw;
    }
    in->on_ready(node);
    return future<R>(std::move(out));
}

template <class X>
struct is_future_like : std::false_type {};
template <class T>
struct is_future_like<future<T>> : std::true_type {};
template <class T>
struct is_future_like<shared_future<T>> : std::true_type {};

/// Counts inputs down; the last one to be ready spawns the join itself (its body). A task
/// node only: it never waits on a state itself, its arrivals do.
struct join_counter : task_node {
    std::atomic<std::size_t> left{1};  // 1: held while inputs are being attached
    void arrive() noexcept {
        if (left.fetch_sub(1, std::memory_order_acq_rel) == 1) task_spawn(this);
    }
};

/// One per input of a range (a vector of futures) not ready yet: run inline when the input
/// is ready, counts the join down.
template <class Join>
struct arrival final : linked_task {
    Join* join;
    explicit arrival(Join* j) : join(j) {
        execute = &run;
        run_inline = true;
    }
    static void run(task_node* self) noexcept {
        auto* a = static_cast<arrival*>(self);
        Join* j = a->join;
        destroy_and_free(a);
        j->arrive();
    }
};

/// The arrival of a single future input, kept in the join itself (no allocation: a dataflow
/// of two futures costs two blocks, its join and its result's state, not four). Its join is
/// its `owner` (an inline continuation is never queued): 32 bytes, so that a join of two
/// futures and a small function fits the allocator's 128-byte class.
struct embedded_arrival final : linked_task {
    embedded_arrival() noexcept {
        execute = &run;
        run_inline = true;
    }
    static void run(task_node* self) noexcept { static_cast<join_counter*>(self->owner)->arrive(); }
};

template <class X>
inline constexpr bool is_single_future_v = is_future_like<std::decay_t<X>>::value;

/// A range of futures (a vector of them): other ranges (of values, a string) pass through.
template <class X>
concept future_range = requires(X& x) {
    x.begin();
    x.end();
} && is_single_future_v<decltype(*std::declval<X&>().begin())>;

/// One future input: true when it is still pending, the join then waiting for its arrival.
/// An invalid input (no state) is not waited for: it reaches f as it is, whose get() throws,
/// and the inputs after it are still attached (throwing here left them unattached, and the
/// join ran before they were ready).
template <class Future>
bool join_waits_for(join_counter& j, const Future& input) noexcept {
    if (!input.valid() || input.is_ready()) return false;
    j.left.fetch_add(1, std::memory_order_relaxed);
    return true;
}

/// Attaches an arrival to one pending element of a range; false when there is no memory for
/// it (the caller then waits for the element itself, running tasks meanwhile).
template <class Join, class Future>
bool try_attach_element(Join* j, Future& element) noexcept {
    void* memory = nullptr;
    try {
        memory = task_allocate(sizeof(arrival<Join>));
    } catch (...) {
        return false;
    }
    j->left.fetch_add(1, std::memory_order_relaxed);
    element.state()->on_ready(::new (memory) arrival<Join>(j));
    return true;
}

/// Attaches one input; `next` walks the join's embedded arrivals, one per single future.
template <class Join, class X>
void attach(Join* j, X& input, std::size_t& next) noexcept {
    if constexpr (is_single_future_v<X>) {
        embedded_arrival& a = j->arrivals[next++];
        if (!join_waits_for(*j, input)) return;
        a.owner = static_cast<join_counter*>(j);
        input.state()->on_ready(&a);
    } else if constexpr (future_range<X>) {
        for (auto& element : input) {
            if (element.valid() && !element.is_ready() && !try_attach_element(j, element)) element.state()->wait();
        }
    }
}

/// dataflow / when_all: holds the inputs, fires `Body` with them when all are ready.
template <class R, class F, class... X>
struct dataflow_join final : join_counter {
    state_ref<R> out;
    F fn;
    std::tuple<X...> inputs;
    std::array<embedded_arrival, (std::size_t{0} + ... + std::size_t{is_single_future_v<X>})> arrivals;
    template <class G, class... Y>
    dataflow_join(state_ref<R> o, G&& g, Y&&... y) : out(std::move(o)), fn(std::forward<G>(g)), inputs(std::forward<Y>(y)...) {
        execute = &run;
    }
    static void run(task_node* self) noexcept {
        auto* j = static_cast<dataflow_join*>(self);
        std::apply([&](auto&... in) { fulfil(*j->out.p, j->fn, std::move(in)...); }, j->inputs);
        destroy_and_free(j);
    }
};

}  // namespace detail

template <class T>
template <class F>
auto future<T>::then(F&& f) -> future<std::invoke_result_t<std::decay_t<F>&, future<T>>> {
    check("then");
    return detail::chain<future<T>>(std::move(state_), std::forward<F>(f));
}

template <class T>
template <class F>
auto shared_future<T>::then(F&& f) const -> future<std::invoke_result_t<std::decay_t<F>&, shared_future<T>>> {
    check("then");
    return detail::chain<shared_future<T>>(state_, std::forward<F>(f));
}

/// Runs f(inputs...) as a task once every future among the inputs is ready (futures,
/// shared_futures, vectors of them; other arguments are passed through as values). The
/// futures are passed themselves, ready. Returns the future of f's result.
template <class F, class... X>
auto dataflow(F&& f, X&&... inputs) -> future<std::invoke_result_t<std::decay_t<F>&, std::decay_t<X>...>> {
    using R = std::invoke_result_t<std::decay_t<F>&, std::decay_t<X>...>;
    using join_type = detail::dataflow_join<R, std::decay_t<F>, std::decay_t<X>...>;
    detail::state_ref<R> out = detail::make_state<R>();
    detail::state_ref<R> keep = out;
    void* memory = detail::task_allocate(sizeof(join_type));
    join_type* j;
    try {
        j = ::new (memory) join_type(std::move(out), std::forward<F>(f), std::forward<X>(inputs)...);
    } catch (...) {
        detail::task_deallocate(memory, sizeof(join_type));
        throw;
    }
    // Never throws: an invalid input is passed to f as it is (its get() throws there), and a
    // range element with no memory for its arrival is waited for here.
    std::size_t next = 0;
    std::apply([&](auto&... in) { (detail::attach(j, in, next), ...); }, j->inputs);
    // Drop the attaching hold: the last input ready (maybe this thread, now) spawns the body
    // as a task, so f runs on the caller's stack only as any spawn may (docs/tasks.md, "when
    // tasks run").
    j->arrive();
    return future<R>(std::move(keep));
}

/// A future ready when every input is: the inputs themselves, ready, in a tuple.
template <class... X>
auto when_all(X&&... inputs) -> future<std::tuple<std::decay_t<X>...>> {
    return dataflow([](auto... ready) { return std::make_tuple(std::move(ready)...); }, std::forward<X>(inputs)...);
}

/// A future ready when every future of `inputs` is: the vector, every element ready.
template <class Future>
future<std::vector<Future>> when_all(std::vector<Future> inputs) {
    return dataflow([](std::vector<Future> ready) { return ready; }, std::move(inputs));
}

/// Lets at most `k` threads run tasks at once: the waiting thread and workers 1..k-1
/// (k <= 0: the whole team). For measurements, e.g. the one-core baseline of grain tuning
/// (k = 1: tasks run only on threads that wait). Takes effect for tasks not started yet.
ALOE_API void set_task_concurrency(int k) noexcept;
/// The current limit (the team's size when unlimited).
ALOE_API int task_concurrency() noexcept;

/// Tasks that wait together. run() spawns, wait() runs tasks until all of the group's are
/// done and rethrows the first exception one threw (the others still ran). The destructor
/// waits too (dropping any exception). Any thread may run() into a group; wait() from one
/// thread at a time.
class task_group {
public:
    task_group() = default;
    task_group(const task_group&) = delete;
    task_group& operator=(const task_group&) = delete;
    ~task_group() {
        if (pending_.load(std::memory_order_acquire) != 0) wait_all();
    }

    template <class F>
    void run(F&& f) {
        pending_.fetch_add(1, std::memory_order_relaxed);
        detail::task_node* node;
        try {
            node = detail::make_task([this, fn = std::forward<F>(f)]() mutable noexcept {
                try {
                    fn();
                } catch (...) {
                    capture();
                }
                done_one();
            });
        } catch (...) {
            pending_.fetch_sub(1, std::memory_order_relaxed);
            throw;
        }
        detail::task_spawn(node);
    }

    void wait() {
        wait_all();
        if (failed_.load(std::memory_order_acquire)) {
            std::exception_ptr e = std::exchange(error_, nullptr);
            failed_.store(false, std::memory_order_relaxed);
            claimed_.store(false, std::memory_order_relaxed);  // the next round captures again
            std::rethrow_exception(e);
        }
    }

    /// Tasks run() but not finished yet.
    std::size_t pending() const noexcept { return pending_.load(std::memory_order_acquire); }

private:
    void wait_all() noexcept {
        if (pending_.load(std::memory_order_acquire) != 0)
            detail::task_help_until(
                [](const void* g) noexcept {
                    return static_cast<const task_group*>(g)->pending_.load(std::memory_order_acquire) == 0;
                },
                this);
    }
    void capture() noexcept {
        bool expected = false;
        if (claimed_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
            error_ = std::current_exception();
            failed_.store(true, std::memory_order_release);
        }
    }
    void done_one() noexcept {
        // Nothing of the group is touched after the last decrement: the waiter may destroy it.
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) detail::task_wake_waiters();
    }

    std::atomic<std::size_t> pending_{0};
    std::atomic<bool> claimed_{false};
    std::atomic<bool> failed_{false};
    std::exception_ptr error_;
};

}  // namespace aloe
