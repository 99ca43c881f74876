// ncursesw for Swift: Debian's curses.h hides the wide-character API unless _XOPEN_SOURCE_EXTENDED is defined
// before it is included, and SwiftPM drops pkg-config's -D flags, so the defines live here. Function-like
// macros and C globals that Swift 6 calls "not concurrency-safe" get static inline accessors.
#ifndef CNCURSESW_SHIM_H
#define CNCURSESW_SHIM_H
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700
#endif
#define _XOPEN_SOURCE_EXTENDED 1
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <wchar.h>
#include <stdio.h>
#include <ncursesw/ncurses.h>

static inline attr_t shim_A_NORMAL(void) { return A_NORMAL; }
static inline attr_t shim_A_BOLD(void) { return A_BOLD; }
static inline attr_t shim_A_REVERSE(void) { return A_REVERSE; }
static inline attr_t shim_A_UNDERLINE(void) { return A_UNDERLINE; }
static inline attr_t shim_A_DIM(void) { return A_DIM; }
static inline attr_t shim_A_ITALIC(void) { return A_ITALIC; }
static inline WINDOW *shim_stdscr(void) { return stdscr; }
static inline int shim_COLORS(void) { return COLORS; }
static inline int shim_COLOR_PAIRS(void) { return COLOR_PAIRS; }
static inline int shim_LINES(void) { return LINES; }
static inline int shim_COLS(void) { return COLS; }
static inline FILE *shim_stdout(void) { return stdout; }
static inline FILE *shim_stdin(void) { return stdin; }
static inline int shim_KEY_CODE_YES(void) { return KEY_CODE_YES; }
/// Sets attributes and an extended colour pair (pairs above 32767 need the opts argument).
static inline int shim_attr_set_pair(attr_t attrs, int pair) { return attr_set(attrs, (short)(pair > 32767 ? 0 : pair), pair > 32767 ? &pair : NULL); }
/// Clicks and the wheel (buttons 4 and 5), reported at once (no click interval).
static inline int shim_mouse_on(void) {
    mouseinterval(0);
    return mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL) != 0;
}
/// The last mouse event: 1 click, 4 wheel up, 5 wheel down, 0 anything else.
static inline int shim_get_mouse(int *x, int *y) {
    MEVENT e;
    if (getmouse(&e) != OK) return 0;
    *x = e.x; *y = e.y;
    if (e.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) return 1;
    if (e.bstate & BUTTON4_PRESSED) return 4;
    if (e.bstate & BUTTON5_PRESSED) return 5;
    return 0;
}
#endif
