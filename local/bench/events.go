package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/gamefabric-alloc/allocsvc/local/harness"
	"github.com/gamefabric-alloc/allocsvc/local/streams"
	"github.com/gamefabric-alloc/allocsvc/shared/app/eventsapp"
	"github.com/gamefabric-alloc/allocsvc/shared/config"
	"github.com/gamefabric-alloc/allocsvc/shared/eventbus"
	"github.com/gamefabric-alloc/allocsvc/shared/logging"
	"github.com/gamefabric-alloc/allocsvc/shared/metrics"
)

// EventsResult prices a game's lifecycle events, per game: stream records,
// those the template's filters pass (invocations, at worst one each: the
// batching window only merges them), events put; USD per 1M games.
type EventsResult struct {
	Games                                       int
	Records, Invocations, Events                float64
	Heartbeats                                  int
	Took                                        Summary
	LogBytes                                    float64
	EventBridgeUSD, LambdaUSD, LogsUSD, PerGame float64
}

// eventsWarmup invocations are not timed: the first put opens connections.
const eventsWarmup = 3

// MeasureEvents passes the stream records of the games whose ids start
// with l.IDPrefix through the template's FilterCriteria and hands each that
// passes to the events handler in process, alone. It puts on a bus of its
// own without rules: moto delivers to a rule's targets inside PutEvents
// (~0.3 s per target), EventBridge after answering.
func MeasureEvents(ctx context.Context, s *Stack, l LifecycleResult, log io.Writer) (EventsResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	res := EventsResult{Heartbeats: l.Heartbeats}
	records, err := streams.ReadAll(ctx, s.DynamoDBStreams(), s.Streams["GameInstancesTable"], harness.Region, "gameInstanceId",
		func(id string) bool { return strings.HasPrefix(id, l.IDPrefix) })
	if err != nil {
		return res, err
	}
	mapping, err := s.MappingConfig("EventsFunction", "GameInstancesStream", s.Refs)
	if err != nil {
		return res, err
	}
	eb := s.EventBridge()
	busName := "bench-" + strings.TrimSuffix(l.IDPrefix, "-")
	if _, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(busName)}); err != nil {
		return res, fmt.Errorf("bench event bus: %w", err)
	}
	bus := &countingBus{API: eb}
	out := &countingWriter{}
	handler := eventsapp.Handler(config.Events{Bus: busName}, bus, eventsapp.Kept{}, metrics.NewEMF(out), logging.New(out, slog.LevelInfo))
	games := map[string]bool{}
	var took []time.Duration
	for _, r := range records {
		games[fmt.Sprint(r.DynamoDB.Keys["gameInstanceId"])] = true
		pass, err := mapping.Filter.Match(r)
		if err != nil {
			return res, err
		} else if !pass {
			continue
		}
		res.Invocations++
		var ev events.DynamoDBEvent
		b, _ := json.Marshal(streams.Event{Records: []streams.Record{r}})
		if err := json.Unmarshal(b, &ev); err != nil {
			return res, err
		}
		start := time.Now()
		resp, err := handler(ctx, ev)
		if err != nil || len(resp.BatchItemFailures) > 0 {
			return res, fmt.Errorf("events handler: %v %v", resp.BatchItemFailures, err)
		}
		if int(res.Invocations) > eventsWarmup {
			took = append(took, time.Since(start))
		}
	}
	if len(games) == 0 || len(took) == 0 {
		return res, fmt.Errorf("no stream records of the lifecycle's games (%s*) passed the filters", l.IDPrefix)
	}
	n := float64(len(games))
	logBytes, _ := out.counts()
	res.Took = Summarize(took)
	billedMs := math.Ceil(toMs(res.Took.Mean))
	res.Games, res.Records, res.Events = len(games), float64(len(records))/n, float64(bus.entries.Load())/n
	// The function's own lines, and Lambda's START/END/REPORT per invocation.
	res.LogBytes = float64(logBytes)/res.Invocations + float64(PlatformLogBytes(toMs(res.Took.Mean), billedMs))
	res.Invocations /= n
	res.EventBridgeUSD = res.Events * prices.EventBridgeEvents
	res.LambdaUSD = res.Invocations * invocationUSD(billedMs)
	res.LogsUSD = res.Invocations * logsUSD(res.LogBytes)
	res.PerGame = res.EventBridgeUSD + res.LambdaUSD + res.LogsUSD
	progress(log, "events: %.1f stream records per game, %.1f pass the filters, %.1f events; handler p50 %s; $%.2f per 1M games",
		res.Records, res.Invocations, res.Events, res.Took.P50.Round(10*time.Microsecond), res.PerGame)
	return res, nil
}

type countingBus struct {
	eventbus.API
	entries atomic.Int64
}

func (c *countingBus) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	c.entries.Add(int64(len(in.Entries)))
	return c.API.PutEvents(ctx, in, opts...)
}
