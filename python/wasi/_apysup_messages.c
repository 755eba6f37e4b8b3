/*
 * Message catalogs and the system log, which wasi-libc lacks, answered as
 * the native guest's glibc answers them in its sandbox.
 *
 * Catalogs (include/libintl.h; the locale module's gettext family): the
 * guest's locale is C.UTF-8 and it has no catalogs (the wazero guest does
 * not see /usr/share/locale), so every lookup answers the message it was
 * given, as glibc does when it finds no translation. The text domain and
 * each domain's directory and codeset are kept as glibc keeps them:
 * "messages" and /usr/share/locale until set, "" resetting the domain.
 *
 * The system log (include/syslog.h; CPython's own syslog module, a
 * built-in of build.sh's Setup.local): the native sandbox has no /dev/log
 * to send to, and no /dev/console for LOG_CONS, so a message goes nowhere
 * but to stderr under LOG_PERROR, as "ident[pid]: message" (glibc's
 * header without its priority and time stamp). The mask, the facility and
 * the checks of a priority's bits are glibc 2.36's (misc/syslog.c),
 * including its own complaint about unknown bits.
 */
#define _WASI_EMULATED_GETPID /* getpid is _apysup_host.c's */
#include <errno.h>
#include <libintl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

/* --- catalogs ------------------------------------------------------------ */

static const char default_domain[] = "messages";
static const char default_dir[] = "/usr/share/locale"; /* glibc's LOCALEDIR */

static char *current_domain = (char *)default_domain;

/* One binding per domain that was bound: its directory and codeset. */
struct binding {
	struct binding *next;
	char *domain, *dir, *codeset;
};
static struct binding *bindings;

char *gettext(const char *msgid) { return (char *)msgid; }

char *dgettext(const char *domainname, const char *msgid) { return (char *)msgid; }

char *dcgettext(const char *domainname, const char *msgid, int category) { return (char *)msgid; }

/* replace sets *slot to a copy of value, freeing what it held unless it
 * is one of the defaults above; 0, or -1 with ENOMEM. */
static int replace(char **slot, const char *value) {
	char *copy = strdup(value);
	if (copy == NULL)
		return -1;
	if (*slot != default_domain && *slot != default_dir)
		free(*slot);
	*slot = copy;
	return 0;
}

char *textdomain(const char *domainname) {
	if (domainname == NULL)
		return current_domain;
	if (domainname[0] == '\0' || strcmp(domainname, default_domain) == 0) {
		if (current_domain != default_domain)
			free(current_domain);
		current_domain = (char *)default_domain;
		return current_domain;
	}
	if (replace(&current_domain, domainname) != 0)
		return NULL;
	return current_domain;
}

/* binding_of finds domainname's binding, making it when make is set;
 * NULL when there is none (or, making it, with ENOMEM). */
static struct binding *binding_of(const char *domainname, int make) {
	for (struct binding *b = bindings; b != NULL; b = b->next)
		if (strcmp(b->domain, domainname) == 0)
			return b;
	if (!make)
		return NULL;
	struct binding *b = calloc(1, sizeof *b);
	if (b == NULL || (b->domain = strdup(domainname)) == NULL) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	b->dir = (char *)default_dir;
	b->next = bindings;
	bindings = b;
	return b;
}

char *bindtextdomain(const char *domainname, const char *dirname) {
	if (domainname == NULL || domainname[0] == '\0')
		return NULL;
	if (dirname == NULL) {
		struct binding *b = binding_of(domainname, 0);
		return b != NULL ? b->dir : (char *)default_dir;
	}
	struct binding *b = binding_of(domainname, 1);
	if (b == NULL || replace(&b->dir, dirname) != 0)
		return NULL;
	return b->dir;
}

char *bind_textdomain_codeset(const char *domainname, const char *codeset) {
	if (domainname == NULL || domainname[0] == '\0')
		return NULL;
	if (codeset == NULL) {
		struct binding *b = binding_of(domainname, 0);
		return b != NULL ? b->codeset : NULL;
	}
	struct binding *b = binding_of(domainname, 1);
	if (b == NULL || replace(&b->codeset, codeset) != 0)
		return NULL;
	return b->codeset;
}

/* --- the system log ------------------------------------------------------ */

/* glibc's complaint about a priority's unknown bits is logged with these. */
#define INTERNALLOG (LOG_ERR | LOG_CONS | LOG_PERROR | LOG_PID)

/* The native guest's program, whose name glibc logs without an ident. */
static const char progname[] = "python3.11";

static const char *log_tag;
static int log_stat;
static int log_facility = LOG_USER;
static int log_mask = 0xff;

void openlog(const char *ident, int option, int facility) {
	if (ident != NULL)
		log_tag = ident;
	log_stat = option;
	if (facility != 0 && (facility & ~LOG_FACMASK) == 0)
		log_facility = facility;
}

void closelog(void) { log_tag = NULL; }

int setlogmask(int mask) {
	int old = log_mask;
	if (mask != 0)
		log_mask = mask;
	return old;
}

void syslog(int priority, const char *format, ...) {
	if (priority & ~(LOG_PRIMASK | LOG_FACMASK)) {
		syslog(INTERNALLOG, "syslog: unknown facility/priority: %x", priority);
		priority &= LOG_PRIMASK | LOG_FACMASK;
	}
	if ((log_mask & LOG_MASK(LOG_PRI(priority))) == 0 || (log_stat & LOG_PERROR) == 0)
		return;
	va_list ap;
	va_start(ap, format);
	char *message = NULL;
	int n = vasprintf(&message, format, ap);
	va_end(ap);
	if (n < 0)
		return;
	const char *tag = log_tag != NULL ? log_tag : progname;
	const char *end = n > 0 && message[n - 1] == '\n' ? "" : "\n";
	if (log_stat & LOG_PID)
		dprintf(STDERR_FILENO, "%s[%d]: %s%s", tag, (int)getpid(), message, end);
	else
		dprintf(STDERR_FILENO, "%s: %s%s", tag, message, end);
	free(message);
}
