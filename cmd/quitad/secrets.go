package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// stdinReader is where --*-stdin flags read from (a test swaps it).
var stdinReader io.Reader = os.Stdin

// maxSecretLen bounds a secret read from stdin.
const maxSecretLen = 4096

// secretInput resolves a secret of an admin subcommand. A command-line
// flag is visible to every user of the machine (ps, /proc/<pid>/cmdline,
// shell history), so the environment variable or stdin is the way to pass
// it; the flag still works for scripts that use it, with a warning.
// Precedence: stdin (when asked), then the flag, then the environment.
func secretInput(flagName, flagVal, env string, fromStdin bool, getenv func(string) string, stderr io.Writer) (string, error) {
	if fromStdin {
		if flagVal != "" {
			return "", fmt.Errorf("give --%s or --%s-stdin, not both", flagName, flagName)
		}
		return readSecretLine(stdinReader, flagName)
	}
	if flagVal != "" {
		fmt.Fprintf(stderr, "quitad: warning: --%s is visible to other users in ps and shell history; use %s or --%s-stdin\n",
			flagName, env, flagName)
		return flagVal, nil
	}
	return getenv(env), nil
}

// readSecretLine reads the first line of r (without its line ending).
func readSecretLine(r io.Reader, name string) (string, error) {
	line, err := bufio.NewReaderSize(io.LimitReader(r, maxSecretLen+2), maxSecretLen+2).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read %s from stdin: %w", name, err)
	}
	line = strings.TrimRight(line, "\r\n")
	if len(line) > maxSecretLen {
		return "", fmt.Errorf("%s on stdin is longer than %d bytes", name, maxSecretLen)
	}
	if line == "" {
		return "", fmt.Errorf("%s on stdin is empty", name)
	}
	return line, nil
}
