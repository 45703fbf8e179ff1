// Package proc holds the child-process plumbing shared by the harness
// packages: bounded output capture, process-group lifecycle and port picking.
package proc

import (
	"strings"
	"sync"
)

// DefaultTailSize bounds captured output: enough to diagnose a failed start,
// small enough that a chatty child in a long test run cannot grow memory.
const DefaultTailSize = 64 << 10

// TailBuffer is an io.Writer that keeps only the last Max bytes written.
// It is safe for concurrent use because a child's stdout and stderr are
// copied into it by separate goroutines.
type TailBuffer struct {
	mu        sync.Mutex
	max       int
	buf       []byte
	truncated bool
}

// NewTailBuffer returns a buffer keeping the last max bytes (DefaultTailSize
// when max <= 0).
func NewTailBuffer(max int) *TailBuffer {
	if max <= 0 {
		max = DefaultTailSize
	}
	return &TailBuffer{max: max}
}

// Write never fails, so a slow reader of logs can never block the child.
func (b *TailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) > b.max { // keep the buffer at most max, even for one huge write
		b.truncated, p = true, p[len(p)-b.max:]
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.truncated = true
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return n, nil
}

// String returns everything retained, prefixed by a marker when older
// output was discarded so readers do not mistake a tail for the whole log.
func (b *TailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.truncated {
		return "[... earlier output truncated ...]\n" + string(b.buf)
	}
	return string(b.buf)
}

// Tail returns at most the last n bytes, trimmed to start at a line
// boundary when possible; it is meant for embedding in error messages.
func (b *TailBuffer) Tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf
	if len(s) > n {
		s = s[len(s)-n:]
		if i := strings.IndexByte(string(s), '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return strings.TrimRight(string(s), "\n")
}
