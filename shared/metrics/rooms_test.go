package metrics

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestRoomsInUse(t *testing.T) {
	var buf bytes.Buffer
	RoomsInUse(NewEMF(&buf), []gameinstance.GameServer{
		{Region: "us-west", Capacity: 4, InUse: 1, Accepting: true},
		{Region: "us-west", Capacity: 4, InUse: 3, Accepting: false}, // closed: its rooms in use count, its free ones do not
		{Region: "us-west", Capacity: 2, InUse: 3, Accepting: true},  // capacity lowered below the rooms in use
		{Region: "eu", Capacity: 8, InUse: 0, Accepting: true, CallbackToken: "secret-token"},
	})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per region:\n%s", len(lines), buf.String())
	}
	for _, w := range []string{`"GameServersAccepting":1,"Region":"eu","RoomsFree":8,"RoomsInUse":0`,
		`"GameServersAccepting":2,"Region":"us-west","RoomsFree":3,"RoomsInUse":7`} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("metrics lack %s:\n%s", w, buf.String())
		}
	}
	if strings.Contains(buf.String(), "secret-token") {
		t.Error("a callback token reached the metrics")
	}
}
