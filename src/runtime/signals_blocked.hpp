// Every signal blocked on the calling thread for a scope, then its mask restored: a helper
// thread started inside inherits the full mask, so the program's signal handlers run on the
// program's own threads, never on aloe's (the counter printer, libaloe-mpi's sentinel, the
// daemon client's listener).
#pragma once

#include <signal.h>

namespace aloe::runtime {

class signals_blocked {
public:
    signals_blocked() noexcept {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old_);
    }
    ~signals_blocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
    signals_blocked(const signals_blocked&) = delete;
    signals_blocked& operator=(const signals_blocked&) = delete;

private:
    sigset_t old_;
};

}  // namespace aloe::runtime
