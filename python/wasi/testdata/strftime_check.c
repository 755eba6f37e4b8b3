/*
 * The host's check of _apysup_strftime.c (strftime_test.go): compiled
 * with it for the host, it compares __wrap_wcsftime, called by its name,
 * with glibc's own wcsftime over every printable conversion character
 * under glibc's flags, widths and modifiers, a few whole formats, times
 * at the ISO week and century edges, struct tm with and without zone and
 * DST, three zones and three buffer sizes (one too small for most
 * results), then 20,000 random formats a zone. Prints each difference and
 * a count; exits 1 on any.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

size_t __wrap_wcsftime(wchar_t *restrict, size_t, const wchar_t *restrict,
                       const struct tm *restrict);

static const char *const flags[] = {"", "_", "-", "0", "^", "#", "^#", "-0", "0_", "#_", "^-"};
static const char *const widths[] = {"", "1", "3", "10", "0"};
static const char *const modifiers[] = {"", "E", "O"};
static const char *const whole[] = {
    "", "%", "%_", "%5", "%E", "x%", "%%%", "a%Yb%mc", "%%d", "%99999999999d",
    "%4294967297d", "%2147483647d", "%Y-%m-%dT%H:%M:%S%z", "%c | %x | %X",
    "%l:%M %P", "%A, %B %-d, %Y", "%-I:%M %p", "%^#p%#^P%10%%-5n%03t",
};
static const long long times[] = {
    1710079509, 1709611509, 0, -34560000, 1735603200, 1704067200,
    1609459200, 1230681600, 253402300799LL, -62135596800LL, 951782400,
};
static const char *const zones[] = {"UTC", "America/New_York", "Asia/Kolkata"};

static long checks, differ;

static void
check(const char *fmt)
{
    wchar_t wfmt[64], want[512], got[512];
    if (mbstowcs(wfmt, fmt, 64) == (size_t)-1) {
        abort();
    }
    static const size_t caps[] = {512, 12, 3};
    for (size_t k = 0; k < sizeof times / sizeof times[0]; k++) {
        time_t t = (time_t)times[k];
        struct tm local;
        if (localtime_r(&t, &local) == NULL) {
            abort();
        }
        struct tm bare = local, unknown = local;
        bare.tm_zone = NULL;
        bare.tm_gmtoff = 0;
        unknown.tm_isdst = -1;
        const struct tm *tms[] = {&local, &bare, &unknown};
        for (size_t m = 0; m < 3; m++) {
            for (size_t c = 0; c < 3; c++) {
                size_t w = wcsftime(want, caps[c], wfmt, tms[m]);
                size_t g = __wrap_wcsftime(got, caps[c], wfmt, tms[m]);
                checks++;
                if (w != g || (w != 0 && wcscmp(want, got) != 0)) {
                    differ++;
                    printf("%s at %lld (tm %zu, %zu wide): glibc %zu [%ls], ours %zu [%ls]\n",
                           fmt, times[k], m, caps[c], w, w ? want : L"", g, g ? got : L"");
                }
            }
        }
    }
}

int
main(void)
{
    for (size_t z = 0; z < sizeof zones / sizeof zones[0]; z++) {
        setenv("TZ", zones[z], 1);
        tzset();
        for (int ch = 32; ch < 127; ch++) {
            for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
                for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
                    for (size_t m = 0; m < sizeof modifiers / sizeof modifiers[0]; m++) {
                        char fmt[32];
                        snprintf(fmt, sizeof fmt, "%%%s%s%s%c", flags[f], widths[w], modifiers[m], ch);
                        check(fmt);
                    }
                }
            }
        }
        for (size_t k = 0; k < sizeof whole / sizeof whole[0]; k++) {
            check(whole[k]);
        }
        /* Random formats (a fixed seed): runs of "%", flags, digits,
         * modifiers, conversion characters and plain text, in any order,
         * as a guest's format may be. */
        static const char alphabet[] = "%%%%%_-0^#123456789EOaAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyYzZQfq :/%";
        unsigned long long seed = 0x9e3779b97f4a7c15ULL + z;
        for (int k = 0; k < 20000; k++) {
            char fmt[17];
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t len = 1 + (size_t)(seed >> 60);
            for (size_t i = 0; i < len; i++) {
                seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
                fmt[i] = alphabet[(seed >> 33) % (sizeof alphabet - 1)];
            }
            fmt[len] = 0;
            check(fmt);
        }
    }
    printf("%ld checks, %ld differ\n", checks, differ);
    return differ != 0;
}
