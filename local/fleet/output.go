package fleet

import (
	"bytes"
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

// maxLine bounds what a lineWriter holds: a longer line is split, each
// piece its own line.
const maxLine = 4096

// lineWriter passes a child's output on one whole line at a time, each
// under the slot's prefix.
type lineWriter struct {
	out    io.Writer
	prefix string
	buf    []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n') + 1
		if i == 0 || i > maxLine {
			if len(w.buf) < maxLine {
				return len(p), nil
			}
			i = maxLine
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i:]
	}
}

// flush passes on the last line, when it has no newline.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = nil
	}
}

func (w *lineWriter) emit(chunk []byte) {
	line := append([]byte(w.prefix), chunk...)
	if chunk[len(chunk)-1] != '\n' {
		line = append(line, '\n')
	}
	_, _ = w.out.Write(line)
}
