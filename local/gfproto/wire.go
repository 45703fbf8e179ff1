package gfproto

import (
	"encoding/json"
	"time"
)

// AllocateRequest is the body of POST …/allocate.
type AllocateRequest struct {
	Region     string            `json:"region"`
	Attributes map[string]string `json:"attributes"`
	Payload    json.RawMessage   `json:"payload"`
}

// AllocateResponse is the Allocator's documented success body: the
// allocated server and what its allocation callback answered (payload).
type AllocateResponse struct {
	Address string          `json:"address"`
	IP      string          `json:"ip"`
	Ports   map[string]int  `json:"ports"`
	Token   string          `json:"token"`
	Payload json.RawMessage `json:"payload"`
}

// RegisterRequest is the body of the Registry's POST …/servers. Pointers
// tell a missing field from its zero value where the protocol requires or
// defaults it.
type RegisterRequest struct {
	Address            *string           `json:"address"`
	Attributes         map[string]string `json:"attributes"`
	RequiredAttributes []string          `json:"requiredAttributes"`
	Callback           *Callback         `json:"callback"`
	Ports              map[string]int    `json:"ports"`
	Priority           *int              `json:"priority"`
	Region             string            `json:"region"`
	Timeout            *int              `json:"timeout"`
}

// Callback is where and with which token the Allocator calls an allocated
// server.
type Callback struct {
	Token string `json:"token"`
	URL   string `json:"url"`
}

// KeepAliveRequest is the (optional) body of POST …/servers/{addr}/keepalive.
type KeepAliveRequest struct {
	Timeout *int `json:"timeout"`
}

// Registration is the Registry's answer to register and keep-alive.
type Registration struct {
	Address   string    `json:"address"`
	Region    string    `json:"region"`
	Priority  int       `json:"priority"`
	Timeout   int       `json:"timeout"` // seconds
	ExpiresAt time.Time `json:"expiresAt"`
}

// PingResponse is the Ping Service's answer in our canonical shape,
// {"regions": {"<region>": [targets]}}, which shared/gamefabric.DecodePing
// reads.
type PingResponse struct {
	Regions map[string][]PingTarget `json:"regions"`
}

// PingTarget is one ping server of a region.
type PingTarget struct {
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol,omitempty"`
}

// ErrorBody is every failure's body.
type ErrorBody struct {
	Error string `json:"error"`
}
