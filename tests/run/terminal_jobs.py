"""`aloe run` as a job of an interactive shell on a terminal (a pseudo-terminal here).

    python3 terminal_jobs.py <aloe tool>

Checks what a user at a terminal does: a pipeline whose other member reads the terminal
(`aloe run -- app | less`: before, aloe run gave the terminal to the program's own process
group and the reader was stopped by SIGTTIN), Ctrl-Z then `fg`, and Ctrl-C (status 130, the
program interrupted once). Every wait is for a marker the shell prints (split by quotes in the
typed line, so the echo of the command never matches), with a deadline, so a
slow machine is slower, not a failure. Exit status 0 when every check holds.
"""
import os
import pty
import select
import signal
import subprocess
import sys
import time

DEADLINE_S = 60


class Shell:
    def __init__(self):
        env = dict(os.environ, TERM="dumb", PS1="$ ", HISTFILE="/dev/null")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"], env)
        self.seen = ""
        self.send("bind 'set enable-bracketed-paste off' 2>/dev/null; PS1='$ '; echo READY\n")
        self.wait_for("READY\r\n")

    def send(self, text):
        os.write(self.fd, text.encode())

    def wait_for(self, *markers):
        """Reads until one of `markers` appears after what was consumed; returns the text up to
        it (and, with several markers, which one came)."""
        end = time.monotonic() + DEADLINE_S
        while True:
            found = [(self.seen.index(m), m) for m in markers if m in self.seen]
            if found:
                _, marker = min(found)
                upto, self.seen = self.seen.split(marker, 1)
                return upto if len(markers) == 1 else (upto, marker)
            left = end - time.monotonic()
            if left <= 0:
                sys.exit(f"terminal_jobs: none of {markers!r} within {DEADLINE_S} s; the terminal showed:\n{self.seen}")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    self.seen += os.read(self.fd, 4096).decode(errors="replace")
                except OSError:
                    sys.exit(f"terminal_jobs: the shell went away; the terminal showed:\n{self.seen}")

    def close(self):
        self.send("exit\n")
        os.waitpid(self.pid, 0)


def check(what, ok, shown):
    if not ok:
        sys.exit(f"terminal_jobs: {what}; the terminal showed:\n{shown}")


def main():
    aloe = sys.argv[1]
    run = f"'{aloe}' run --summary none --"
    sh = Shell()

    # A pipeline's other member reads the terminal while the program runs: the reader takes
    # the program's first line from the pipe, says so on the terminal, then reads the terminal.
    reader = "sh -c 'read line; echo got-line:$line; read x < /dev/tty; echo got:$x'"
    sh.send(f"{run} sh -c 'echo from-pro\"\"gram; sleep 2' | {reader}; echo E\"ND:\"$?\n")
    sh.wait_for("got-line:from-program")
    sh.send("typed\n")
    shown, marker = sh.wait_for("END:", "Stopped")
    check("the pipeline's reader was not stopped by the terminal (SIGTTIN)", marker == "END:", shown + marker)
    status = sh.wait_for("\n").strip()
    check("the pipeline's reader got the typed line", "got:typed" in shown, shown)
    check(f"the pipeline ended with 0 (status {status})", status == "0", shown)

    # Ctrl-Z stops the job, fg continues it, Ctrl-C interrupts the program: 130.
    sh.send(f"{run} sh -c 'echo st\"\"arted; exec sleep 30'\n")
    sh.wait_for("started")
    time.sleep(0.3)  # the exec of sleep; Ctrl-Z before it is as good, but this is what a user does
    sh.send("\x1a")
    shown = sh.wait_for("Stopped")
    sh.wait_for("$ ")
    sh.send("fg; echo E\"ND:\"$?\n")
    sh.wait_for("sleep 30")  # bash echoes the job it brings back
    time.sleep(0.3)
    sh.send("\x03")
    shown = sh.wait_for("END:")
    status = sh.wait_for("\n").strip()
    check(f"Ctrl-C after fg ends the job with 130 (status {status})", status == "130", shown)
    check("aloe run names the signal", "killed by SIGINT" in shown, shown)
    check("the program was interrupted once", shown.count("killed by") == 1, shown)
    sh.close()
    batch_terminal(aloe)
    print("terminal_jobs: pipeline with a terminal reader, Ctrl-Z/fg and Ctrl-C behave as without aloe run; "
          "a program stopped and continued on a batch job's terminal ends normally")


def batch_terminal(aloe):
    """A pseudo-terminal that is no one's controlling terminal as standard output, as Open MPI
    gives each rank: the program stops itself and is continued by someone else (a user's kill,
    a batch system). Before, aloe run took the terminal for a shell's, stopped itself too, and
    nobody continued it: the job never ended."""
    master, slave = pty.openpty()
    marker = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"aloe-batch-terminal-{os.getpid()}")
    program = f"echo $$ > {marker}.tmp; mv {marker}.tmp {marker}; kill -STOP $$; echo resumed"
    runner = subprocess.Popen([aloe, "run", "--summary", "none", "--", "sh", "-c", program],
                              stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    shown = ""
    try:
        end = time.monotonic() + DEADLINE_S
        while not os.path.exists(marker):
            check("the program started", time.monotonic() < end and runner.poll() is None, shown)
            time.sleep(0.05)
        with open(marker) as f:
            pid = int(f.read())
        while True:  # the program has stopped itself
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "T":
                    break
            check("the program stopped itself", time.monotonic() < end, shown)
            time.sleep(0.05)
        time.sleep(0.3)  # aloe run has seen the stop (and, before, stopped itself)
        os.kill(pid, signal.SIGCONT)  # to the program only
        try:
            status = runner.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            runner.kill()
            runner.wait()
            status = None
        while select.select([master], [], [], 0.2)[0]:
            try:
                shown += os.read(master, 4096).decode(errors="replace")
            except OSError:
                break
        check(f"aloe run ended after the program was continued (status {status})", status == 0, shown)
        check("the program ran on after it was continued", "resumed" in shown, shown)
    finally:
        if runner.poll() is None:
            runner.kill()
        os.close(master)
        if os.path.exists(marker):
            os.remove(marker)


if __name__ == "__main__":
    main()
