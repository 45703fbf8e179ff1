package allocators

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/shared/agones"
	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
	"github.com/gamefabric-alloc/allocsvc/shared/secrets"
	"github.com/gamefabric-alloc/allocsvc/shared/upstreamhttp"
)

// Identities is an Agones allocator's TLS credentials, read from its
// secret and cached (secrets.Source).
type Identities = secrets.Source[*agones.Identity]

// AgonesAllocator adapts an Agones allocator service to the allocation
// domain's port: the domain's request becomes a GameServerAllocation
// (selectors from the entry's matchLabels, the payload as annotations, and
// seed 003's rooms Counter when the entry keeps rooms), its answer a
// server, and its errors *allocation.UpstreamError with Agones' meanings.
type AgonesAllocator struct {
	Client     *agones.Client
	Identities *Identities
	Settings   config.Agones
}

var _ allocation.Allocator = AgonesAllocator{}

// Allocate makes one allocation call; the token is unused (the TLS
// identity authenticates).
func (a AgonesAllocator) Allocate(ctx context.Context, _ string, req allocation.UpstreamRequest) (allocation.Allocated, error) {
	id, err := a.Identities.Get(ctx)
	if err != nil {
		return allocation.Allocated{}, &allocation.UpstreamError{Kind: allocation.UpstreamRefused,
			Message: gameinstance.Clip("the Allocator's TLS credentials could not be read: "+err.Error(), upstreamhttp.MaxErrorText), Err: err}
	}
	body, err := a.request(req)
	if err != nil {
		return allocation.Allocated{}, &allocation.UpstreamError{Kind: allocation.UpstreamFailed, Message: err.Error(), Err: err}
	}
	got, err := a.Client.Allocate(ctx, id, body)
	if err != nil {
		return allocation.Allocated{}, a.upstreamError(err, id)
	}
	host, primary := got.Address, primaryPort(got.Ports)
	server := &gameinstance.Server{Address: net.JoinHostPort(host, strconv.Itoa(primary)), Ports: got.Ports}
	if net.ParseIP(host) != nil {
		server.IP = host
	}
	counter := got.Counters[a.Settings.RoomsCounter]
	return allocation.Allocated{Server: server, Room: a.keepsRooms(req) && counter.Count > 1,
		GameServerName: got.GameServerName, NodeName: got.NodeName}, nil
}

func (a AgonesAllocator) keepsRooms(req allocation.UpstreamRequest) bool {
	return a.Settings.RoomsCounter != "" && !req.Dedicated
}

// request is the GameServerAllocation for req: whole Ready servers, or
// with a rooms Counter seed 003's: an Allocated server with a room free,
// else a Ready one, the counter incremented, fullest (Packed) or emptiest
// (Distributed) first. A dedicated request on a rooms fleet takes a Ready
// server and sets its counter's capacity to the one game it holds, so no
// later room request finds a room on it.
func (a AgonesAllocator) request(req allocation.UpstreamRequest) (agones.AllocationRequest, error) {
	annotations, err := a.annotations(req.Payload)
	if err != nil {
		return agones.AllocationRequest{}, err
	}
	labels := make(map[string]string, len(a.Settings.MatchLabels))
	fill := strings.NewReplacer(config.PlaceholderEnv, req.Environment, config.PlaceholderArmadaSet, req.ArmadaSet)
	for k, v := range a.Settings.MatchLabels {
		labels[k] = fill.Replace(v)
	}
	r := agones.AllocationRequest{Namespace: a.Settings.Namespace, Scheduling: agones.SchedulingPacked,
		GameServerSelectors: []agones.GameServerSelector{{MatchLabels: labels, GameServerState: agones.StateReady}},
		Metadata:            &agones.MetaPatch{Annotations: annotations}}
	order := agones.OrderAscending
	if req.Scheduling == gameinstance.SchedulingDistributed {
		r.Scheduling, order = agones.SchedulingSpread, agones.OrderDescending
	}
	counter := a.Settings.RoomsCounter
	switch {
	case a.keepsRooms(req):
		free := map[string]agones.CounterSelector{counter: {MinAvailable: 1}}
		r.GameServerSelectors = []agones.GameServerSelector{{MatchLabels: labels, GameServerState: agones.StateAllocated, Counters: free},
			{MatchLabels: labels, GameServerState: agones.StateReady, Counters: free}}
		r.Counters = map[string]agones.CounterAction{counter: {Action: agones.ActionIncrement, Amount: agones.I64(1)}}
		r.Priorities = []agones.Priority{{Type: agones.PriorityCounter, Key: counter, Order: order}}
	case counter != "":
		r.Counters = map[string]agones.CounterAction{counter: {Action: agones.ActionIncrement, Amount: agones.I64(1), Capacity: agones.I64(1)}}
	}
	return r, nil
}

// annotations are the payload as GameFabric's allocation sidecar writes
// it with ALLOC_PAYLOAD_ANNOTATION: one annotation per field, a string as
// it is, a number or boolean as its JSON, a list's or object's members
// under "<field>.<index or key>"; then the marker annotation
// "<prefix>last-applied" (the GameInstanceId), which builds made for the
// sidecar wait for (an allocation's annotations arrive all at once here).
func (a AgonesAllocator) annotations(p allocation.Payload) (map[string]string, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode the payload: %w", err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("the payload is not a JSON object: %w", err)
	}
	out := map[string]string{}
	for name, v := range fields {
		flatten(out, a.Settings.AnnotationPrefix+name, v)
	}
	out[a.Settings.AnnotationPrefix+LastAppliedAnnotation] = p.GameInstanceID
	return out, nil
}

// LastAppliedAnnotation follows the prefix of the sidecar's marker
// annotation (ALLOC_PAYLOAD_ANNOTATION_LAST_APPLIED_NAME's default).
const LastAppliedAnnotation = "last-applied"

// flatten writes v under key: scalars as text, members under key.member.
func flatten(out map[string]string, key string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			flatten(out, key+"."+k, m)
		}
	case []any:
		for i, m := range v {
			flatten(out, key+"."+strconv.Itoa(i), m)
		}
	case string:
		out[key] = v
	case nil:
		out[key] = ""
	default:
		b, _ := json.Marshal(v)
		out[key] = string(b)
	}
}

// primaryPort is the port Address names: "game" when the server has one
// (GameFabric's and GameLift's name for the players' port), else the
// lowest-numbered.
func primaryPort(ports map[string]int) int {
	if p, ok := ports["game"]; ok {
		return p
	}
	lowest := 0
	for _, p := range ports {
		if lowest == 0 || p < lowest {
			lowest = p
		}
	}
	return lowest
}

// upstreamError is err with Agones' meanings: the installation's
// unallocated status is a lack of capacity, 409 (Aborted) contention,
// 401/403 and a failed TLS handshake a refusal of our credentials (whose
// cached copy is then dropped, so a rotated secret is read by the next
// allocation), an unusable 2xx UPSTREAM_INVALID_RESPONSE, any other
// status a failure of the region.
func (a AgonesAllocator) upstreamError(err error, id *agones.Identity) error {
	var e *upstreamhttp.Error
	if !errors.As(err, &e) {
		return &allocation.UpstreamError{Kind: allocation.UpstreamTransport, Message: gameinstance.Clip(err.Error(), upstreamhttp.MaxErrorText),
			MayHaveAllocated: true, Err: err}
	}
	out := &allocation.UpstreamError{Status: e.Status, Message: e.Message, Body: e.Body, RetryAfter: e.RetryAfter,
		MayHaveAllocated: e.MayHaveAllocated(), Err: err}
	switch {
	case e.Kind == upstreamhttp.KindTLS:
		out.Kind = allocation.UpstreamRefused
		out.Message = gameinstance.Clip("the TLS handshake with the Agones allocator failed (check tlsSecretId's certificate and ca.crt): "+e.Message, upstreamhttp.MaxErrorText)
		a.Identities.Expire(id)
	case e.Kind == upstreamhttp.KindStatus && (e.Status == 401 || e.Status == 403):
		out.Kind = allocation.UpstreamRefused
		out.Message = gameinstance.Clip("the Agones allocator refused our client certificate: "+e.Message, upstreamhttp.MaxErrorText)
		a.Identities.Expire(id)
	case e.Kind == upstreamhttp.KindStatus && e.Status == a.Settings.UnallocatedStatus:
		out.Kind = allocation.UpstreamNoCapacity
	case e.Kind == upstreamhttp.KindStatus && e.Status == 409:
		out.Kind = allocation.UpstreamContention
	case e.Kind == upstreamhttp.KindStatus && e.Status == 504:
		out.Kind = allocation.UpstreamTimeout
	case e.Kind == upstreamhttp.KindStatus:
		out.Kind = allocation.UpstreamFailed
	case e.Kind == upstreamhttp.KindTimeout:
		out.Kind = allocation.UpstreamTimeout
	case e.Kind == upstreamhttp.KindDecode:
		out.Kind = allocation.UpstreamInvalid
	default:
		out.Kind = allocation.UpstreamTransport
	}
	return out
}

// agonesTokens is an Agones allocator's credential as the domain reads it
// before the claim: the identity is read (and cached) there, and its
// fingerprint, which is no secret, stands for it.
type agonesTokens struct{ ids *Identities }

func (t agonesTokens) Token(ctx context.Context) (string, error) {
	id, err := t.ids.Get(ctx)
	if err != nil {
		return "", err
	}
	return id.Fingerprint, nil
}

// Refresh is Token: an Agones refusal is not retried (the domain asks
// again only after a GameFabric 401).
func (t agonesTokens) Refresh(ctx context.Context, _ string) (string, error) { return t.Token(ctx) }
