/*
 * setlocale, nl_langinfo and wcscoll as the native guest's glibc answers
 * them. build.sh links this object with
 * -Wl,--wrap=setlocale,--wrap=nl_langinfo,--wrap=wcscoll.
 *
 * wasi-libc's setlocale is musl's: it accepts any name at all (a name it
 * has no data for becomes a copy of C.UTF-8 under that name), only
 * LC_CTYPE knows UTF-8 (setlocale(LC_NUMERIC, "C.UTF-8") answers "C"),
 * and its name for a mixed LC_ALL is "C.UTF-8;C;C;C;C;C". Natively the
 * guest's glibc has the C locales only (the sandbox's root holds no
 * compiled locale), so a script that asks for en_US.UTF-8 to format
 * numbers gets locale.Error there and carried on under wazero, and every
 * name it printed or parsed differed (docs/parity.md, std_locale.py).
 *
 * This wrapper keeps the names as glibc does and refuses what glibc would
 * refuse there, then sets musl's state to the locale each name means:
 *
 *  - "C" and "POSIX" are the C locale, named "C";
 *  - "C.<codeset>" or "C.<codeset>@<modifier>" whose codeset normalises
 *    to utf8 (glibc's rule: letters lowered, digits kept, everything else
 *    dropped, so C.UTF-8, C.utf8, C.UTF8) is C.UTF-8, named as given
 *    (glibc's search of /usr/lib/locale takes a few odder spellings, such
 *    as a territory after the C, which are not modelled);
 *  - "" is the environment's: LC_ALL, else LC_<category>, else LANG, else
 *    "C", each category on its own, and refused if that name would be;
 *  - any other name is refused (NULL), and nothing changes.
 *
 * glibc has twelve categories; the six more than wasi-libc's (LC_PAPER to
 * LC_IDENTIFICATION) are set only through LC_ALL, and show only in
 * LC_ALL's name: one name when all twelve agree, else
 * "LC_CTYPE=...;LC_NUMERIC=...;...", which setlocale(LC_ALL, ...) takes
 * back only whole, as glibc does.
 *
 * nl_langinfo answers seven items as glibc's C and C.UTF-8 locales do
 * where musl's differ: CODESET of the C locale is ANSI_X3.4-1968 (musl:
 * ASCII), D_T_FMT spells %T out, CRNCYSTR is "-", ALT_DIGITS and the ERA
 * formats are empty. The other items already agree (std_locale.py).
 *
 * wcscoll (locale.strcoll's) orders as glibc's C and C.UTF-8 locales do,
 * by code point, but answers the difference of the first characters that
 * differ (musl's wcscmp: strcoll("a", "B") is 31) where glibc answers -1,
 * 0 or 1. The wrapper answers the sign.
 */
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

char *__real_setlocale(int category, const char *name);
char *__real_nl_langinfo(nl_item item);
int __real_wcscoll(const wchar_t *a, const wchar_t *b);

#define NCAT 12
#define NAME_MAX_LEN 64

/* glibc's order, whose first six are wasi-libc's LC_CTYPE (0) to
 * LC_MESSAGES (5). */
static const char *const category_names[NCAT] = {
	"LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES",
	"LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
};

/* A program starts in the C locale, every category. */
static char current[NCAT][NAME_MAX_LEN + 1] = {
	"C", "C", "C", "C", "C", "C", "C", "C", "C", "C", "C", "C",
};

/* "LC_CTYPE=...;" twelve times. */
static char composite[NCAT * (sizeof "LC_IDENTIFICATION=;" + NAME_MAX_LEN)];

/* The codeset up to end (or a '@' modifier) normalises to utf8. */
static int is_utf8_codeset(const char *codeset)
{
	char norm[8];
	size_t n = 0;
	for (const char *p = codeset; *p && *p != '@'; p++) {
		char c = *p;
		if (c == '_' || c == '.')
			return 0; /* glibc reads a territory or a second codeset there */
		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			continue;
		if (n == sizeof norm - 1)
			return 0;
		norm[n++] = c;
	}
	norm[n] = 0;
	return strcmp(norm, "utf8") == 0;
}

static int is_utf8_name(const char *name)
{
	return name[0] == 'C' && name[1] == '.' && is_utf8_codeset(name + 2);
}

/* The name glibc gives the locale name means, or NULL if it has none. */
static const char *known(const char *name)
{
	if (strcmp(name, "C") == 0 || strcmp(name, "POSIX") == 0)
		return "C";
	if (strlen(name) <= NAME_MAX_LEN && is_utf8_name(name))
		return name;
	return NULL;
}

static const char *from_environment(int cat)
{
	static char var[sizeof "LC_IDENTIFICATION"];
	const char *v = getenv("LC_ALL");
	if (v == NULL || *v == 0) {
		strcpy(var, category_names[cat]);
		v = getenv(var);
	}
	if (v == NULL || *v == 0)
		v = getenv("LANG");
	if (v == NULL || *v == 0)
		v = "C";
	return v;
}

/* Sets next[cat] to what name means for cat; 0, or -1 to refuse. */
static int resolve(char next[NCAT][NAME_MAX_LEN + 1], int cat, const char *name)
{
	const char *k = known(*name ? name : from_environment(cat));
	if (k == NULL)
		return -1;
	strcpy(next[cat], k);
	return 0;
}

/* "LC_CTYPE=a;LC_NUMERIC=b;..." with every category once. */
static int resolve_composite(char next[NCAT][NAME_MAX_LEN + 1], const char *name)
{
	int seen[NCAT] = {0};
	char value[NAME_MAX_LEN + 1];
	const char *p = name;
	while (*p) {
		const char *eq = strchr(p, '=');
		if (eq == NULL)
			return -1;
		int cat = -1;
		for (int i = 0; i < NCAT; i++)
			if ((size_t)(eq - p) == strlen(category_names[i]) && strncmp(p, category_names[i], eq - p) == 0)
				cat = i;
		const char *end = strchr(eq + 1, ';');
		size_t len = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
		if (cat < 0 || seen[cat] || len == 0 || len > NAME_MAX_LEN)
			return -1;
		memcpy(value, eq + 1, len);
		value[len] = 0;
		if (resolve(next, cat, value) != 0)
			return -1;
		seen[cat] = 1;
		p = end ? end + 1 : eq + 1 + len;
	}
	for (int i = 0; i < NCAT; i++)
		if (!seen[i])
			return -1;
	return 0;
}

static char *name_of(int cat)
{
	if (cat != LC_ALL)
		return current[cat];
	int same = 1;
	for (int i = 1; i < NCAT; i++)
		same = same && strcmp(current[i], current[0]) == 0;
	if (same)
		return current[0];
	char *s = composite;
	for (int i = 0; i < NCAT; i++) {
		size_t a = strlen(category_names[i]), b = strlen(current[i]);
		memcpy(s, category_names[i], a);
		s[a] = '=';
		memcpy(s + a + 1, current[i], b);
		s[a + 1 + b] = ';';
		s += a + b + 2;
	}
	s[-1] = 0;
	return composite;
}

char *__wrap_setlocale(int cat, const char *name)
{
	if (cat < 0 || cat > LC_ALL)
		return NULL;
	if (name != NULL) {
		char next[NCAT][NAME_MAX_LEN + 1];
		memcpy(next, current, sizeof next);
		int err = 0;
		if (cat != LC_ALL)
			err = resolve(next, cat, name);
		else if (strchr(name, '='))
			err = resolve_composite(next, name);
		else
			for (int i = 0; i < NCAT && !err; i++)
				err = resolve(next, i, name);
		if (err)
			return NULL;
		/* musl's categories, in its own names for the two locales. */
		for (int i = 0; i < LC_ALL; i++)
			if (__real_setlocale(i, is_utf8_name(next[i]) ? "C.UTF-8" : "C") == NULL)
				return NULL;
		memcpy(current, next, sizeof next);
	}
	return name_of(cat);
}

char *__wrap_nl_langinfo(nl_item item)
{
	switch (item) {
	case CODESET:
		return is_utf8_name(current[LC_CTYPE]) ? "UTF-8" : "ANSI_X3.4-1968";
	case D_T_FMT:
		return "%a %b %e %H:%M:%S %Y";
	case CRNCYSTR:
		return "-";
	case ALT_DIGITS:
	case ERA_D_FMT:
	case ERA_D_T_FMT:
	case ERA_T_FMT:
		return "";
	}
	return __real_nl_langinfo(item);
}

int __wrap_wcscoll(const wchar_t *a, const wchar_t *b)
{
	int c = __real_wcscoll(a, b);
	return (c > 0) - (c < 0);
}
