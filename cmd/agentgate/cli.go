package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/agentgate/agentgate/pkg/app"
	"github.com/agentgate/agentgate/pkg/logging"
	"github.com/agentgate/agentgate/pkg/store"
	"github.com/agentgate/agentgate/pkg/store/embedded"
)

// command is agentgate or one of its commands and subcommands. The tree is
// data so that every command answers -h the same way, and the top-level
// usage lists every command from the synopses their own usages show.
type command struct {
	name     string   // the words after "agentgate": "keys create"
	synopsis string   // what follows the name: "--owner NAME [flags] ID"
	about    string   // what the command does, one line
	more     string   // printed after the flags, if set
	args     []string // positional arguments, by name; their count is checked
	required []string // flags that must not be empty
	// flags defines the command's own flags, beside the store flags every
	// command takes.
	flags func(*pflag.FlagSet)
	// storeless commands use no store, and take no store flags.
	storeless bool
	// busy says what to do instead when the embedded store's file is held
	// by another process, which is `agentgate serve` more often than not.
	busy string
	run  func(context.Context, *invocation) error // leaves only
	subs []*command                               // groups only
}

// invocation is one run of a command: its command line, its configuration
// once parsed, and where it writes.
type invocation struct {
	cmd            *command
	args           []string
	getenv         func(string) string
	stdout, stderr io.Writer

	// Set by setup, for run.
	cfg  app.Config
	fs   *pflag.FlagSet
	rest []string // the positional arguments
}

// flag is the value of the command's string flag name.
func (inv *invocation) flag(name string) string {
	v, _ := inv.fs.GetString(name)
	return v
}

// errHelp ends a command that printed its usage because it was asked to:
// the exit status is 0.
var errHelp = errors.New("help shown")

// usageError is a command line agentgate cannot run: the exit status is 2,
// with the command's usage on stderr.
type usageError struct {
	cmd *command
	msg string
}

func (e *usageError) Error() string { return e.cmd.path() + ": " + e.msg }

// path is how the command is typed: "agentgate keys create".
func (c *command) path() string { return strings.TrimSpace("agentgate " + c.name) }

// exitCode reports err on stderr and returns the exit status: 0 for
// success or help, 2 for a command line that cannot run (with the usage),
// 1 for a command that ran and failed.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil || errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%v\n\n", ue)
		io.WriteString(stderr, ue.cmd.usage())
		return 2
	}
	fmt.Fprintln(stderr, "agentgate:", err)
	return 1
}

func (c *command) fail(format string, args ...any) error {
	return &usageError{cmd: c, msg: fmt.Sprintf(format, args...)}
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "help" }

// dispatch runs the subcommand args name, or answers -h, `help` and
// `help SUBCOMMAND` with a usage on stdout.
func (c *command) dispatch(ctx context.Context, inv *invocation) error {
	args := inv.args
	if len(args) == 0 {
		return c.fail("missing command")
	}
	if isHelp(args[0]) {
		if len(args) == 1 {
			io.WriteString(inv.stdout, c.usage())
			return errHelp
		}
		// `agentgate help keys create`: the usage of what follows.
		args = slices.Concat(args[1:], []string{"--help"})
	}
	for _, sub := range c.subs {
		if sub.name == c.join(args[0]) {
			next := *inv
			next.cmd, next.args = sub, args[1:]
			if sub.subs != nil {
				return sub.dispatch(ctx, &next)
			}
			if err := next.setup(); err != nil {
				return err
			}
			return sub.run(ctx, &next)
		}
	}
	if strings.HasPrefix(args[0], "-") {
		return c.fail("unknown flag %s (flags go after the command)", args[0])
	}
	return c.fail("unknown command %q", args[0])
}

// join is the full name of c's subcommand called word.
func (c *command) join(word string) string {
	if c.name == "" {
		return word
	}
	return c.name + " " + word
}

// usage is the command's help: what it does and its synopsis, and for a
// group every command under it.
func (c *command) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s - %s\n\n", c.path(), c.about)
	if c.subs == nil {
		// Defaults as an empty environment leaves them: the usage must not
		// depend on who reads it.
		fs, _, _ := c.flagSet(func(string) string { return "" })
		fmt.Fprintf(&b, "Usage: %s %s\n\nFlags:\n%s", c.path(), c.synopsis, fs.FlagUsages())
	} else {
		b.WriteString("Usage:\n")
		c.listLeaves(&b)
		fmt.Fprintf(&b, "\nRun '%s <command> -h' for a command's flags.\n", c.path())
	}
	if c.more != "" {
		fmt.Fprintf(&b, "\n%s\n", c.more)
	}
	return b.String()
}

// listLeaves writes the synopsis of every command under c, and what it does.
func (c *command) listLeaves(b *strings.Builder) {
	for _, s := range c.subs {
		if s.subs != nil {
			s.listLeaves(b)
			continue
		}
		fmt.Fprintf(b, "  %s %s\n      %s\n", s.path(), s.synopsis, s.about)
	}
}

// flagSet builds the flags of a leaf command, the store flags over the
// configuration read from the environment, and returns the configuration
// they set and any error reading it.
func (c *command) flagSet(getenv func(string) string) (*pflag.FlagSet, *app.Config, error) {
	cfg, err := app.ConfigFromEnv(getenv)
	fs := pflag.NewFlagSet("agentgate "+c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // the caller prints the usage, on stdout or stderr
	// Flags may follow positional arguments (`keys revoke ID --owner x`);
	// "--" ends the flags.
	fs.SetInterspersed(true)
	fs.SortFlags = false // the command's own flags first
	if c.flags != nil {
		c.flags(fs)
	}
	if !c.storeless {
		storeFlags(fs, &cfg)
	}
	fs.BoolP("help", "h", false, "show this help")
	return fs, &cfg, err
}

// setup parses a leaf command's flags and positional arguments and reads
// its configuration. -h prints the usage on stdout and returns errHelp; a
// command line that does not parse is a usageError. A configuration error
// comes after -h, so that help works whatever the environment says.
func (inv *invocation) setup() error {
	c := inv.cmd
	fs, cfg, cfgErr := c.flagSet(inv.getenv)
	if err := fs.Parse(inv.args); err != nil {
		return c.fail("%v", err)
	}
	if help, _ := fs.GetBool("help"); help {
		io.WriteString(inv.stdout, c.usage())
		return errHelp
	}
	if cfgErr != nil {
		return cfgErr
	}
	for _, name := range c.required {
		if v, _ := fs.GetString(name); v == "" {
			return c.fail("--%s is required", name)
		}
	}
	switch {
	case fs.NArg() == len(c.args):
	case len(c.args) == 0:
		return c.fail("takes no arguments, got %q", fs.Args())
	default:
		return c.fail("want %s, got %q", strings.Join(c.args, " "), fs.Args())
	}
	if cfg.DynamoEndpoint != "" && cfg.TableName == "" {
		cfg.TableName = app.DefaultTable
	}
	// A local store or a local DynamoDB endpoint is a local run, whose
	// agents (the sample agent first) live on loopback. A deployed table
	// keeps the deployed default unless the environment says otherwise.
	if inv.getenv("AGENT_NETWORK") == "" && (!cfg.UsesDynamoDB() || cfg.DynamoEndpoint != "") {
		cfg.AgentNetwork, _ = app.AgentNetwork("local")
	}
	slog.SetDefault(logging.New(inv.stderr, cfg.LogLevel))
	inv.cfg, inv.fs, inv.rest = *cfg, fs, fs.Args()
	return nil
}

// storeFlags adds the flags that choose the store to fs, over cfg's values
// from the environment.
func storeFlags(fs *pflag.FlagSet, cfg *app.Config) {
	fs.StringVar(&cfg.DataPath, "data", cfg.DataPath, "embedded store file (AGENTGATE_DATA); used unless a DynamoDB table or endpoint is given")
	fs.StringVar(&cfg.DynamoEndpoint, "dynamodb-endpoint", cfg.DynamoEndpoint, "DynamoDB endpoint, e.g. a local dynalite (AWS_ENDPOINT_URL_DYNAMODB)")
	fs.StringVar(&cfg.TableName, "table", cfg.TableName, "DynamoDB table (TABLE_NAME); defaults to \""+app.DefaultTable+"\" with --dynamodb-endpoint")
}

// withStore runs fn on the store the command's flags select, and closes it.
func (inv *invocation) withStore(ctx context.Context, fn func(store.Store) error) error {
	st, err := app.OpenStore(ctx, inv.cfg)
	if err != nil {
		return inv.storeError(err)
	}
	defer st.Close()
	return fn(st)
}

// storeError adds to a failure to open the store what to do about it. The
// embedded store's file takes one process at a time: while `agentgate
// serve` holds it, the other commands cannot open it, and the user needs
// to know what to do instead.
func (inv *invocation) storeError(err error) error {
	if errors.Is(err, embedded.ErrInUse) {
		return fmt.Errorf("%s: %w.\nIf `agentgate serve` is running on it: %s", inv.cmd.name, err, inv.cmd.busy)
	}
	return err
}
