/*
 * Calls glibc's setlocale and python/wasi/_apysup_locale.c's wrapper with
 * the same categories, names and environments, in the same order, and
 * prints every answer that differs (TestLocaleWrapperAnswersAsGlibc); then
 * the nl_langinfo items the wrapper answers itself, in each locale, and
 * wcscoll of pairs of strings in each. The wrapper's __real_setlocale and
 * __real_nl_langinfo (musl's, in the WASI build) are stubs: only the
 * wrapper's own answers are compared; its __real_wcscoll is musl's, which
 * answers the difference of the first characters that differ. The host must have the C locales only, as
 * the sandbox's root does.
 */
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

char *__wrap_setlocale(int, const char *);
char *__wrap_nl_langinfo(nl_item);
char *__real_setlocale(int c, const char *n) { (void)c; (void)n; return "C"; }
char *__real_nl_langinfo(nl_item item) { (void)item; return "musl"; }
int __wrap_wcscoll(const wchar_t *, const wchar_t *);

int __real_wcscoll(const wchar_t *l, const wchar_t *r)
{
	for (; *l == *r && *l && *r; l++, r++)
		;
	return *l - *r;
}

static int calls, differ;

static void both(int cat, const char *name)
{
	const char *g = setlocale(cat, name), *w;
	char gs[1024];
	snprintf(gs, sizeof gs, "%s", g ? g : "(null)");
	w = __wrap_setlocale(cat, name);
	calls++;
	if (strcmp(gs, w ? w : "(null)") != 0) {
		differ++;
		printf("DIFF category %d name %s: glibc %s, wrapper %s\n", cat, name ? name : "NULL", gs, w ? w : "(null)");
	}
}

int main(void)
{
	static const char *const names[] = {NULL, "", "C", "POSIX", "C.UTF-8", "C.utf8", "C.utf-8", "C.UTF8", "C.Utf_8",
		"C.", "C.utf", "C.utf88", "en_US.UTF-8", "en_US", "xx", "C.ISO-8859-1", "c", "C.UTF-8@euro", "C.utf8@",
		"UTF-8", "C.UTF-8;C", "posix", "C.UTF.8", "C.utf8.x", "C@x", ".utf8"};
	static const int cats[] = {LC_ALL, LC_CTYPE, LC_NUMERIC, LC_TIME, LC_COLLATE, LC_MONETARY, LC_MESSAGES};
	const size_t ncats = sizeof cats / sizeof *cats;
	char saved[1024];
	setenv("LANG", "C.UTF-8", 1);
	for (int round = 0; round < 2; round++)
		for (size_t c = 0; c < ncats; c++)
			for (size_t n = 0; n < sizeof names / sizeof *names; n++) {
				both(cats[c], names[n]);
				both(LC_ALL, NULL);
				if (round)
					both(cats[(c + n) % ncats], "C");
			}
	both(LC_ALL, "C");
	both(LC_NUMERIC, "C.UTF-8");
	snprintf(saved, sizeof saved, "%s", setlocale(LC_ALL, NULL));
	both(LC_ALL, "C");
	both(LC_ALL, saved);
	both(LC_ALL, NULL);
	both(LC_ALL, "LC_CTYPE=C.UTF-8;LC_NUMERIC=C");
	both(LC_ALL, "LC_CTYPE=C.UTF-8;LC_NUMERIC=C;LC_TIME=C;LC_COLLATE=C;LC_MONETARY=C;LC_MESSAGES=C;LC_PAPER=C;"
		"LC_NAME=C;LC_ADDRESS=C;LC_TELEPHONE=C;LC_MEASUREMENT=C;LC_IDENTIFICATION=POSIX");
	both(LC_ALL, NULL);
	both(LC_ALL, "LC_CTYPE=C.UTF-8;LC_NUMERIC=xx;LC_TIME=C;LC_COLLATE=C;LC_MONETARY=C;LC_MESSAGES=C;LC_PAPER=C;"
		"LC_NAME=C;LC_ADDRESS=C;LC_TELEPHONE=C;LC_MEASUREMENT=C;LC_IDENTIFICATION=C");
	both(LC_ALL, "LC_CTYPE=C;LC_CTYPE=C;LC_TIME=C;LC_COLLATE=C;LC_MONETARY=C;LC_MESSAGES=C;LC_PAPER=C;"
		"LC_NAME=C;LC_ADDRESS=C;LC_TELEPHONE=C;LC_MEASUREMENT=C;LC_IDENTIFICATION=C");
	both(LC_ALL, NULL);
	setenv("LC_NUMERIC", "C", 1);
	both(LC_ALL, "");
	both(LC_ALL, NULL);
	setenv("LC_TIME", "xx", 1);
	both(LC_ALL, "");
	both(LC_ALL, NULL);
	both(LC_TIME, "");
	both(LC_NUMERIC, "");
	setenv("LC_ALL", "POSIX", 1);
	both(LC_ALL, "");
	both(LC_ALL, NULL);
	setenv("LC_ALL", "", 1);
	unsetenv("LC_TIME");
	both(LC_ALL, "");
	both(LC_ALL, NULL);
	unsetenv("LANG");
	unsetenv("LC_NUMERIC");
	both(LC_ALL, "");
	both(LC_ALL, NULL);
	setenv("LANG", "en_US.UTF-8", 1);
	both(LC_ALL, "");
	both(LC_CTYPE, "");
	both(LC_ALL, NULL);
	both(-1, "C");
	both(100, NULL); /* no category of either */
	static const nl_item items[] = {CODESET, D_T_FMT, CRNCYSTR, ALT_DIGITS, ERA_D_FMT, ERA_D_T_FMT, ERA_T_FMT};
	static const char *const locales[] = {"C", "C.UTF-8", "POSIX", "C.utf8"};
	for (size_t l = 0; l < sizeof locales / sizeof *locales; l++) {
		both(LC_ALL, locales[l]);
		for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
			char g[256];
			snprintf(g, sizeof g, "%s", nl_langinfo(items[i]));
			calls++;
			if (strcmp(g, __wrap_nl_langinfo(items[i])) != 0) {
				differ++;
				printf("DIFF %s nl_langinfo(%d): glibc %s, wrapper %s\n", locales[l], (int)items[i], g,
				       __wrap_nl_langinfo(items[i]));
			}
		}
		static const wchar_t *const words[] = {L"", L"a", L"B", L"b", L"z", L"A", L"ab", L"abc", L"a b",
			L"\u00e9", L"e", L"\U0001F600", L"\ud7ff", L"\ue000", L"\uffff", L"\U0010FFFF", L"0", L"~", L"\x7f"};
		const size_t nwords = sizeof words / sizeof *words;
		for (size_t a = 0; a < nwords; a++)
			for (size_t b = 0; b < nwords; b++) {
				int g = wcscoll(words[a], words[b]), w = __wrap_wcscoll(words[a], words[b]);
				calls++;
				if (g != w) {
					differ++;
					printf("DIFF %s wcscoll(%ls, %ls): glibc %d, wrapper %d\n", locales[l], words[a], words[b], g, w);
				}
			}
	}
	printf("%d calls, %d differ\n", calls, differ);
	return differ != 0;
}
