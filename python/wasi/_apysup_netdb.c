// The resolver, as the confined native guest's glibc answers it
// (include/netdb.h declares it; wasi-libc has none). The native guest has
// no network: its /etc/nsswitch.conf says "hosts: files", /etc/hosts names
// localhost alone, and there are no /etc/services or /etc/protocols. So
// glibc answers every lookup from those files and numeric addresses, and
// so does this file, rule for rule (glibc 2.36's getaddrinfo.c,
// getnameinfo.c, inet_addr.c and nss_files):
//
//   - getaddrinfo: the same checks in the same order (flags, family,
//     socket type and protocol against glibc's table of them, the
//     service), numeric addresses first (inet_aton's forms for IPv4, an
//     IPv6 address with a numeric scope), then /etc/hosts without "multi":
//     the first line that names the host, for AF_UNSPEC of either family;
//     AI_V4MAPPED and AI_ALL as glibc maps; no host: the loopback or, with
//     AI_PASSIVE, the wildcard, IPv6 first; one result per address and
//     socket type (stream, datagram, raw when no type is asked), sorted by
//     glibc's default precedence (RFC 3484) where there are several.
//     AI_ADDRCONFIG changes nothing, as natively, where glibc cannot read
//     the interfaces (no netlink socket) and so assumes both families.
//   - gethostbyname and gethostbyaddr: /etc/hosts, numeric IPv4 addresses
//     as themselves; h_errno HOST_NOT_FOUND otherwise.
//   - getnameinfo: /etc/hosts for the name, the number otherwise (or
//     EAI_NONAME under NI_NAMEREQD); a scope as its number.
//   - getservbyname, getservbyport and getprotobyname: /etc/services and
//     /etc/protocols, which the guest has not.
//   - socket: EAFNOSUPPORT for every family, as the native guest's seccomp
//     filter answers for the network's (WASI has no AF_UNIX either).
//
// The error strings are glibc's (gai_strerror, hstrerror). The parity
// corpus script std_netdb.py checks the answers against the native guest.
#include <sys/socket.h>

// wasi-libc's own numbers for the two families, before include/netdb.h
// gives the names Linux's.
enum { WASI_AF_INET = AF_INET, WASI_AF_INET6 = AF_INET6 };

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int h_errno;

// inet_pton and inet_ntop take Linux's family numbers, as every caller in
// the build now passes them (--wrap: wasi-libc's, musl's, take WASI's).
int __real_inet_pton(int, const char *restrict, void *restrict);
const char *__real_inet_ntop(int, const void *restrict, char *restrict, socklen_t);

static int wasi_family(int family) {
	return family == AF_INET ? WASI_AF_INET : family == AF_INET6 ? WASI_AF_INET6 : -1;
}

int __wrap_inet_pton(int family, const char *restrict s, void *restrict out) {
	return __real_inet_pton(wasi_family(family), s, out);
}

// An IPv6 address as glibc's inet_ntop writes it (RFC 5952's form, from
// BIND's): the first of the longest runs of two or more zero groups as
// "::", and an address whose first 96 bits are zero, or that is
// ::ffff:0:0/96, with its last 32 as a dotted quad (::1.2.3.4,
// ::ffff:1.2.3.4). musl wrote the later of two equal runs and the quad
// only after ::ffff.
static const char *ntop6(const uint8_t *a, char *out, socklen_t len) {
	unsigned w[8];
	for (int i = 0; i < 8; i++) {
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	}
	int best = -1, best_len = 0;
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && w[j] == 0) {
			j++;
		}
		if (j - i > best_len) {
			best = i, best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	if (best_len < 2) {
		best = -1;
	}
	char buf[sizeof "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"], *p = buf;
	for (int i = 0; i < 8; i++) {
		if (best >= 0 && i >= best && i < best + best_len) {
			if (i == best) {
				*p++ = ':';
			}
			continue;
		}
		if (i != 0) {
			*p++ = ':';
		}
		if (i == 6 && best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff))) {
			p += sprintf(p, "%u.%u.%u.%u", a[12], a[13], a[14], a[15]);
			break;
		}
		p += sprintf(p, "%x", w[i]);
	}
	if (best >= 0 && best + best_len == 8) {
		*p++ = ':';
	}
	*p = '\0';
	if ((size_t)(p - buf) >= len) {
		errno = ENOSPC;
		return NULL;
	}
	memcpy(out, buf, (size_t)(p - buf) + 1);
	return out;
}

const char *__wrap_inet_ntop(int family, const void *restrict in, char *restrict out, socklen_t len) {
	if (family == AF_INET6) {
		return ntop6(in, out, len);
	}
	return __real_inet_ntop(wasi_family(family), in, out, len);
}

// inet_ntoa, which wasi-libc leaves out (socket.inet_ntoa): glibc's, the
// dotted quad in a static buffer.
char *inet_ntoa(struct in_addr in) {
	static char buf[sizeof "255.255.255.255"];
	const unsigned char *b = (const unsigned char *)&in.s_addr;
	snprintf(buf, sizeof buf, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
	return buf;
}

int socket(int domain, int type, int protocol) {
	(void)domain, (void)type, (void)protocol;
	errno = EAFNOSUPPORT;
	return -1;
}

const char *hstrerror(int err) {
	switch (err) {
	case 0:
		return "Resolver Error 0 (no error)";
	case HOST_NOT_FOUND:
		return "Unknown host";
	case TRY_AGAIN:
		return "Host name lookup failure";
	case NO_RECOVERY:
		return "Unknown server error";
	case NO_DATA:
		return "No address associated with name";
	}
	return "Unknown resolver error";
}

const char *gai_strerror(int code) {
	switch (code) {
	case EAI_ADDRFAMILY:
		return "Address family for hostname not supported";
	case EAI_AGAIN:
		return "Temporary failure in name resolution";
	case EAI_BADFLAGS:
		return "Bad value for ai_flags";
	case EAI_FAIL:
		return "Non-recoverable failure in name resolution";
	case EAI_FAMILY:
		return "ai_family not supported";
	case EAI_MEMORY:
		return "Memory allocation failure";
	case EAI_NODATA:
		return "No address associated with hostname";
	case EAI_NONAME:
		return "Name or service not known";
	case EAI_SERVICE:
		return "Servname not supported for ai_socktype";
	case EAI_SOCKTYPE:
		return "ai_socktype not supported";
	case EAI_SYSTEM:
		return "System error";
	case EAI_OVERFLOW:
		return "Argument buffer overflow";
	}
	return "Unknown error";
}

// inet_aton's forms (a, a.b, a.b.c, a.b.c.d; each part decimal, octal or
// hex) up to stop, nothing between them and it: glibc's __inet_aton_exact
// when stop is the string's end.
static int inet_aton_upto(const char *s, const char *stop, uint8_t out[4]) {
	static const unsigned long long limit[4] = {0xffffffffULL, 0xffffffULL, 0xffffULL, 0xffULL};
	uint8_t parts[4];
	int n = 0;
	for (;;) {
		if (!isdigit((unsigned char)*s)) {
			return 0;
		}
		char *end;
		errno = 0;
		unsigned long long v = strtoull(s, &end, 0);
		if (errno == ERANGE) {
			return 0;
		}
		s = end; // strtoull reads no whitespace past a digit: never past stop
		if (s == stop || *s != '.') {
			if (s != stop || v > limit[n]) {
				return 0;
			}
			uint32_t word = (uint32_t)v;
			for (int i = 0; i < n; i++) {
				word |= (uint32_t)parts[i] << (24 - 8 * i);
			}
			out[0] = word >> 24, out[1] = word >> 16, out[2] = word >> 8, out[3] = word;
			return 1;
		}
		if (n == 3 || v > 0xff) {
			return 0;
		}
		parts[n++] = (uint8_t)v;
		s++;
	}
}

static int inet_aton_exact(const char *s, uint8_t out[4]) {
	return inet_aton_upto(s, s + strlen(s), out);
}

// inet_aton as glibc's (socket.inet_aton): its forms, then the end of the
// string or whitespace and anything after it, so that a line read from a
// file ("10.0.0.1\n", "10.0.0.1 # gateway") is its address. musl's took
// nothing after the address, and a number past 32 bits cut to 32.
int __wrap_inet_aton(const char *s, struct in_addr *out) {
	const char *stop = s;
	while (*stop != '\0' && !isspace((unsigned char)*stop)) {
		stop++;
	}
	uint8_t addr[4];
	if (!inet_aton_upto(s, stop, addr)) {
		return 0;
	}
	if (out != NULL) {
		memcpy(&out->s_addr, addr, 4);
	}
	return 1;
}

// --- the files: /etc/hosts, /etc/services, /etc/protocols ------------------

// fields splits line (comments cut) into at most max whitespace-separated
// fields, in place; it returns how many.
static int fields(char *line, char **out, int max) {
	char *hash = strchr(line, '#');
	if (hash) {
		*hash = '\0';
	}
	int n = 0;
	for (char *p = line; *p && n < max;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			p++;
		}
		if (!*p) {
			break;
		}
		out[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
			p++;
		}
		if (*p) {
			*p++ = '\0';
		}
	}
	return n;
}

#define MAX_FIELDS 36 // the name and 35 aliases, as many as a line needs

// One line of a file, kept for the caller until the next lookup (glibc's
// non-reentrant functions keep theirs the same way).
static struct {
	char *line;
	size_t cap;
	char *field[MAX_FIELDS + 1];
	int n;
} entry;

// next_entry reads f's next line with at least min fields into entry.
static int next_entry(FILE *f, int min) {
	while (getline(&entry.line, &entry.cap, f) >= 0) {
		entry.n = fields(entry.line, entry.field, MAX_FIELDS);
		if (entry.n >= min) {
			entry.field[entry.n] = NULL;
			return 1;
		}
	}
	return 0;
}

// A line of /etc/hosts: the address, the canonical name, its aliases.
struct host {
	int family; // AF_INET or AF_INET6
	uint8_t addr[16];
	char *name;
	char **aliases;
};

static int host_address(const char *s, struct host *h) {
	if (inet_pton(AF_INET6, s, h->addr) > 0) {
		h->family = AF_INET6;
		return 1;
	}
	if (inet_aton_exact(s, h->addr)) {
		h->family = AF_INET;
		return 1;
	}
	return 0;
}

// named reports whether first or one of aliases (NULL-terminated) is
// name: host names match whatever their case (fold), as glibc's files
// compare them; service and protocol names exactly.
static int named(const char *first, char **aliases, const char *name, int fold) {
	int (*cmp)(const char *, const char *) = fold ? strcasecmp : strcmp;
	if (cmp(first, name) == 0) {
		return 1;
	}
	for (char **a = aliases; *a; a++) {
		if (cmp(*a, name) == 0) {
			return 1;
		}
	}
	return 0;
}

// find_host looks /etc/hosts up: the first line of family (AF_UNSPEC:
// either) that names name, or, name NULL, whose address is addr.
static int find_host(const char *name, const uint8_t *addr, int family, struct host *h) {
	FILE *f = fopen("/etc/hosts", "re");
	if (!f) {
		return 0;
	}
	int found = 0;
	while (!found && next_entry(f, 2)) {
		if (!host_address(entry.field[0], h) || (family != AF_UNSPEC && h->family != family)) {
			continue;
		}
		h->name = entry.field[1];
		h->aliases = &entry.field[2];
		if (name) {
			found = named(h->name, h->aliases, name, 1);
		} else {
			found = memcmp(h->addr, addr, family == AF_INET ? 4 : 16) == 0;
		}
	}
	fclose(f);
	return found;
}

static struct servent serv;

static struct servent *find_service(const char *name, int port, const char *proto) {
	FILE *f = fopen("/etc/services", "re");
	if (!f) {
		return NULL;
	}
	struct servent *found = NULL;
	while (!found && next_entry(f, 2)) {
		char *slash = strchr(entry.field[1], '/');
		if (!slash) {
			continue;
		}
		*slash = '\0';
		char *end;
		unsigned long p = strtoul(entry.field[1], &end, 10);
		if (*end || p > 0xffff || (proto && strcmp(slash + 1, proto) != 0)) {
			continue;
		}
		serv.s_name = entry.field[0];
		serv.s_port = htons((uint16_t)p);
		serv.s_proto = slash + 1;
		serv.s_aliases = &entry.field[2]; // the names after "port/proto"
		if (name ? named(serv.s_name, serv.s_aliases, name, 0) : serv.s_port == port) {
			found = &serv;
		}
	}
	fclose(f);
	return found;
}

struct servent *getservbyname(const char *name, const char *proto) {
	return find_service(name, 0, proto);
}

struct servent *getservbyport(int port, const char *proto) {
	return find_service(NULL, port, proto);
}

struct protoent *getprotobyname(const char *name) {
	static struct protoent proto;
	FILE *f = fopen("/etc/protocols", "re");
	if (!f) {
		return NULL;
	}
	struct protoent *found = NULL;
	while (!found && next_entry(f, 2)) {
		if (named(entry.field[0], &entry.field[2], name, 0)) {
			proto.p_name = entry.field[0];
			proto.p_proto = atoi(entry.field[1]);
			proto.p_aliases = &entry.field[2];
			found = &proto;
		}
	}
	fclose(f);
	return found;
}

// --- gethostbyname, gethostbyaddr ------------------------------------------

static struct {
	struct hostent ent;
	char name[1025];
	char *aliases[MAX_FIELDS + 1];
	uint8_t addr[16];
	char *addrs[2];
} hostent;

static struct hostent *make_hostent(const char *name, char **aliases, int family, const uint8_t *addr) {
	snprintf(hostent.name, sizeof hostent.name, "%s", name);
	int n = 0;
	for (; aliases && aliases[n] && n < MAX_FIELDS; n++) {
		hostent.aliases[n] = aliases[n];
	}
	hostent.aliases[n] = NULL;
	memcpy(hostent.addr, addr, family == AF_INET ? 4 : 16);
	hostent.addrs[0] = (char *)hostent.addr;
	hostent.addrs[1] = NULL;
	hostent.ent = (struct hostent){
		.h_name = hostent.name,
		.h_aliases = hostent.aliases,
		.h_addrtype = family,
		.h_length = family == AF_INET ? 4 : 16,
		.h_addr_list = hostent.addrs,
	};
	return &hostent.ent;
}

struct hostent *gethostbyname(const char *name) {
	uint8_t addr[4];
	if (inet_aton_exact(name, addr)) {
		return make_hostent(name, NULL, AF_INET, addr);
	}
	struct host h;
	if (find_host(name, NULL, AF_INET, &h)) {
		return make_hostent(h.name, h.aliases, AF_INET, h.addr);
	}
	h_errno = HOST_NOT_FOUND;
	return NULL;
}

struct hostent *gethostbyaddr(const void *addr, socklen_t len, int family) {
	struct host h;
	if (((family == AF_INET && len == 4) || (family == AF_INET6 && len == 16)) &&
	    find_host(NULL, addr, family, &h)) {
		return make_hostent(h.name, h.aliases, family, h.addr);
	}
	h_errno = HOST_NOT_FOUND;
	return NULL;
}

// --- getaddrinfo ------------------------------------------------------------

// glibc's table of socket types and protocols (gaih_inet_typeproto).
enum { PROTO_ANY = 1, NO_SERVICE = 2 };
static const struct typeproto {
	int socktype, protocol, flags, byDefault;
	const char *name;
} typeprotos[] = {
	{0, 0, 0, 0, ""},
	{SOCK_STREAM, IPPROTO_TCP, 0, 1, "tcp"},
	{SOCK_DGRAM, IPPROTO_UDP, 0, 1, "udp"},
	{6 /* SOCK_DCCP */, 33 /* IPPROTO_DCCP */, 0, 0, "dccp"},
	{SOCK_DGRAM, 136 /* IPPROTO_UDPLITE */, 0, 0, "udplite"},
	{SOCK_STREAM, 132 /* IPPROTO_SCTP */, 0, 0, "sctp"},
	{SOCK_SEQPACKET, 132 /* IPPROTO_SCTP */, 0, 0, "sctp"},
	{SOCK_RAW, 0, PROTO_ANY | NO_SERVICE, 1, "raw"},
	{0, 0, 0, 0, ""},
};

struct tuple {
	int socktype, protocol;
	uint16_t port; // network order
};

// The prefix of an IPv4 address mapped into IPv6 (::ffff:0:0/96).
static const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

struct address {
	int family;
	uint8_t addr[16];
	uint32_t scope;
};

// glibc's default precedence of a destination (RFC 3484, no gai.conf),
// IPv4 taken as v4-mapped.
static int precedence(const struct address *a) {
	static const uint8_t zeros[12] = {0};
	if (a->family == AF_INET || memcmp(a->addr, v4_mapped_prefix, 12) == 0) {
		return 10;
	}
	if (memcmp(a->addr, zeros, 12) == 0) {
		return a->addr[12] == 0 && a->addr[13] == 0 && a->addr[14] == 0 && a->addr[15] == 1 ? 50 : 20;
	}
	if (a->addr[0] == 0x20 && a->addr[1] == 0x02) {
		return 30;
	}
	return 40;
}

static void v4_mapped(struct address *a, const uint8_t v4[4]) {
	memcpy(a->addr, v4_mapped_prefix, 12);
	memcpy(a->addr + 12, v4, 4);
	a->family = AF_INET6;
}

// service_tuples fills out with the (socket type, protocol, port) the
// hints and service ask for, as glibc's gaih_inet does; it returns how
// many, or an EAI_ code.
static int service_tuples(const struct addrinfo *req, const char *service, int num, struct tuple out[8]) {
	const struct typeproto *tp = &typeprotos[0];
	if (req->ai_socktype || req->ai_protocol) {
		for (tp++; tp->name[0]; tp++) {
			if ((req->ai_socktype == 0 || req->ai_socktype == tp->socktype) &&
			    (req->ai_protocol == 0 || (tp->flags & PROTO_ANY) || req->ai_protocol == tp->protocol)) {
				break;
			}
		}
		if (!tp->name[0]) {
			return req->ai_socktype ? EAI_SOCKTYPE : EAI_SERVICE;
		}
	}
	int n = 0;
	uint16_t port = 0;
	if (service) {
		if (tp->flags & NO_SERVICE) {
			return EAI_SERVICE;
		}
		if (num < 0) {
			if (tp->name[0]) {
				struct servent *s = getservbyname(service, tp->name);
				if (!s) {
					return EAI_SERVICE;
				}
				out[0] = (struct tuple){tp->socktype, (tp->flags & PROTO_ANY) ? req->ai_protocol : tp->protocol,
				                        (uint16_t)s->s_port};
				return 1;
			}
			for (const struct typeproto *t = tp + 1; t->name[0]; t++) {
				if ((t->flags & NO_SERVICE) || (req->ai_socktype && req->ai_socktype != t->socktype) ||
				    (req->ai_protocol && !(t->flags & PROTO_ANY) && req->ai_protocol != t->protocol)) {
					continue;
				}
				struct servent *s = getservbyname(service, t->name);
				if (s) {
					out[n++] = (struct tuple){t->socktype, t->protocol, (uint16_t)s->s_port};
				}
			}
			return n ? n : EAI_SERVICE;
		}
		port = htons((uint16_t)num);
	}
	if (req->ai_socktype || req->ai_protocol) {
		out[n++] = (struct tuple){tp->socktype, (tp->flags & PROTO_ANY) ? req->ai_protocol : tp->protocol, port};
		return n;
	}
	for (tp++; tp->name[0]; tp++) {
		if (tp->byDefault) {
			out[n++] = (struct tuple){tp->socktype, tp->protocol, port};
		}
	}
	return n;
}

// numeric_scope parses an IPv6 scope as glibc does when no interface has
// the name (the native guest sees none): a decimal number.
static int numeric_scope(const char *s, uint32_t *scope) {
	if (!isdigit((unsigned char)*s)) {
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno || v > UINT32_MAX) {
		return 0;
	}
	*scope = (uint32_t)v;
	return 1;
}

// host_addresses resolves name into out (at most two addresses); it
// returns how many or an EAI_ code, and sets *canon for AI_CANONNAME.
static int host_addresses(const struct addrinfo *req, const char *name, struct address out[2], const char **canon) {
	int family = req->ai_family, flags = req->ai_flags;
	memset(out, 0, 2 * sizeof *out);
	if (!name) {
		if (family != AF_INET) {
			out[0].family = AF_INET6;
			if (!(flags & AI_PASSIVE)) {
				out[0].addr[15] = 1;
			}
		}
		if (family != AF_INET6) {
			struct address *a = &out[family == AF_INET ? 0 : 1];
			a->family = AF_INET;
			if (!(flags & AI_PASSIVE)) {
				a->addr[0] = 127, a->addr[3] = 1;
			}
		}
		return family == AF_UNSPEC ? 2 : 1;
	}
	uint8_t v4[4];
	if (inet_aton_exact(name, v4)) {
		if (family == AF_UNSPEC || family == AF_INET) {
			out[0].family = AF_INET;
			memcpy(out[0].addr, v4, 4);
		} else if (flags & AI_V4MAPPED) {
			v4_mapped(&out[0], v4);
		} else {
			return EAI_ADDRFAMILY;
		}
		*canon = name;
		return 1;
	}
	const char *pct = strchr(name, '%');
	char literal[INET6_ADDRSTRLEN + 1];
	size_t len = pct ? (size_t)(pct - name) : strlen(name);
	if (len < sizeof literal) {
		memcpy(literal, name, len);
		literal[len] = '\0';
		if (inet_pton(AF_INET6, literal, out[0].addr) > 0) {
			if (family == AF_UNSPEC || family == AF_INET6) {
				out[0].family = AF_INET6;
			} else if (memcmp(out[0].addr, v4_mapped_prefix, 12) == 0) {
				memmove(out[0].addr, out[0].addr + 12, 4);
				memset(out[0].addr + 4, 0, 12);
				out[0].family = AF_INET;
			} else {
				return EAI_ADDRFAMILY;
			}
			if (pct && !numeric_scope(pct + 1, &out[0].scope)) {
				return EAI_NONAME;
			}
			*canon = name;
			return 1;
		}
	}
	if (flags & AI_NUMERICHOST) {
		return EAI_NONAME;
	}
	// Each lookup reuses the line buffer: the canonical name is copied at once.
	static char canonical[NI_MAXHOST];
	struct host h;
	int n = 0;
	if (family != AF_INET6) {
		if (find_host(name, NULL, family, &h)) {
			out[n].family = h.family;
			memcpy(out[n++].addr, h.addr, 16);
			snprintf(canonical, sizeof canonical, "%s", h.name);
		}
	} else {
		if (find_host(name, NULL, AF_INET6, &h)) {
			out[n].family = AF_INET6;
			memcpy(out[n++].addr, h.addr, 16);
			snprintf(canonical, sizeof canonical, "%s", h.name);
		}
		if ((flags & AI_V4MAPPED) && (n == 0 || (flags & AI_ALL)) && find_host(name, NULL, AF_INET, &h)) {
			v4_mapped(&out[n++], h.addr);
			if (n == 1) {
				snprintf(canonical, sizeof canonical, "%s", h.name);
			}
		}
	}
	if (n == 0) {
		return EAI_NONAME;
	}
	*canon = canonical;
	return n;
}

void freeaddrinfo(struct addrinfo *ai) {
	while (ai) {
		struct addrinfo *next = ai->ai_next;
		free(ai->ai_canonname);
		free(ai);
		ai = next;
	}
}

int getaddrinfo(const char *restrict node, const char *restrict service, const struct addrinfo *restrict hints,
                struct addrinfo **restrict res) {
	static const struct addrinfo defaults = {.ai_flags = AI_V4MAPPED | AI_ADDRCONFIG};
	const int known = AI_PASSIVE | AI_CANONNAME | AI_NUMERICHOST | AI_V4MAPPED | AI_ALL | AI_ADDRCONFIG |
	                  0x40 | 0x80 | 0x100 | 0x200 /* glibc's IDN flags */ | AI_NUMERICSERV;
	if (node && strcmp(node, "*") == 0) {
		node = NULL;
	}
	if (service && strcmp(service, "*") == 0) {
		service = NULL;
	}
	if (!node && !service) {
		return EAI_NONAME;
	}
	if (!hints) {
		hints = &defaults;
	}
	if (hints->ai_flags & ~known) {
		return EAI_BADFLAGS;
	}
	if ((hints->ai_flags & AI_CANONNAME) && !node) {
		return EAI_BADFLAGS;
	}
	int num = 0;
	if (service && service[0]) {
		char *end;
		num = (int)strtoull(service, &end, 10);
		if (*end) {
			if (hints->ai_flags & AI_NUMERICSERV) {
				return EAI_NONAME;
			}
			num = -1;
		}
	} else {
		service = NULL;
	}
	if (hints->ai_family != AF_UNSPEC && hints->ai_family != AF_INET && hints->ai_family != AF_INET6) {
		return EAI_FAMILY;
	}
	struct tuple tuples[8];
	int ntuples = service_tuples(hints, service, num, tuples);
	if (ntuples < 0) {
		return ntuples;
	}
	struct address addrs[2];
	const char *canon = NULL;
	int naddrs = host_addresses(hints, node, addrs, &canon);
	if (naddrs < 0) {
		return naddrs;
	}
	if (naddrs == 2 && precedence(&addrs[1]) > precedence(&addrs[0])) {
		struct address t = addrs[0];
		addrs[0] = addrs[1], addrs[1] = t;
	}
	struct addrinfo *head = NULL, **tail = &head;
	for (int i = 0; i < naddrs; i++) {
		for (int j = 0; j < ntuples; j++) {
			struct addrinfo *ai = calloc(1, sizeof *ai + sizeof(struct sockaddr_in6));
			if (!ai) {
				freeaddrinfo(head);
				return EAI_MEMORY;
			}
			ai->ai_family = addrs[i].family;
			ai->ai_socktype = tuples[j].socktype;
			ai->ai_protocol = tuples[j].protocol;
			ai->ai_addr = (struct sockaddr *)(ai + 1);
			if (addrs[i].family == AF_INET) {
				struct sockaddr_in *sin = (struct sockaddr_in *)ai->ai_addr;
				sin->sin_family = AF_INET;
				sin->sin_port = tuples[j].port;
				memcpy(&sin->sin_addr, addrs[i].addr, 4);
				ai->ai_addrlen = sizeof *sin;
			} else {
				struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ai->ai_addr;
				sin6->sin6_family = AF_INET6;
				sin6->sin6_port = tuples[j].port;
				memcpy(&sin6->sin6_addr, addrs[i].addr, 16);
				sin6->sin6_scope_id = addrs[i].scope;
				ai->ai_addrlen = sizeof *sin6;
			}
			if (head == NULL && (hints->ai_flags & AI_CANONNAME) && canon) {
				ai->ai_canonname = strdup(canon);
				if (!ai->ai_canonname) {
					free(ai);
					return EAI_MEMORY;
				}
			}
			*tail = ai;
			tail = &ai->ai_next;
		}
	}
	*res = head;
	return 0;
}

// --- getnameinfo ------------------------------------------------------------

int getnameinfo(const struct sockaddr *restrict sa, socklen_t salen, char *restrict host, socklen_t hostlen,
                char *restrict serv, socklen_t servlen, int flags) {
	if (flags & ~(NI_NUMERICHOST | NI_NUMERICSERV | NI_NOFQDN | NI_NAMEREQD | NI_DGRAM | 32 /* NI_IDN */)) {
		return EAI_BADFLAGS;
	}
	if (sa == NULL || salen < sizeof(sa_family_t)) {
		return EAI_FAMILY;
	}
	const void *addr;
	uint16_t port;
	uint32_t scope = 0;
	int family = sa->sa_family;
	if (family == AF_INET && salen >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
		addr = &sin->sin_addr, port = sin->sin_port;
	} else if (family == AF_INET6 && salen >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
		addr = &sin6->sin6_addr, port = sin6->sin6_port, scope = sin6->sin6_scope_id;
	} else {
		return EAI_FAMILY;
	}
	if (host && hostlen > 0) {
		struct hostent *h = NULL;
		if (!(flags & NI_NUMERICHOST)) {
			h = gethostbyaddr(addr, family == AF_INET ? 4 : 16, family);
		}
		if (h) {
			if (strlen(h->h_name) >= hostlen) {
				return EAI_OVERFLOW;
			}
			strcpy(host, h->h_name);
		} else if (flags & NI_NAMEREQD) {
			return EAI_NONAME;
		} else {
			char buf[INET6_ADDRSTRLEN + 12];
			if (!inet_ntop(family, addr, buf, sizeof buf)) {
				return EAI_SYSTEM;
			}
			if (scope != 0) {
				snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%%%u", (unsigned)scope);
			}
			if (strlen(buf) >= hostlen) {
				return EAI_OVERFLOW;
			}
			strcpy(host, buf);
		}
	}
	if (serv && servlen > 0) {
		struct servent *s = NULL;
		if (!(flags & NI_NUMERICSERV)) {
			s = getservbyport(port, (flags & NI_DGRAM) ? "udp" : "tcp");
		}
		int n = s ? snprintf(serv, servlen, "%s", s->s_name) : snprintf(serv, servlen, "%d", ntohs(port));
		if (n < 0 || (socklen_t)n >= servlen) {
			return EAI_OVERFLOW;
		}
	}
	return 0;
}
