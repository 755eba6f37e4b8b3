/*
 * wcsftime as glibc formats, for the WASI build (linked with
 * -Wl,--wrap=wcsftime: time.strftime, and through it datetime's strftime
 * and logging, call __wrap_wcsftime).
 *
 * musl's strftime knows the POSIX conversions and the "-", "_", "0" and
 * "+" flags; glibc's also has the GNU ones the native guest answers:
 * %k, %l, %P and %s, the "^" (upper case) and "#" (swapped case) flags, a
 * field width for any conversion ("%10A"), and a conversion it does not
 * know copied as written ("%Q" is "%Q") where musl fails the whole call,
 * which time.strftime returns as "". This file is written from glibc's
 * documented behaviour and checked against the native guest's answers
 * (integration/parity/corpus/std_strftime.py); it is not glibc's code.
 *
 * The rules, per conversion "%[flags][width][E|O]c":
 * - flags: "_" pads numbers with spaces, "-" does not pad them, "0" pads
 *   with zeros (the last of the three wins); "^" upper-cases text, "#"
 *   swaps the case of the conversions that have one (names up, %p and %Z
 *   down);
 * - a number gets at least its conversion's digits, or width digits when
 *   the width is larger, zero-padded unless "_" (spaces) or "-" (none);
 *   %e, %k and %l pad with spaces unless "0" or "-";
 * - anything else (text, a composite such as %T, and what a number left
 *   of its width after "-") is padded on the left to width: with zeros
 *   under "0", spaces otherwise;
 * - the names and composites are the C locale's, the only one the guest
 *   has (_apysup_locale.c);
 * - an unknown conversion, or a modifier a conversion does not take, is
 *   copied from its "%" through its last character, padded to width.
 */
#define _GNU_SOURCE /* tzset, tzname, tm_gmtoff, tm_zone */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <wchar.h>
#include <wctype.h>

/* musl's, from its __tz.c (build.sh); wasi-libc's time.h leaves them out. */
void tzset(void);
extern char *tzname[2];

static const char *const day_names[] = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
};
static const char *const month_names[] = {
    "January", "February", "March", "April", "May", "June", "July",
    "August", "September", "October", "November", "December",
};

/* out is the result being written: at most cap characters and the NUL. */
struct out {
    wchar_t *s;
    size_t cap, len;
    bool full; /* something did not fit: the call returns 0 */
};

/* One conversion's state. */
struct spec {
    wchar_t pad;   /* 0, '_', '-' or '0' */
    int width;     /* -1 when none was given */
    bool upper, lower;
};

/* put writes n characters of text (or of chars when text is NULL),
 * padded on the left to the spec's width and case-mapped. */
static void
put(struct out *o, const struct spec *sp, const wchar_t *text,
    const char *chars, size_t n)
{
    size_t fill = sp->width > 0 && (size_t)sp->width > n ? (size_t)sp->width - n : 0;
    if (o->full || fill + n >= o->cap - o->len) {
        o->full = true;
        return;
    }
    for (size_t k = 0; k < fill; k++) {
        o->s[o->len++] = sp->pad == L'0' ? L'0' : L' ';
    }
    for (size_t k = 0; k < n; k++) {
        wchar_t c = text ? text[k] : (wchar_t)(unsigned char)chars[k];
        if (sp->lower) {
            c = towlower(c);
        } else if (sp->upper) {
            c = towupper(c);
        }
        o->s[o->len++] = c;
    }
}

static void
put_str(struct out *o, const struct spec *sp, const char *chars)
{
    put(o, sp, NULL, chars, strlen(chars));
}

/* decimal writes value, with its sign, to the characters ending at end
 * and returns where it starts. */
static char *
decimal(char *end, long long value)
{
    unsigned long long u = value < 0 ? -(unsigned long long)value : (unsigned long long)value;
    do {
        *--end = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (value < 0) {
        *--end = '-';
    }
    return end;
}

/* put_number writes value with at least digits digits (or width's), by
 * the spec's padding; space_pad is %e's, %k's and %l's default. */
static void
put_number(struct out *o, struct spec *sp, long long value, int digits,
           bool space_pad)
{
    char text[24];
    char *buf = decimal(text + sizeof text, value);
    size_t n = (size_t)(text + sizeof text - buf);
    if (sp->width > digits) {
        digits = sp->width;
    }
    wchar_t pad = sp->pad;
    if (space_pad && pad != L'0' && pad != L'-') {
        pad = L'_';
    }
    int missing = digits - (int)n;
    if (pad != L'-' && missing > 0) {
        if (pad == L'_') {
            struct spec blank = {.pad = L' ', .width = missing};
            put(o, &blank, NULL, "", 0);
            sp->width = sp->width > missing ? sp->width - missing : 0;
        } else {
            if (o->full || (size_t)digits >= o->cap - o->len) {
                o->full = true;
                return;
            }
            size_t at = 0;
            if (value < 0) {
                o->s[o->len++] = L'-';
                at = 1;
            }
            for (int k = 0; k < missing; k++) {
                o->s[o->len++] = L'0';
            }
            struct spec rest = *sp;
            rest.width = 0;
            put(o, &rest, NULL, buf + at, n - at);
            return;
        }
    }
    put(o, sp, NULL, buf, n);
}

/* ISO 8601 weeks start on Monday; week 1 holds the year's first Thursday. */
static int
iso_week_days(int yday, int wday)
{
    /* Days from the Monday that starts yday's ISO week to the start of
     * the ISO year's week 1 (negative: the week belongs to the year
     * before). 378 is a multiple of 7 that keeps the operand positive. */
    return yday - (yday - wday + 4 + 378) % 7 + 3;
}

static bool
leap(long long year)
{
    return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
}

static size_t format(wchar_t *s, size_t cap, const wchar_t *fmt, const struct tm *tm);

/* put_sub writes the composite conversion sub (formatted with no flags of
 * its own) as one piece of text: padded to width, upper-cased by "^". */
static void
put_sub(struct out *o, struct spec *sp, const wchar_t *sub, const struct tm *tm)
{
    wchar_t buf[128];
    size_t n = format(buf, sizeof buf / sizeof buf[0], sub, tm);
    sp->lower = false;
    put(o, sp, buf, NULL, n);
}

/* convert writes one conversion; false when it is not one glibc knows in
 * this form (the caller copies it as written). */
static bool
convert(struct out *o, struct spec *sp, wchar_t mod, wchar_t c,
        bool swap, const struct tm *tm)
{
    long long year = (long long)tm->tm_year + 1900;
    int hour12 = tm->tm_hour % 12 == 0 ? 12 : tm->tm_hour % 12;
    bool day_ok = tm->tm_wday >= 0 && tm->tm_wday <= 6;
    bool mon_ok = tm->tm_mon >= 0 && tm->tm_mon <= 11;
    char abbr[4];
    switch (c) {
    case L'%':
        if (mod) return false;
        put(o, sp, L"%", NULL, 1);
        return true;
    case L'n':
        put(o, sp, L"\n", NULL, 1);
        return true;
    case L't':
        put(o, sp, L"\t", NULL, 1);
        return true;
    case L'a':
    case L'A':
        if (mod) return false;
        if (swap) sp->upper = true, sp->lower = false;
        if (!day_ok) {
            put_str(o, sp, "?");
        } else if (c == L'A') {
            put_str(o, sp, day_names[tm->tm_wday]);
        } else {
            memcpy(abbr, day_names[tm->tm_wday], 3), abbr[3] = 0;
            put_str(o, sp, abbr);
        }
        return true;
    case L'b':
    case L'h':
    case L'B':
        /* glibc takes "#" on %b and %h before it refuses their E, so the
         * copy of a refused "%#Eb" is upper-cased; %B refuses first. */
        if (swap && c != L'B') sp->upper = true, sp->lower = false;
        if (mod == L'E') return false;
        if (swap) sp->upper = true, sp->lower = false;
        if (!mon_ok) {
            put_str(o, sp, "?");
        } else if (c == L'B') {
            put_str(o, sp, month_names[tm->tm_mon]);
        } else {
            memcpy(abbr, month_names[tm->tm_mon], 3), abbr[3] = 0;
            put_str(o, sp, abbr);
        }
        return true;
    case L'P':
        sp->lower = true;
        /* fall through */
    case L'p':
        if (swap) sp->upper = false, sp->lower = true;
        put_str(o, sp, tm->tm_hour > 11 ? "PM" : "AM");
        return true;
    case L'c':
        if (mod == L'O') return false;
        put_sub(o, sp, L"%a %b %e %H:%M:%S %Y", tm);
        return true;
    case L'x':
        if (mod == L'O') return false;
        put_sub(o, sp, L"%m/%d/%y", tm);
        return true;
    case L'X':
        if (mod == L'O') return false;
        put_sub(o, sp, L"%H:%M:%S", tm);
        return true;
    case L'D':
        if (mod) return false;
        put_sub(o, sp, L"%m/%d/%y", tm);
        return true;
    case L'F':
        if (mod) return false;
        put_sub(o, sp, L"%Y-%m-%d", tm);
        return true;
    case L'R':
        put_sub(o, sp, L"%H:%M", tm);
        return true;
    case L'T':
        put_sub(o, sp, L"%H:%M:%S", tm);
        return true;
    case L'r':
        put_sub(o, sp, L"%I:%M:%S %p", tm);
        return true;
    case L'Z': {
        if (swap) sp->upper = false, sp->lower = true;
        const char *zone = tm->tm_zone;
        if ((zone == NULL || *zone == 0) && tm->tm_isdst >= 0) {
            tzset();
            zone = tm->tm_isdst <= 1 ? tzname[tm->tm_isdst] : "?";
        }
        put_str(o, sp, zone ? zone : "");
        return true;
    }
    case L'z': {
        if (tm->tm_isdst < 0) return true;
        long off = tm->tm_gmtoff;
        put(o, sp, off < 0 ? L"-" : L"+", NULL, 1);
        off = (off < 0 ? -off : off) / 60;
        put_number(o, sp, off / 60 * 100 + off % 60, 4, false);
        return true;
    }
    case L's': {
        /* Seconds since the epoch take no zeros of their own: only the
         * width pads them, before any sign. */
        struct tm copy = *tm;
        char text[24];
        char *seconds = decimal(text + sizeof text, (long long)mktime(&copy));
        put(o, sp, NULL, seconds, (size_t)(text + sizeof text - seconds));
        return true;
    }
    case L'u':
        put_number(o, sp, (tm->tm_wday + 6) % 7 + 1, 1, false);
        return true;
    case L'C':
        put_number(o, sp, year / 100 - (year % 100 < 0), 1, false);
        return true;
    case L'Y':
        if (mod == L'O') return false;
        put_number(o, sp, (int)year, 1, false);
        return true;
    case L'y':
        put_number(o, sp, (tm->tm_year % 100 + 100) % 100, 2, false);
        return true;
    default:
        break;
    }
    /* The numbers that refuse the E modifier. */
    if (mod == L'E') return false;
    switch (c) {
    case L'd': put_number(o, sp, tm->tm_mday, 2, false); return true;
    case L'e': put_number(o, sp, tm->tm_mday, 2, true); return true;
    case L'H': put_number(o, sp, tm->tm_hour, 2, false); return true;
    case L'k': put_number(o, sp, tm->tm_hour, 2, true); return true;
    case L'I': put_number(o, sp, hour12, 2, false); return true;
    case L'l': put_number(o, sp, hour12, 2, true); return true;
    case L'j': put_number(o, sp, tm->tm_yday + 1, 3, false); return true;
    case L'M': put_number(o, sp, tm->tm_min, 2, false); return true;
    case L'm': put_number(o, sp, tm->tm_mon + 1, 2, false); return true;
    case L'S': put_number(o, sp, tm->tm_sec, 2, false); return true;
    case L'U': put_number(o, sp, (tm->tm_yday - tm->tm_wday + 7) / 7, 2, false); return true;
    case L'W': put_number(o, sp, (tm->tm_yday - (tm->tm_wday + 6) % 7 + 7) / 7, 2, false); return true;
    case L'w': put_number(o, sp, tm->tm_wday, 1, false); return true;
    case L'V':
    case L'g':
    case L'G': {
        int iso_year = (int)year;
        int days = iso_week_days(tm->tm_yday, tm->tm_wday);
        if (days < 0) {
            iso_year--;
            days = iso_week_days(tm->tm_yday + (365 + leap(iso_year)), tm->tm_wday);
        } else {
            int next = iso_week_days(tm->tm_yday - (365 + leap(iso_year)), tm->tm_wday);
            if (next >= 0) {
                iso_year++;
                days = next;
            }
        }
        if (c == L'G') {
            put_number(o, sp, iso_year, 1, false);
        } else if (c == L'g') {
            put_number(o, sp, (iso_year % 100 + 100) % 100, 2, false);
        } else {
            put_number(o, sp, days / 7 + 1, 2, false);
        }
        return true;
    }
    default:
        return false;
    }
}

static size_t
format(wchar_t *s, size_t cap, const wchar_t *fmt, const struct tm *tm)
{
    struct out o = {.s = s, .cap = cap};
    if (cap == 0) {
        return 0;
    }
    for (const wchar_t *f = fmt; *f && !o.full; f++) {
        if (*f != L'%') {
            struct spec plain = {.width = -1};
            put(&o, &plain, f, NULL, 1);
            continue;
        }
        struct spec sp = {.width = -1};
        bool swap = false;
        for (;;) {
            wchar_t c = *++f;
            if (c == L'_' || c == L'-' || c == L'0') {
                sp.pad = c;
            } else if (c == L'^') {
                sp.upper = true;
            } else if (c == L'#') {
                swap = true;
            } else {
                break;
            }
        }
        if (*f >= L'0' && *f <= L'9') {
            sp.width = 0;
            for (; *f >= L'0' && *f <= L'9'; f++) {
                int d = *f - L'0';
                sp.width = sp.width > (INT_MAX - d) / 10 ? INT_MAX : sp.width * 10 + d;
            }
        }
        wchar_t mod = 0;
        if (*f == L'E' || *f == L'O') {
            mod = *f++;
        }
        if (*f == 0) {
            f--; /* a "%..." that ends the format is copied as written */
        } else if (convert(&o, &sp, mod, *f, swap, tm)) {
            continue;
        }
        /* Copied as written: from the last "%" through f. */
        const wchar_t *from = f;
        while (*from != L'%') {
            from--;
        }
        put(&o, &sp, from, NULL, (size_t)(f - from + 1));
    }
    if (o.full) {
        return 0;
    }
    s[o.len] = 0;
    return o.len;
}

size_t
__wrap_wcsftime(wchar_t *restrict s, size_t cap, const wchar_t *restrict fmt,
                const struct tm *restrict tm)
{
    return format(s, cap, fmt, tm);
}
