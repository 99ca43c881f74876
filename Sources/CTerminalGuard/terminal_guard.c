#include "terminal_guard.h"
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static struct termios saved;
static int saved_fd = -1;
static volatile sig_atomic_t have_saved = 0;

static const int guarded[] = { SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGTERM, SIGHUP, SIGQUIT, SIGINT };
#define GUARDED_COUNT (sizeof(guarded) / sizeof(guarded[0]))
static struct sigaction previous[GUARDED_COUNT];
static volatile sig_atomic_t installed = 0;

int terminal_guard_save(int fd) {
    if (tcgetattr(fd, &saved) != 0) return -1;
    saved_fd = fd;
    have_saved = 1;
    return 0;
}

void terminal_guard_restore(void) {
    if (!have_saved) return;
    have_saved = 0;
    tcsetattr(saved_fd, TCSANOW, &saved);
    static const char reset[] = "\033[0m\033[?25h\033[?1049l\033[?1000l\033[?1006l\r\n";
    ssize_t ignored = write(saved_fd, reset, sizeof(reset) - 1);
    (void)ignored;
}

static void handler(int sig, siginfo_t *info, void *context) {
    terminal_guard_restore();
    for (unsigned i = 0; i < GUARDED_COUNT; i++) {
        if (guarded[i] != sig) continue;
        struct sigaction *prev = &previous[i];
        if (prev->sa_flags & SA_SIGINFO) {
            if (prev->sa_sigaction) { prev->sa_sigaction(sig, info, context); return; }
        } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN) {
            prev->sa_handler(sig);
            return;
        } else if (prev->sa_handler == SIG_IGN) {
            return;
        }
        // Default action: put it back and deliver the signal again.
        sigaction(sig, prev, NULL);
        raise(sig);
        return;
    }
}

void terminal_guard_install(void) {
    if (installed) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigset_t unblock;
    sigemptyset(&unblock);
    for (unsigned i = 0; i < GUARDED_COUNT; i++) {
        sigaction(guarded[i], &sa, &previous[i]);
        sigaddset(&unblock, guarded[i]);
    }
    // A parent may have started us with these signals blocked; they must reach the handler.
    pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);
    installed = 1;
}

void terminal_guard_uninstall(void) {
    if (!installed) return;
    for (unsigned i = 0; i < GUARDED_COUNT; i++) sigaction(guarded[i], &previous[i], NULL);
    installed = 0;
    have_saved = 0;
}

int terminal_guard_raise(int sig) { return raise(sig); }
