package fleet

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
)

// lockedWriter serializes whole lines from every slot onto one writer,
// so lines never interleave mid-way.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// line writes one supervisor line for a slot.
func (l *lockedWriter) line(prefix, format string, args ...any) {
	_, _ = l.Write([]byte(prefix + fmt.Sprintf(format, args...) + "\n"))
}

// copyLines copies r to w, prefixing every line. Lines longer than the
// buffer are split rather than held in memory, each piece its own line.
func copyLines(w io.Writer, prefix string, r io.Reader) {
	br := bufio.NewReaderSize(r, 4096)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			line := make([]byte, 0, len(prefix)+len(chunk)+1)
			line = append(append(line, prefix...), chunk...)
			if chunk[len(chunk)-1] != '\n' {
				line = append(line, '\n')
			}
			_, _ = w.Write(line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}
