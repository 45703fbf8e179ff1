package proc

import (
	"fmt"
	"net"
)

// FreePort asks the kernel for an unused loopback port. The port is released
// before it is returned, so a caller racing other processes may lose it;
// callers that start servers retry on bind failures for that reason.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("releasing probe listener on port %d: %w", port, err)
	}
	return port, nil
}
