/*
 * libintl.h for the WASI build, which wasi-libc lacks: glibc's message
 * catalog interface, as the locale module's gettext, dgettext, dcgettext,
 * textdomain, bindtextdomain and bind_textdomain_codeset call it, answered
 * by _apysup_messages.c.
 */
#ifndef _APYSUP_LIBINTL_H
#define _APYSUP_LIBINTL_H

char *gettext(const char *msgid);
char *dgettext(const char *domainname, const char *msgid);
char *dcgettext(const char *domainname, const char *msgid, int category);
char *textdomain(const char *domainname);
char *bindtextdomain(const char *domainname, const char *dirname);
char *bind_textdomain_codeset(const char *domainname, const char *codeset);

#endif
