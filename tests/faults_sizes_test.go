//go:build integration

package tests

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/local/gfemu"
)

// An allocation that is valid in every way but its size.
var oversizedAllocation = fmt.Sprintf(`{"address":"127.0.0.1:7999","ip":"127.0.0.1","ports":{"game":7999},"token":"callback-oversized","payload":{"pad":%q}}`,
	strings.Repeat("x", 1<<20))

// sizeFaults are the sizes GameFabric controls in the fault matrix.
func sizeFaults() []upstreamFault {
	ok := gfemu.Answer{}
	return []upstreamFault{
		// Sizes GameFabric controls: what it sends is bounded where it
		// enters, so the record fits DynamoDB and the answer stays small.
		{
			name: "503 with a 900 KB error text", primary: []gfemu.Answer{hugeError},
			status: 503, code: "NO_CAPACITY", attempts: []string{"us-west:503"}, errHas: "full full",
		},
		{
			name: "503 with a 900 KB error text then fallback", fallback: true, primary: []gfemu.Answer{hugeError}, second: []gfemu.Answer{ok},
			status: 201, attempts: []string{"us-west:503", "eu-central-1:200"},
		},
		{
			name: "900 KB error texts everywhere", fallback: true, primary: []gfemu.Answer{hugeError}, second: []gfemu.Answer{hugeError},
			status: 503, code: "NO_CAPACITY", attempts: []string{"us-west:503", "eu-central-1:503"},
		},
		{
			// A server was handed out, in an answer we cannot trust.
			name: "200 with 40,000 ports", primary: []gfemu.Answer{{RawBody: manyPorts(40_000)}},
			status: 502, code: "ALLOCATION_FAILED", attempts: []string{"us-west:0"}, errHas: "40000 ports", orphan: true,
		},
		{
			name: "200 with 40,000 ports then fallback", fallback: true, primary: []gfemu.Answer{{RawBody: manyPorts(40_000)}}, second: []gfemu.Answer{ok},
			status: 201, attempts: []string{"us-west:0", "eu-central-1:200"}, errHas: "40000 ports", orphan: true,
		},
	}
}

// hugeError is a 503 whose {"error"} text is 900 KB.
var hugeError = gfemu.Answer{Status: http.StatusServiceUnavailable, Error: strings.Repeat("full ", 180_000)}

// manyPorts is a 200 allocation listing n named ports.
func manyPorts(n int) string {
	var b strings.Builder
	b.WriteString(`{"address":"127.0.0.1:7998","ip":"127.0.0.1","token":"callback-ports","ports":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":%d`, i, 1+i%65535)
	}
	b.WriteString(`}}`)
	return b.String()
}

// maxAnswer is how large any answer may be, whatever GameFabric sends.
const maxAnswer = 16 << 10
