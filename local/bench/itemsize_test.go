package bench

import "testing"

func TestCapacityUnits(t *testing.T) {
	for _, c := range []struct{ size, write, read int }{{0, 1, 1}, {587, 1, 1}, {1024, 1, 1}, {1025, 2, 1}, {4097, 5, 2}} {
		if w, r := WriteUnits(c.size), ReadUnits(c.size); w != c.write || r != c.read {
			t.Errorf("size %d: write %d read %d, want %d %d", c.size, w, r, c.write, c.read)
		}
	}
}
