package testkit

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a server's goroutines may write while the
// test reads it: the sink of a server's logs or a command's output.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
