// The guest's pid 1: see GuestInitArgv in guestinit_linux.go.
//
// A constructor, so that it runs before the Go runtime starts: the binary
// re-executed as pid 1 of a sandbox does nothing of Go's (no runtime, no
// package init), only what an init must: start the command as its child,
// forward signals to it, reap every orphan, and end with the command's
// status. A command killed by a signal is written into the outcome file
// (pid 1 itself cannot die of a signal sent from inside its namespace, and
// its exit status 128+N could be the command's own exit(128+N)).

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define APYSUP_GUEST_INIT "--apysup-guest-init"

// Signals the init forwards to the command (the Python runner forwarded
// the same when it was pid 1). SIGKILL and SIGSTOP cannot be caught; the
// host ends a run by killing pid 1, which ends every process of the
// namespace.
static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGCONT, SIGWINCH};

static void guest_init_fail(const char *what, int err)
{
	dprintf(2, "apysup guest init: %s: %s\n", what, strerror(err));
	_exit(2);
}

// Every descriptor is the command's: the standard ones and the job and
// ready pipes. Once the command runs the init keeps none open (it writes
// nothing there), so that the host sees their ends close with the command:
// when the runner reports its end, its output's pipes end as soon as it
// closed them, whether or not pid 1 has died yet.
static void close_all(void)
{
	if (syscall(SYS_close_range, 0U, ~0U, 0U) == 0)
		return;
	struct rlimit rl;
	int n = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1 << 20)
		n = (int)rl.rlim_cur;
	for (int fd = 0; fd < n; fd++)
		close(fd);
}

// The outcome of a command that died of signal sig, written as the runner
// writes its own (a temporary file renamed over it). Best effort: the host
// reports the run without it when it cannot be written.
static void write_signalled(const char *outcome, int sig)
{
	char tmp[4096], text[128];
	int n = snprintf(tmp, sizeof tmp, "%s.tmp-%d", outcome, (int)getpid());
	if (n < 0 || n >= (int)sizeof tmp)
		return;
	n = snprintf(text, sizeof text, "{\"exit_code\":%d,\"result_set\":false,\"signal\":%d}", 128 + sig, sig);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		return;
	ssize_t w = write(fd, text, (size_t)n);
	close(fd);
	if (w == n)
		rename(tmp, outcome);
}

// The command's pid in its namespace: always this one, so that a script
// that prints or logs its pid (os.getpid(), logging's %(process)d) prints
// the same at every run and on both backends (the WASI build answers the
// same, python/wasi/_apysup_host.c). Before this init, libcontainer's init
// ran as pid 1 and its Go runtime's threads took the pids after it: four
// or five on a 2-CPU machine, more under load, so the command's pid varied
// (6, at times 7). Pids are handed out in order, so the init takes the
// ones below this in children that exit at once (vfork: nothing copied),
// and forks the command last. In a namespace whose last pid is already
// past it (a runtime with many more threads) the command gets a later pid.
#define COMMAND_PID 10

static void advance_pids_to_command(void)
{
	for (;;) {
		pid_t p = vfork();
		if (p == 0)
			_exit(0);
		if (p < 0)
			return;
		waitpid(p, NULL, 0);
		if (p >= COMMAND_PID - 1)
			return;
	}
}

__attribute__((constructor)) static void apysup_guest_init(int argc, char **argv, char **envp)
{
	if (argc < 2 || argv == NULL || strcmp(argv[1], APYSUP_GUEST_INIT) != 0)
		return; // any other start of the binary: Go starts as usual
	if (argc < 5 || argv[2][0] != '/' || strcmp(argv[3], "--") != 0 || argv[4][0] != '/')
		guest_init_fail("usage: " APYSUP_GUEST_INIT " OUTCOME -- COMMAND [ARGS...]", EINVAL);
	if (getpid() != 1)
		guest_init_fail("not pid 1 of a pid namespace", EPERM);
	const char *outcome = argv[2];

	// Every signal stays pending until sigwaitinfo takes it: no handler
	// runs, none is lost between the fork and the loop, and none is dropped
	// as pid 1's default disposition would drop it.
	// An ignored SIGCHLD (inherited across exec) would have the kernel reap
	// the children itself, statuses and all.
	signal(SIGCHLD, SIG_DFL);
	sigset_t all, old, wanted;
	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &old) != 0)
		guest_init_fail("sigprocmask", errno);
	advance_pids_to_command();
	pid_t child = fork();
	if (child < 0)
		guest_init_fail("fork", errno);
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		execve(argv[4], argv + 4, envp);
		dprintf(2, "apysup guest init: exec %s: %s\n", argv[4], strerror(errno));
		_exit(127);
	}
	close_all();

	sigemptyset(&wanted);
	sigaddset(&wanted, SIGCHLD);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&wanted, forwarded[i]);
	int status = 0, reaped = 0, gone = 0;
	while (!reaped && !gone) {
		int sig = sigwaitinfo(&wanted, NULL);
		if (sig < 0)
			continue; // EINTR (a stop and continue); nothing else can fail here
		if (sig != SIGCHLD) {
			kill(child, sig); // not reaped yet: the pid is still the child's
			continue;
		}
		// One SIGCHLD may stand for several children: reap all that ended.
		for (;;) {
			int ws;
			pid_t pid = waitpid(-1, &ws, WNOHANG);
			if (pid < 0 && errno == ECHILD)
				gone = 1; // no child left, and none was the command: never expected
			if (pid <= 0)
				break;
			if (pid == child)
				status = ws, reaped = 1;
		}
	}
	if (!reaped)
		_exit(1);
	if (WIFSIGNALED(status)) {
		write_signalled(outcome, WTERMSIG(status));
		_exit(128 + WTERMSIG(status));
	}
	_exit(WEXITSTATUS(status));
}
