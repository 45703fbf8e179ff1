package gameinstance

import (
	"encoding/json"
	"testing"
)

func TestServerPublicHasAPortsObject(t *testing.T) {
	tests := []struct {
		name   string
		server *Server
		want   string
	}{
		{"no ports", &Server{Address: "1.2.3.4:7777", IP: "1.2.3.4"}, `{"address":"1.2.3.4:7777","ip":"1.2.3.4","ports":{}}`},
		{"ports", &Server{Address: "1.2.3.4:7777", IP: "1.2.3.4", Ports: map[string]int{"game": 7777}}, `{"address":"1.2.3.4:7777","ip":"1.2.3.4","ports":{"game":7777}}`},
		{"no server", nil, `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := json.Marshal(tc.server.Public())
			if string(got) != tc.want {
				t.Fatalf("Public() = %s, want %s", got, tc.want)
			}
			if tc.server != nil && tc.server.Ports == nil && tc.server.Public() == tc.server {
				t.Fatal("the stored record's server was changed, not copied")
			}
		})
	}
}
