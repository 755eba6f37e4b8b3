package containerinit

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

func TestIsContainerInit(t *testing.T) {
	socks, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(socks[0])
	defer syscall.Close(socks[1])
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	sock, sync, pipe := strconv.Itoa(socks[0]), strconv.Itoa(socks[1]), strconv.Itoa(int(pr.Fd()))
	genuine := map[string]string{"_LIBCONTAINER_INITTYPE": "standard", "_LIBCONTAINER_INITPIPE": sock,
		"_LIBCONTAINER_SYNCPIPE": sync, "_LIBCONTAINER_LOGPIPE": pipe}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range genuine {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"started by libcontainer", []string{"prog", "init"}, genuine, true},
		{"setns init", []string{"prog", "init"}, with("_LIBCONTAINER_INITTYPE", "setns"), true},
		{"argument init alone", []string{"prog", "init"}, nil, false},
		{"more arguments", []string{"prog", "init", "x"}, genuine, false},
		{"another argument", []string{"prog", "run"}, genuine, false},
		{"unknown init type", []string{"prog", "init"}, with("_LIBCONTAINER_INITTYPE", "other"), false},
		{"no sync pipe", []string{"prog", "init"}, with("_LIBCONTAINER_SYNCPIPE", ""), false},
		{"sync pipe not a number", []string{"prog", "init"}, with("_LIBCONTAINER_SYNCPIPE", "x"), false},
		{"sync pipe is stdin", []string{"prog", "init"}, with("_LIBCONTAINER_SYNCPIPE", "0"), false},
		{"sync pipe closed", []string{"prog", "init"}, with("_LIBCONTAINER_SYNCPIPE", "1000000"), false},
		{"init pipe not a socket", []string{"prog", "init"}, with("_LIBCONTAINER_INITPIPE", pipe), false},
		{"log pipe not a pipe", []string{"prog", "init"}, with("_LIBCONTAINER_LOGPIPE", sock), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := os.Args
			defer func() { os.Args = saved }()
			os.Args = tc.args
			for _, k := range []string{"_LIBCONTAINER_INITTYPE", "_LIBCONTAINER_INITPIPE", "_LIBCONTAINER_SYNCPIPE", "_LIBCONTAINER_LOGPIPE"} {
				t.Setenv(k, tc.env[k])
			}
			if got := IsContainerInit(); got != tc.want {
				t.Errorf("IsContainerInit() = %v, want %v", got, tc.want)
			}
		})
	}
}
