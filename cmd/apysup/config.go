package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/cmd/apysup/internal/earlyclient"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
)

// Sources of a selected value, in precedence order (SPEC.md section 10).
const (
	SourceFlag    = "flag"
	SourceEnv     = "env"
	SourceConfig  = "config"
	SourceDefault = "default"
)

// fileConfig is $XDG_CONFIG_HOME/apysup/config.json or /etc/apysup/config.json.
type fileConfig struct {
	Backend string `json:"backend,omitempty"`
	Timeout string `json:"timeout,omitempty"`
	Memory  string `json:"memory,omitempty"`
	Pids    string `json:"pids,omitempty"`
	CPUs    string `json:"cpus,omitempty"`
	Surface string `json:"surface,omitempty"`
	Approve string `json:"approve,omitempty"`
}

// configFlag names the config file: --config FILE > APYSUP_CONFIG > the search path.
var configFlag = &cli.StringFlag{Name: "config", Usage: "read settings from the config `FILE` (default: APYSUP_CONFIG, else the search path of config show)"}

// configPaths lists the config files in the order they are consulted, and
// where that list came from: --config alone when given, else
// APYSUP_CONFIG alone when set, else the user's, then the system's.
func configPaths(c *cli.Context) ([]string, string) {
	if c != nil && c.IsSet("config") {
		return []string{c.String("config")}, SourceFlag
	}
	if p := os.Getenv("APYSUP_CONFIG"); p != "" {
		return []string{p}, SourceEnv
	}
	return earlyclient.ConfigSearchPath(), SourceDefault
}

// loadConfig reads the first of paths that exists, strictly. A file named
// by --config or APYSUP_CONFIG must exist (required).
func loadConfig(paths []string, required bool) (fileConfig, string, error) {
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) && !required {
			continue
		}
		if err != nil {
			return fileConfig{}, p, err
		}
		var c fileConfig
		if err := canonjson.DecodeStrict(data, 64<<10, &c); err != nil {
			return fileConfig{}, p, fmt.Errorf("%s: %w", p, err)
		}
		return c, p, nil
	}
	return fileConfig{}, "", nil
}

// setting describes one selectable value.
type setting struct {
	name    string // also the flag name
	env     string
	fromCfg func(fileConfig) string
	def     string
	check   func(string) error
	// defaultFor, when set, computes the default from the command's
	// streams instead of def (the approval mode depends on a terminal).
	defaultFor func(c *cli.Context) string
}

var settings = []setting{
	{"backend", "APYSUP_BACKEND", func(c fileConfig) string { return c.Backend }, "native", checkBackend, nil},
	{"surface", "APYSUP_SURFACE", func(c fileConfig) string { return c.Surface }, "programmatic", nil, nil},
	{"timeout", "APYSUP_TIMEOUT", func(c fileConfig) string { return c.Timeout }, "30s", func(s string) error { _, err := parseDuration(s); return err }, nil},
	{"memory", "APYSUP_MEMORY", func(c fileConfig) string { return c.Memory }, "512MiB", func(s string) error { _, err := parseBytes(s); return err }, nil},
	{"pids", "APYSUP_PIDS", func(c fileConfig) string { return c.Pids }, "128", func(s string) error { _, err := parsePositive(s); return err }, nil},
	{"cpus", "APYSUP_CPUS", func(c fileConfig) string { return c.CPUs }, "1", func(s string) error { _, err := parseCPUs(s); return err }, nil},
	{"approve", "APYSUP_APPROVE", func(c fileConfig) string { return c.Approve }, "", func(s string) error { _, err := parseApproveMode(s); return err },
		func(c *cli.Context) string { return defaultApproveMode(c.App.Reader, c.App.ErrWriter).kind }},
}

func checkBackend(s string) error {
	if s != "native" && s != "wazero" {
		return fmt.Errorf("backend must be native or wazero, not %q", s)
	}
	return nil
}

// selection is every setting with its value and source.
type selection struct {
	values       map[string]string
	sources      map[string]string
	configFile   string   // the file read, or ""
	configSource string   // flag (--config), env (APYSUP_CONFIG) or default (the search path)
	searched     []string // the config files looked for, in order
}

// selected is one setting as a run reads it back.
func (s *selection) selected(name string) supervisor.Selected {
	return supervisor.Selected{Name: name, Value: s.values[name], Source: s.sources[name]}
}

// selectSettings applies flag > environment > config file > default.
func selectSettings(c *cli.Context) (*selection, error) {
	paths, pathsSource := configPaths(c)
	cfg, path, err := loadConfig(paths, pathsSource != SourceDefault)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("config: %v", err), ExitUsage)
	}
	sel := &selection{values: map[string]string{}, sources: map[string]string{}, configFile: path, configSource: pathsSource, searched: paths}
	for _, s := range settings {
		v, src := s.def, SourceDefault
		if s.defaultFor != nil && c != nil {
			v = s.defaultFor(c)
		}
		switch {
		case c != nil && c.IsSet(s.name):
			v, src = c.String(s.name), SourceFlag
		case os.Getenv(s.env) != "":
			v, src = os.Getenv(s.env), SourceEnv
		case s.fromCfg(cfg) != "":
			v, src = s.fromCfg(cfg), SourceConfig
		}
		if s.check != nil {
			if err := s.check(v); err != nil {
				return nil, cli.Exit(fmt.Sprintf("%s (from %s): %v", s.name, src, err), 2)
			}
		}
		sel.values[s.name], sel.sources[s.name] = v, src
	}
	return sel, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("want a duration in (0, 24h] like 30s, got %q", s)
	}
	return d, nil
}

// parseBytes accepts 1048576, 512KiB, 256MiB, 4GiB (also KB/MB/GB as powers of 10).
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("want a size like 256MiB, got %q", s)
	}
	return n * mult, nil
}

// parseCPUs accepts a CPU quota in cores: 0.5, 1, 2.
func parseCPUs(s string) (float64, error) {
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || !(n >= 0.01 && n <= 1024) {
		return 0, fmt.Errorf("want a number of cores in [0.01, 1024] like 0.5 or 2, got %q", s)
	}
	return n, nil
}

func parsePositive(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > 1<<22 {
		return 0, fmt.Errorf("want a positive integer, got %q", s)
	}
	return n, nil
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "show the selected backend and limits and where each came from",
		Subcommands: []*cli.Command{{
			Name:  "show",
			Usage: "print every setting with its value and source (flag > env > config > default)",
			Description: "Environment: APYSUP_BACKEND, APYSUP_SURFACE, APYSUP_TIMEOUT, APYSUP_MEMORY, APYSUP_PIDS, APYSUP_CPUS,\n" +
				"APYSUP_APPROVE. Config file: --config FILE, else APYSUP_CONFIG when set (either must exist), else the first of\n" +
				"$XDG_CONFIG_HOME/apysup/config.json and /etc/apysup/config.json that exists, e.g.\n" +
				`{"backend": "native", "timeout": "30s", "memory": "512MiB", "pids": "128", "cpus": "1", "surface": "programmatic", "approve": "deny"}` + "\n" +
				"The approval mode's default is prompt when stdin and stderr are both terminals, deny otherwise.",
			Flags: []cli.Flag{configFlag, &cli.BoolFlag{Name: "json", Usage: "print JSON"}},
			Action: func(c *cli.Context) error {
				sel, err := selectSettings(c)
				if err != nil {
					return err
				}
				type row struct {
					Name   string `json:"name"`
					Value  string `json:"value"`
					Source string `json:"source"`
				}
				var rows []row
				for _, s := range settings {
					rows = append(rows, row{s.name, sel.values[s.name], sel.sources[s.name]})
				}
				if c.Bool("json") {
					return printJSON(c, "apysup.config.v1", map[string]any{"config_file": sel.configFile, "config_file_source": sel.configSource,
						"searched": sel.searched, "settings": rows})
				}
				for _, r := range rows {
					fmt.Fprintf(c.App.Writer, "%-8s %-14s (%s)\n", r.Name, r.Value, r.Source)
				}
				file := sel.configFile
				if file == "" {
					file = "none found"
				}
				fmt.Fprintf(c.App.Writer, "config file: %s (%s); searched: %s\n", file, sel.configSource, strings.Join(sel.searched, ", "))
				return nil
			},
		}},
	}
}
