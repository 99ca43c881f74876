// Restores the terminal when the process dies: the termios saved before curses started and a sigaction
// handler for crash and termination signals that uses only async-signal-safe calls, then chains to the
// handler that was there before (so a backtrace still prints, on a clean screen).
#ifndef TERMINAL_GUARD_H
#define TERMINAL_GUARD_H

/// Saves the terminal attributes of `fd` (call before curses changes them). Returns 0 on success.
int terminal_guard_save(int fd);

/// Installs handlers for SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGTERM, SIGHUP and SIGQUIT that
/// restore the terminal and then re-raise the signal with the previous handler.
void terminal_guard_install(void);

/// Restores the saved attributes and leaves the alternate screen, shows the cursor and turns mouse
/// reporting off. Async-signal-safe; does nothing when nothing was saved.
void terminal_guard_restore(void);

/// Forgets the saved attributes (after a normal endwin) and puts the previous handlers back.
void terminal_guard_uninstall(void);

/// Turns on SIGINT as a signal (the terminal is in raw mode, so Ctrl-C arrives as a key); for tests.
int terminal_guard_raise(int sig);

#endif
