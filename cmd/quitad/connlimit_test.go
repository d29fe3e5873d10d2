package main

import (
	"bufio"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// serve holds at most QUITA_MAX_CONNECTIONS connections open: with two
// held by idle clients a third is not served until one of them closes.
func TestServeBoundsOpenConnections(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"QUITA_DATABASE_URL": "sqlite:" + filepath.Join(dir, "q.db"), "QUITA_SEED_DEMO": "false",
		"QUITA_MAX_CONNECTIONS": "2"}
	s := startServe(t, nil, func(k string) string { return env[k] })
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	time.Sleep(100 * time.Millisecond)    // both accepted
	third, err := net.Dial("tcp", s.addr) // the kernel's backlog takes it
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	if _, err := third.Write([]byte("GET /healthz HTTP/1.1\r\nHost: q\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	answered := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(third), nil)
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case st := <-answered:
		t.Fatalf("a third connection was served (%d) while two were held", st)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].Close()
	select {
	case st := <-answered:
		if st != http.StatusOK {
			t.Errorf("the third connection answered %d once one closed", st)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the third connection was never served")
	}
}
