package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"time"
)

// startWait is how long a quitad process may take to answer /healthz.
const startWait = 60 * time.Second

var errExitedEarly = errors.New("exited before it answered")

// startQuitad runs `bin serve` with env on a free loopback port and waits
// up to wait for its /healthz to answer.
func startQuitad(bin string, env []string, client *http.Client, wait time.Duration) (*quitadProc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(env, "QUITA_ADDR="+addr)
	stderr := &tailBuffer{max: 2048}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p := &quitadProc{base: "http://" + addr + "/v1", cmd: cmd, exited: exited}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("quitad on %s %w (%v): %s", addr, errExitedEarly, err, stderr)
		default:
		}
		if r, err := client.Get("http://" + addr + "/healthz"); err == nil {
			r.Body.Close()
			return p, nil
		}
	}
	p.stop()
	return nil, fmt.Errorf("quitad on %s did not answer within %s: %s", addr, wait, stderr)
}

// stop kills the process and waits for it to end.
func (p *quitadProc) stop() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}
