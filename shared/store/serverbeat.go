package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

// A rooms server's heartbeat for all its sessions is one write of the
// server's record (lastBeatAt), not one per session: a write unit per
// session and beat would make four rooms cost what four servers' games
// cost. Every session holding a room on the server counts the server's
// beat as its own: Get and HealthOf fold it into the record's
// LastHeartbeatAt, so the sweep, the link-back calls and GET see the
// heartbeat they saw when each session's record was written.

// BeatServer records a heartbeat, at now, of the game server at address
// for all the sessions holding a room there, and returns those sessions:
// one conditional UpdateItem of its record (lastBeatAt, and the expiry
// pushed out as by every write), applied only while session holds a room
// there. The sessions come back in the write's UPDATED_NEW image (set to
// themselves), so no read precedes it and nothing else of the record (not
// its callback token) comes back. ErrNotFound: no such server, or session
// holds no room on it (or no rooms are kept). A write saved with its reply
// lost is retried as is: setting the same beat twice is the same beat.
func (s *GameInstances) BeatServer(ctx context.Context, address, session string, now time.Time) ([]string, error) {
	if s.servers == nil {
		return nil, gameinstance.ErrNotFound
	}
	g := s.servers
	e := newExpr()
	sessions := e.name("sessions")
	e.set = append(e.set, e.name("lastBeatAt")+" = "+e.str("beat", FormatTime(now)),
		e.name("expiresAt")+" = "+e.num("expires", now.Add(g.retention).Unix()), sessions+" = "+sessions)
	out, err := g.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(g.table), Key: serverKey(address),
		UpdateExpression:         aws.String(e.update()),
		ConditionExpression:      aws.String("contains(" + sessions + ", " + e.str("session", session) + ")"),
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values, ReturnValues: types.ReturnValueUpdatedNew})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil, gameinstance.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("heartbeat of game server %s: %w", address, err)
	}
	ss, _ := out.Attributes["sessions"].(*types.AttributeValueMemberSS)
	if ss == nil {
		return nil, nil
	}
	return ss.Value, nil
}

// serverBeat is what a game server's record says of its sessions'
// heartbeat: when it last beat for them all, and which sessions hold a
// room there.
type serverBeat struct {
	at       time.Time
	sessions []string
}

// foldServerBeats sets the LastHeartbeatAt of each Linked session in recs
// that holds a room on a server to that server's last beat, when it is
// later. consistent: strongly consistent reads (a record read before a
// write), else eventually consistent batches (the sweep's first look,
// whose review reads again). Without rooms it does nothing.
func (s *GameInstances) foldServerBeats(ctx context.Context, recs []gameinstance.Record, consistent bool) error {
	if s.servers == nil {
		return nil
	}
	var addresses []string
	for _, r := range recs {
		if r.State == gameinstance.StateLinked && r.RoomServer != "" && !slices.Contains(addresses, r.RoomServer) {
			addresses = append(addresses, r.RoomServer)
		}
	}
	if len(addresses) == 0 {
		return nil
	}
	beats, err := s.servers.beats(ctx, addresses, consistent)
	if err != nil {
		return err
	}
	for i, r := range recs {
		b, ok := beats[r.RoomServer]
		if ok && r.State == gameinstance.StateLinked && b.at.After(r.LastHeartbeatAt) && slices.Contains(b.sessions, r.GameInstanceID) {
			recs[i].LastHeartbeatAt = b.at
		}
	}
	return nil
}

// beats reads the servers' beats (address, lastBeatAt and sessions alone,
// never the callback token): one GetItem for a single consistent
// read, else BatchGetItem, 100 keys a call. A server without a record is
// left out.
func (g *GameServers) beats(ctx context.Context, addresses []string, consistent bool) (map[string]serverBeat, error) {
	names := map[string]string{"#a": "address", "#b": "lastBeatAt", "#s": "sessions"}
	projection := aws.String("#a, #b, #s")
	out := make(map[string]serverBeat, len(addresses))
	keep := func(av map[string]types.AttributeValue) {
		a, _ := av["address"].(*types.AttributeValueMemberS)
		b, _ := av["lastBeatAt"].(*types.AttributeValueMemberS)
		ss, _ := av["sessions"].(*types.AttributeValueMemberSS)
		if a == nil || b == nil {
			return // never beat for all its sessions: nothing to fold
		}
		beat := serverBeat{at: ParseTime(b.Value)}
		if ss != nil {
			beat.sessions = ss.Value
		}
		out[a.Value] = beat
	}
	if len(addresses) == 1 {
		res, err := g.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(g.table), Key: serverKey(addresses[0]),
			ProjectionExpression: projection, ExpressionAttributeNames: names, ConsistentRead: aws.Bool(consistent)})
		if err != nil {
			return nil, fmt.Errorf("read the heartbeat of game server %s: %w", addresses[0], err)
		}
		keep(res.Item)
		return out, nil
	}
	for start := 0; start < len(addresses); start += healthBatch {
		var keys []map[string]types.AttributeValue
		for _, a := range addresses[start:min(start+healthBatch, len(addresses))] {
			keys = append(keys, serverKey(a))
		}
		pending := map[string]types.KeysAndAttributes{g.table: {Keys: keys, ProjectionExpression: projection,
			ExpressionAttributeNames: names, ConsistentRead: aws.Bool(consistent)}}
		err := RetryUnprocessed(ctx, 5, 50*time.Millisecond, "batch get "+g.table, "keys", func() (int, error) {
			res, err := g.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
			if err != nil {
				return 0, err
			}
			for _, av := range res.Responses[g.table] {
				keep(av)
			}
			pending = res.UnprocessedKeys
			return len(pending[g.table].Keys), nil
		})
		if err != nil {
			return nil, fmt.Errorf("read the heartbeats of game servers: %w", err)
		}
	}
	return out, nil
}
