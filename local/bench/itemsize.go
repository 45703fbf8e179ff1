package bench

// WriteUnits is what writing (or failing a conditional write on) an item of
// size bytes costs: one unit per started KB, at least one.
func WriteUnits(size int) int { return max(1, (size+1023)/1024) }

// ReadUnits is a strongly consistent read: one unit per started 4 KB.
func ReadUnits(size int) int { return max(1, (size+4095)/4096) }
