package gamelift

import (
	"fmt"
	"net/http"

	"github.com/aws/smithy-go/encoding/cbor"
)

// This file is the stand-in's whole use of smithy-go's CBOR package, the
// encoder the SDK itself uses (its API is the SDK's, not promised stable).

// ticketIDs reads DescribeMatchmakingInput: {"TicketIds": [string]}, with
// the API reference's limits; problem says what is wrong.
func ticketIDs(body []byte) (ids []string, problem string) {
	v, err := cbor.Decode(body)
	if err != nil {
		return nil, "the request body is not CBOR"
	}
	in, ok := v.(cbor.Map)
	if !ok {
		return nil, "the request body must be a map"
	}
	list, ok := in["TicketIds"].(cbor.List)
	if !ok || len(list) == 0 || len(list) > maxTicketIDs {
		return nil, fmt.Sprintf("TicketIds must list 1-%d ticket ids", maxTicketIDs)
	}
	for _, item := range list {
		id, ok := item.(cbor.String)
		if !ok || len(id) == 0 || len(id) > maxTicketID || !ticketIDPattern.MatchString(string(id)) {
			return nil, fmt.Sprintf("TicketIds must be 1-%d characters of letters, digits, - and .", maxTicketID)
		}
		ids = append(ids, string(id))
	}
	return ids, ""
}

// describeOutput is DescribeMatchmakingOutput: {"TicketList": [...]}, each
// a MatchmakingTicket with the members the stand-in keeps. Timestamps are
// epoch seconds (with milliseconds) under tag 1, and whole numbers unsigned
// integers: the SDK refuses a float where an int32 goes.
func describeOutput(tickets []Ticket) cbor.Map {
	list := cbor.List{}
	for _, t := range tickets {
		players := cbor.List{}
		for _, p := range t.Players {
			latency := cbor.Map{}
			for region, ms := range p.LatencyInMs {
				latency[region] = cbor.Uint(max(ms, 0))
			}
			player := cbor.Map{"PlayerId": cbor.String(p.PlayerID), "LatencyInMs": latency}
			if p.Team != "" {
				player["Team"] = cbor.String(p.Team)
			}
			players = append(players, player)
		}
		m := cbor.Map{"TicketId": cbor.String(t.TicketID), "Status": cbor.String(t.Status), "Players": players}
		for k, v := range map[string]string{"ConfigurationName": t.ConfigurationName, "ConfigurationArn": t.ConfigurationArn} {
			if v != "" {
				m[k] = cbor.String(v)
			}
		}
		if !t.StartTime.IsZero() {
			m["StartTime"] = &cbor.Tag{ID: 1, Value: cbor.Float64(float64(t.StartTime.UnixMilli()) / 1000)}
		}
		list = append(list, m)
	}
	return cbor.Map{"TicketList": list}
}

// writeError answers f as GameLift does over RPC v2 CBOR: a map with
// __type, and the message both as the modelled errors read it (Message)
// and as the SDK reads an unmodelled one (message).
func writeError(w http.ResponseWriter, f Fault) {
	writeCBOR(w, f.Status, cbor.Map{"__type": cbor.String(f.Type), "Message": cbor.String(f.Message), "message": cbor.String(f.Message)})
}

// writeCBOR writes v with the protocol header the SDK requires on every
// answer, errors included.
func writeCBOR(w http.ResponseWriter, status int, v cbor.Value) {
	w.Header().Set(protocolHead, protocol)
	w.Header().Set("Content-Type", cborMediaType)
	w.WriteHeader(status)
	_, _ = w.Write(cbor.Encode(v))
}
