package gamefabric

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
)

// GameFabric's ping-discovery schema is not public. This file alone knows
// our canonical shape, so adapting to the real one is a change here only:
//
//	{"regions": {"us-west": [{"address": "203.0.113.10", "port": 7600, "protocol": "udp"}]}}

// PingTarget is one address a client can ping to measure latency to a region.
type PingTarget struct {
	Address  string `json:"address"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}

const pingShape = `{"regions": {"<region>": [{"address": "<ip or host>", "port": <1-65535>, "protocol": "udp"|"tcp" (optional, default udp)}]}}`

// DecodePing reads a ping-discovery body strictly; anything but the
// canonical shape is an error that says what was expected.
func DecodePing(raw []byte) (map[string][]PingTarget, error) {
	if len(raw) > MaxResponseBytes {
		return nil, pingError("ping response exceeds %d bytes", MaxResponseBytes)
	}
	var doc struct {
		Regions map[string][]PingTarget `json:"regions"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, pingError("ping response does not parse (%s)", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, pingError("ping response has data after the JSON object")
	}
	if doc.Regions == nil {
		return nil, pingError("ping response has no \"regions\" object")
	}
	out := make(map[string][]PingTarget, len(doc.Regions))
	names := make([]string, 0, len(doc.Regions))
	for name := range doc.Regions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		region := strings.ToLower(strings.TrimSpace(name))
		if region == "" {
			return nil, pingError("ping response has an empty region name")
		}
		if _, dup := out[region]; dup {
			return nil, pingError("ping response lists region %q twice", region)
		}
		targets := make([]PingTarget, 0, len(doc.Regions[name]))
		for i, t := range doc.Regions[name] {
			t.Address, t.Protocol = strings.TrimSpace(t.Address), strings.ToLower(strings.TrimSpace(t.Protocol))
			if t.Protocol == "" {
				t.Protocol = "udp"
			}
			switch {
			case t.Address == "" || len(t.Address) > 255 || strings.ContainsAny(t.Address, " /"):
				return nil, pingError("region %q target %d: address must be an IP or host name", region, i)
			case t.Port < 1 || t.Port > 65535:
				return nil, pingError("region %q target %d: port must be 1-65535", region, i)
			case t.Protocol != "udp" && t.Protocol != "tcp":
				return nil, pingError("region %q target %d: protocol must be udp or tcp", region, i)
			}
			targets = append(targets, t)
		}
		out[region] = targets
	}
	return out, nil
}

func pingError(format string, args ...any) *Error {
	return &Error{Kind: KindDecode, Message: fmt.Sprintf(format, args...) + "; expected " + pingShape}
}

// PingClient fetches ping targets from GameFabric's ping discovery.
type PingClient struct {
	http Doer
	url  string
}

// NewPingClient calls url (the full ping URL) through doer.
func NewPingClient(doer Doer, url string) *PingClient {
	return &PingClient{http: doer, url: url}
}

// Fetch returns the ping targets per region. Errors are *Error.
func (c *PingClient) Fetch(ctx context.Context, token string) (map[string][]PingTarget, error) {
	raw, err := call(ctx, c.http, http.MethodGet, c.url, token, nil)
	if err != nil {
		return nil, err
	}
	return DecodePing(raw)
}
