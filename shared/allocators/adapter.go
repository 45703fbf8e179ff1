package allocators

import (
	"context"
	"errors"

	"github.com/gamefabric-alloc/allocsvc/shared/allocation"
	"github.com/gamefabric-alloc/allocsvc/shared/gamefabric"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// Allocator adapts GameFabric's Allocator client to the allocation
// domain's port: the domain's request becomes GameFabric's wire body
// ({region, attributes{env, armadaset}, payload}, Pragma's attribute
// names), its answer a server, and its errors *allocation.UpstreamError.
// GameFabric's callback token is not passed on: nobody downstream may see it.
type Allocator struct{ Client *gamefabric.Client }

var _ allocation.Allocator = Allocator{}

// Allocate makes one allocate call.
func (a Allocator) Allocate(ctx context.Context, token string, req allocation.UpstreamRequest) (allocation.Allocated, error) {
	alloc, err := a.Client.Allocate(ctx, token, gamefabric.AllocateRequest{
		Region:     req.Region,
		Attributes: map[string]string{"env": req.Environment, "armadaset": req.ArmadaSet},
		Payload:    req.Payload,
	})
	if err != nil {
		return allocation.Allocated{}, upstreamError(err)
	}
	return allocation.Allocated{Server: &gameinstance.Server{Address: alloc.Address, IP: alloc.IP, Ports: alloc.Ports}}, nil
}

// upstreamError is err in the domain's terms; anything but a
// *gamefabric.Error (the client returns no other) is a transport failure
// that may have allocated. A TLS failure is a transport failure of the
// region, as it always was for GameFabric.
func upstreamError(err error) error {
	var gf *gamefabric.Error
	if !errors.As(err, &gf) {
		return &allocation.UpstreamError{Kind: allocation.UpstreamTransport, Message: gameinstance.Clip(err.Error(), gamefabric.MaxErrorText),
			MayHaveAllocated: true, Err: err}
	}
	kinds := map[gamefabric.Kind]allocation.UpstreamKind{gamefabric.KindStatus: allocation.UpstreamStatus,
		gamefabric.KindTimeout: allocation.UpstreamTimeout, gamefabric.KindTransport: allocation.UpstreamTransport,
		gamefabric.KindDecode: allocation.UpstreamDecode, gamefabric.KindTLS: allocation.UpstreamTransport}
	return &allocation.UpstreamError{Kind: kinds[gf.Kind], Status: gf.Status, Message: gf.Message, Body: gf.Body,
		RetryAfter: gf.RetryAfter, MayHaveAllocated: gf.MayHaveAllocated(), Err: err}
}
