package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/gamefabric-alloc/allocsvc/shared/allocclient"
)

// api reads game instances from make dev's HTTP API with the backend
// client; its errors say what a person at the terminal can do.
type api struct{ c *allocclient.Client }

func newAPI(baseURL string) (api, error) {
	c, err := allocclient.New(allocclient.Options{BaseURL: baseURL})
	if err != nil {
		return api{}, fmt.Errorf("make dev's state names no usable API URL: %w", err)
	}
	return api{c: c}, nil
}

func (a api) get(ctx context.Context, id string) (*allocclient.Allocation, error) {
	inst, err := a.c.Get(ctx, id)
	var e *allocclient.Error
	switch {
	case allocclient.IsCode(err, allocclient.CodeNotFound):
		return nil, fmt.Errorf("no game instance %q in the running stack: allocate one first (the dashboard, or POST /v1/allocations)", id)
	case errors.As(err, &e):
		return nil, fmt.Errorf("GET /v1/allocations/%s: %w", id, err)
	case err != nil:
		return nil, fmt.Errorf("the local API does not answer (is make dev still running?): %w", err)
	}
	return inst, nil
}
