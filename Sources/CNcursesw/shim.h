// C helpers for the parts of ncursesw that Swift 6 cannot import directly:
// attribute macros, mutable globals (stdscr, COLORS), and wcwidth.
#ifndef STRATA_NCURSES_SHIM_H
#define STRATA_NCURSES_SHIM_H

#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <locale.h>
#include <langinfo.h>
#include <stdio.h>
#include <wchar.h>
#include <ncursesw/ncurses.h>

extern int wcwidth(wchar_t c);

static inline WINDOW *strata_stdscr(void) { return stdscr; }
static inline int strata_colors(void) { return COLORS; }
static inline int strata_color_pairs(void) { return COLOR_PAIRS; }
static inline int strata_wcwidth(wchar_t c) { return wcwidth(c); }

static const attr_t STRATA_A_NORMAL = A_NORMAL;
static const attr_t STRATA_A_BOLD = A_BOLD;
static const attr_t STRATA_A_DIM = A_DIM;
static const attr_t STRATA_A_REVERSE = A_REVERSE;
static const attr_t STRATA_A_UNDERLINE = A_UNDERLINE;

/// Draws `count` wide characters at (y, x) with one attribute and colour pair.
static inline int strata_put(WINDOW *win, int y, int x, const wchar_t *text, int count, attr_t attr, short pair) {
    wattr_set(win, attr, pair, NULL);
    return mvwaddnwstr(win, y, x, text, count);
}

/// `setlocale(LC_ALL, "")`, then the codeset's name ("UTF-8" when Unicode works).
static inline const char *strata_init_locale(void) {
    setlocale(LC_ALL, "");
    return nl_langinfo(CODESET);
}

/// The terminal on file descriptors 0/1, or NULL when TERM is unusable.
/// The streams are opened once, so a second attempt (another description)
/// does not leak the first attempt's.
static inline SCREEN *strata_newterm(const char *term) {
    static FILE *out = NULL;
    static FILE *in = NULL;
    if (out == NULL) out = fdopen(1, "w");
    if (in == NULL) in = fdopen(0, "r");
    if (out == NULL || in == NULL) return NULL;
    return newterm(term, out, in);
}

/// The colour count of the current terminal description (before
/// start_color): ncurses builds with the old ABI cap it at 32767.
static inline int strata_terminfo_colors(void) { return tigetnum("colors"); }

/// Whether the terminal can position the cursor (TERM=dumb cannot).
static inline int strata_has_cursor_addressing(void) {
    char *cup = tigetstr("cup");
    return cup != NULL && cup != (char *)-1;
}
#endif
