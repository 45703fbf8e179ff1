package main

import (
	"context"
	"errors"
	"testing"
)

func TestTransient(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"5xx", &statusError{Status: 503}, true},
		{"429", &statusError{Status: 429}, true},
		{"allocation still being recorded", &statusError{Status: 409, Body: `{"error":{"code":"ALLOCATION_IN_PROGRESS","state":"Allocating"}}`}, true},
		{"wrong state is final", &statusError{Status: 409, Body: `{"error":{"code":"INVALID_STATE","state":"Ended"}}`}, false},
		{"401 is final", &statusError{Status: 401}, false},
		{"connection error", errors.New("connection refused"), true},
		{"cancelled", context.Canceled, false},
		{"undecodable answer", &decodeError{err: errors.New("bad json")}, false},
	}
	for _, tc := range tests {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("%s: transient = %v, want %v", tc.name, got, tc.want)
		}
	}
}
