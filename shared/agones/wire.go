// Package agones is a client for Agones' allocator service: POST
// {url}/gameserverallocation over mutual TLS, with the JSON form of
// allocation.proto's AllocationRequest and AllocationResponse that the
// service's grpc-gateway speaks (googleforgames/agones:
// proto/allocation/allocation.proto, cmd/allocator/main.go,
// pkg/allocation/converters/converter.go). The gateway writes field names
// as the proto names them, enums as their names (READY, Packed, Counter,
// Ascending), and 64-bit integers and Int64Value wrappers as JSON strings;
// it reads either form. Errors are {"code", "message", "details"} with
// the gRPC code's HTTP status.
package agones

import (
	"bytes"
	"fmt"
	"strconv"
)

// AllocationRequest is allocation.proto's AllocationRequest, the members
// this client sends.
type AllocationRequest struct {
	Namespace           string                   `json:"namespace"`
	GameServerSelectors []GameServerSelector     `json:"gameServerSelectors"`
	Scheduling          string                   `json:"scheduling"`
	Metadata            *MetaPatch               `json:"metadata,omitempty"`
	Priorities          []Priority               `json:"priorities,omitempty"`
	Counters            map[string]CounterAction `json:"counters,omitempty"`
}

// The enums' names, as the gateway reads and writes them.
const (
	StateReady        = "READY"
	StateAllocated    = "ALLOCATED"
	SchedulingPacked  = "Packed"
	SchedulingSpread  = "Distributed"
	PriorityCounter   = "Counter"
	OrderAscending    = "Ascending"
	OrderDescending   = "Descending"
	ActionIncrement   = "Increment"
	AddressExternalIP = "ExternalIP"
	AddressExternalDN = "ExternalDNS"
)

// GameServerSelector picks game servers by labels, state and counters.
type GameServerSelector struct {
	MatchLabels     map[string]string          `json:"matchLabels,omitempty"`
	GameServerState string                     `json:"gameServerState"`
	Counters        map[string]CounterSelector `json:"counters,omitempty"`
}

// CounterSelector matches a Counter with at least MinAvailable left.
type CounterSelector struct {
	MinAvailable Int64 `json:"minAvailable,omitempty"`
}

// Priority orders candidate game servers by a Counter.
type Priority struct {
	Type  string `json:"type"`
	Key   string `json:"key"`
	Order string `json:"order"`
}

// CounterAction changes a Counter of the allocated game server: its
// capacity first, then its count (Agones' CounterActions).
type CounterAction struct {
	Action   string `json:"action,omitempty"`
	Amount   *Int64 `json:"amount,omitempty"`
	Capacity *Int64 `json:"capacity,omitempty"`
}

// MetaPatch is applied to the allocated GameServer's metadata.
type MetaPatch struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// AllocationResponse is allocation.proto's AllocationResponse.
type AllocationResponse struct {
	GameServerName string                   `json:"gameServerName"`
	Ports          []Port                   `json:"ports"`
	Address        string                   `json:"address"`
	Addresses      []Address                `json:"addresses"`
	NodeName       string                   `json:"nodeName"`
	Source         string                   `json:"source"`
	Metadata       *GameServerMetadata      `json:"metadata"`
	Counters       map[string]CounterStatus `json:"counters"`
}

// Port is a GameServerStatusPort.
type Port struct {
	Name string `json:"name"`
	Port Int64  `json:"port"`
}

// Address is a GameServerStatusAddress (ExternalIP, InternalIP, ...).
type Address struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// GameServerMetadata is the allocated GameServer's labels and annotations.
type GameServerMetadata struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// CounterStatus is a Counter after the allocation's actions.
type CounterStatus struct {
	Count    *Int64 `json:"count"`
	Capacity *Int64 `json:"capacity"`
}

// Int64 is an int64 (or Int64Value) in proto's JSON form: written as a
// string, read from a string or a number.
type Int64 int64

// I64 is a pointer to v, for the optional wrappers.
func I64(v int64) *Int64 { x := Int64(v); return &x }

// MarshalJSON writes the decimal string proto3 JSON uses for 64-bit ints.
func (v Int64) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatInt(int64(v), 10) + `"`), nil
}

// UnmarshalJSON reads "12", 12 or null.
func (v *Int64) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("not a 64-bit integer: %q", clipBytes(b))
	}
	*v = Int64(n)
	return nil
}

func clipBytes(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}
