package streams

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gamefabric-alloc/allocsvc/local/internal/esm"
	"github.com/gamefabric-alloc/allocsvc/local/internal/uuid"
)

// Conditions of an on-failure record.
const (
	ConditionRetryAttemptsExhausted = "RetryAttemptsExhausted"
	ConditionRecordAgeExceeded      = "RecordAgeExceeded"
)

// FailureRecord is what Lambda sends the on-failure destination of a
// stream event source mapping for a batch it set aside.
type FailureRecord struct {
	RequestContext     esm.RequestContext  `json:"requestContext"`
	ResponseContext    esm.ResponseContext `json:"responseContext"`
	Version            string              `json:"version"`
	Timestamp          string              `json:"timestamp"`
	DDBStreamBatchInfo BatchInfo           `json:"DDBStreamBatchInfo"`
}

// BatchInfo locates the records set aside in the stream: read them again
// with GetShardIterator AT_SEQUENCE_NUMBER startSequenceNumber.
type BatchInfo struct {
	ShardID                         string `json:"shardId"`
	StartSequenceNumber             string `json:"startSequenceNumber"`
	EndSequenceNumber               string `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int    `json:"batchSize"`
	StreamArn                       string `json:"streamArn"`
}

// batchResponse is a function's StreamsEventResponse.
type batchResponse struct {
	BatchItemFailures []struct {
		ItemIdentifier *string `json:"itemIdentifier"`
	} `json:"batchItemFailures"`
}

// part is a run of a batch's records still to be delivered.
type part struct {
	recs    []Record
	retries int // failed invocations of these records that counted as retries
	invokes int // invocations that carried them
	lastErr string
}

// process delivers one batch, in order, and returns once every record was
// delivered or set aside (or ctx ended).
func (m *Mapping) process(ctx context.Context, shardID string, batch []Record) {
	queue := []part{{recs: batch}}
	for len(queue) > 0 && ctx.Err() == nil {
		queue = append(m.attempt(ctx, shardID, queue[0]), queue[1:]...)
	}
}

// attempt invokes the function with p and returns what is left to
// deliver: nothing, p again to retry, or its halves.
func (m *Mapping) attempt(ctx context.Context, shardID string, p part) []part {
	if n := m.expired(p.recs); n > 0 {
		old := p
		old.recs, p.recs = p.recs[:n], p.recs[n:]
		m.setAside(ctx, shardID, old, ConditionRecordAgeExceeded)
		if len(p.recs) == 0 {
			return nil
		}
	}
	event, err := json.Marshal(Event{Records: p.recs})
	if err != nil {
		m.cfg.Log.Error("streams: cannot encode a batch; setting it aside", "shard", shardID, "error", err)
		m.setAside(ctx, shardID, p, ConditionRetryAttemptsExhausted)
		return nil
	}
	p.invokes++
	payload, invokeErr := m.fn.Invoke(ctx, event)
	from, failure := 0, ""
	switch {
	case ctx.Err() != nil:
		return nil
	case invokeErr != nil:
		failure, p.lastErr = "function error: "+oneLine(invokeErr.Error()), "Unhandled"
	case !m.cfg.ReportBatchItemFailures:
		return nil
	default:
		var ok bool
		if from, ok, failure = itemFailures(payload, p.recs); ok {
			return nil
		}
		p.lastErr = ""
	}
	m.cfg.Log.Warn("streams: batch failed", "shard", shardID, "records", len(p.recs), "firstSequenceNumber", p.recs[0].DynamoDB.SequenceNumber,
		"failedFrom", p.recs[from].DynamoDB.SequenceNumber, "retries", p.retries, "reason", failure)
	// Records before the first failed one are done (checkpointed).
	p.recs = p.recs[from:]
	if m.cfg.MaximumRetryAttempts >= 0 && p.retries >= m.cfg.MaximumRetryAttempts {
		m.setAside(ctx, shardID, p, ConditionRetryAttemptsExhausted)
		return nil
	}
	if invokeErr != nil && m.cfg.BisectBatchOnFunctionError && len(p.recs) > 1 {
		// Splitting is not itself a retry: each half keeps the count,
		// so a poison record ends up alone before its retries run out.
		a, b := p, p
		a.recs, b.recs = p.recs[:len(p.recs)/2], p.recs[len(p.recs)/2:]
		return []part{a, b}
	}
	p.retries++
	esm.Sleep(ctx, m.cfg.RetryBackoff)
	return []part{p}
}

// itemFailures reads a ReportBatchItemFailures response. ok means the
// whole batch succeeded; otherwise from is the index of the lowest failed
// sequence number, the checkpoint Lambda retries from, and a response
// Lambda cannot use (an empty, null or unknown itemIdentifier) fails the
// whole batch (from 0). Lambda treats a response of another shape as a
// success.
func itemFailures(payload []byte, recs []Record) (from int, ok bool, failure string) {
	var resp batchResponse
	if json.Unmarshal(payload, &resp) != nil || len(resp.BatchItemFailures) == 0 {
		return 0, true, ""
	}
	lowest := -1
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == nil || *f.ItemIdentifier == "" {
			return 0, false, "batchItemFailures has an empty itemIdentifier: the whole batch failed"
		}
		idx := slices.IndexFunc(recs, func(r Record) bool { return r.DynamoDB.SequenceNumber == *f.ItemIdentifier })
		if idx < 0 {
			return 0, false, fmt.Sprintf("batchItemFailures names %q, not a record of the batch: the whole batch failed", *f.ItemIdentifier)
		}
		if lowest < 0 || compareSeq(recs[idx].DynamoDB.SequenceNumber, recs[lowest].DynamoDB.SequenceNumber) < 0 {
			lowest = idx
		}
	}
	return lowest, false, fmt.Sprintf("%d batch item failures, the lowest %s", len(resp.BatchItemFailures), recs[lowest].DynamoDB.SequenceNumber)
}

// expired counts the leading records older than MaximumRecordAge.
func (m *Mapping) expired(recs []Record) int {
	if m.cfg.MaximumRecordAge <= 0 {
		return 0
	}
	n := 0
	for _, r := range recs {
		if m.now().Sub(r.Created()) <= m.cfg.MaximumRecordAge {
			break
		}
		n++
	}
	return n
}

// setAside sends the on-failure record of p to the destination, retrying
// until it is accepted (or ctx ends), and logs each record it covers.
func (m *Mapping) setAside(ctx context.Context, shardID string, p part, condition string) {
	rec := m.failureRecord(shardID, p, condition)
	body, _ := json.Marshal(rec)
	for _, r := range p.recs {
		m.cfg.Log.Error("streams: record set aside", "shard", shardID, "condition", condition, "sequenceNumber", r.DynamoDB.SequenceNumber,
			"eventName", r.EventName, "keys", keys(r), "destination", m.cfg.OnFailure != nil)
	}
	if m.cfg.OnFailure == nil {
		m.cfg.Log.Error("streams: no on-failure destination; the batch info is only logged", "batch", string(body))
		return
	}
	for ctx.Err() == nil {
		err := m.cfg.OnFailure.Send(ctx, string(body))
		if err == nil {
			return
		}
		m.cfg.Log.Warn("streams: sending to the on-failure destination failed; trying again", "error", err)
		esm.Sleep(ctx, m.cfg.RetryBackoff)
	}
}

func (m *Mapping) failureRecord(shardID string, p part, condition string) FailureRecord {
	firstRec, lastRec := p.recs[0], p.recs[len(p.recs)-1]
	return FailureRecord{
		RequestContext:  esm.RequestContext{RequestID: uuid.New(), FunctionArn: m.cfg.FunctionARN, Condition: condition, ApproximateInvokeCount: p.invokes},
		ResponseContext: esm.ResponseContext{StatusCode: 200, ExecutedVersion: "$LATEST", FunctionError: p.lastErr},
		Version:         "1.0",
		Timestamp:       m.now().UTC().Format(esm.TimestampLayout),
		DDBStreamBatchInfo: BatchInfo{
			ShardID:                         shardID,
			StartSequenceNumber:             firstRec.DynamoDB.SequenceNumber,
			EndSequenceNumber:               lastRec.DynamoDB.SequenceNumber,
			ApproximateArrivalOfFirstRecord: firstRec.Created().Format(esm.TimestampLayout),
			ApproximateArrivalOfLastRecord:  lastRec.Created().Format(esm.TimestampLayout),
			BatchSize:                       len(p.recs),
			StreamArn:                       m.cfg.StreamARN,
		},
	}
}

func keys(r Record) string {
	b, _ := json.Marshal(r.DynamoDB.Keys)
	return string(b)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
