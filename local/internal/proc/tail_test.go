package proc

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

func TestTailBufferKeepsLastBytes(t *testing.T) {
	b := NewTailBuffer(10)
	for _, s := range []string{"abc", "defgh", "ijklmn"} {
		if _, err := b.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	got := b.String()
	if !strings.HasSuffix(got, "efghijklmn") || !strings.Contains(got, "truncated") {
		t.Fatalf("String() = %q, want truncation marker and last 10 bytes", got)
	}
	if _, err := b.Write([]byte("0123456789ABCDEF")); err != nil {
		t.Fatal(err)
	}
	if got := b.Tail(100); got != "6789ABCDEF" {
		t.Fatalf("Tail after oversized write = %q", got)
	}
}

func TestTailBufferTailStartsAtLine(t *testing.T) {
	b := NewTailBuffer(0)
	_, _ = b.Write([]byte("first line\nsecond line\nthird\n"))
	if got := b.Tail(14); got != "third" {
		t.Fatalf("Tail(14) = %q, want %q", got, "third")
	}
	if got := b.String(); strings.Contains(got, "truncated") {
		t.Fatalf("unexpected truncation marker in %q", got)
	}
}

func TestTailBufferConcurrentWrites(t *testing.T) {
	b := NewTailBuffer(1024)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				_, _ = b.Write([]byte("0123456789"))
			}
		}()
	}
	wg.Wait()
	if got := len(b.Tail(1 << 20)); got != 1024 {
		t.Fatalf("retained %d bytes, want 1024", got)
	}
}

// One write far over the limit keeps only its tail, and the buffer never
// holds more than the limit (a function printing megabytes at once).
func TestTailBufferOneHugeWrite(t *testing.T) {
	b := NewTailBuffer(8)
	huge := append(bytes.Repeat([]byte("x"), 1<<20), "bcdefXYZ"...)
	if n, _ := b.Write(huge); n != len(huge) {
		t.Fatalf("Write = %d, want %d", n, len(huge))
	}
	if cap(b.buf) > 64 || string(b.buf) != "bcdefXYZ" || !b.truncated {
		t.Fatalf("buf %q (cap %d), truncated %v", b.buf, cap(b.buf), b.truncated)
	}
}
