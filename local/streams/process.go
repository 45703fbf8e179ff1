package streams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Conditions of an on-failure record.
const (
	ConditionRetryAttemptsExhausted = "RetryAttemptsExhausted"
	ConditionRecordAgeExceeded      = "RecordAgeExceeded"
)

// FailureRecord is what Lambda sends the on-failure destination of a
// stream event source mapping for a batch it set aside.
type FailureRecord struct {
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionArn            string `json:"functionArn"`
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError,omitempty"`
	} `json:"responseContext"`
	Version            string    `json:"version"`
	Timestamp          string    `json:"timestamp"`
	DDBStreamBatchInfo BatchInfo `json:"DDBStreamBatchInfo"`
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

const timestampLayout = "2006-01-02T15:04:05.000Z"

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
	log := m.cfg.Log.With("shard", shardID)
	queue := []part{{recs: batch}}
	for len(queue) > 0 && ctx.Err() == nil {
		p := &queue[0]
		if expired := m.expired(p.recs); expired > 0 {
			m.setAside(ctx, shardID, part{recs: p.recs[:expired], invokes: p.invokes, lastErr: p.lastErr}, ConditionRecordAgeExceeded)
			p.recs = p.recs[expired:]
			if len(p.recs) == 0 {
				queue = queue[1:]
				continue
			}
		}
		event, err := json.Marshal(Event{Records: p.recs})
		if err != nil {
			log.Error("streams: cannot encode a batch; setting it aside", "error", err)
			m.setAside(ctx, shardID, *p, ConditionRetryAttemptsExhausted)
			queue = queue[1:]
			continue
		}
		p.invokes++
		payload, invokeErr := m.fn.Invoke(ctx, event)
		if ctx.Err() != nil {
			return
		}
		from, failure := 0, ""
		if invokeErr != nil {
			failure = "function error: " + oneLine(invokeErr.Error())
			p.lastErr = "Unhandled"
		} else if m.cfg.ReportBatchItemFailures {
			var ok bool
			from, ok, failure = m.itemFailures(payload, p.recs)
			if ok {
				queue = queue[1:]
				continue
			}
			p.lastErr = ""
		} else {
			queue = queue[1:]
			continue
		}
		log.Warn("streams: batch failed", "records", len(p.recs), "firstSequenceNumber", first(p.recs), "failedFrom", p.recs[from].DynamoDB.SequenceNumber,
			"retries", p.retries, "reason", failure)
		// Records before the first failed one are done (checkpointed).
		p.recs = p.recs[from:]
		if m.cfg.MaximumRetryAttempts >= 0 && p.retries >= m.cfg.MaximumRetryAttempts {
			m.setAside(ctx, shardID, *p, ConditionRetryAttemptsExhausted)
			queue = queue[1:]
			continue
		}
		if invokeErr != nil && m.cfg.BisectBatchOnFunctionError && len(p.recs) > 1 {
			// Splitting is not itself a retry: each half keeps the count,
			// so a poison record ends up alone before its retries run out.
			half := len(p.recs) / 2
			a := part{recs: p.recs[:half], retries: p.retries, invokes: p.invokes, lastErr: p.lastErr}
			b := part{recs: p.recs[half:], retries: p.retries, invokes: p.invokes, lastErr: p.lastErr}
			queue = append([]part{a, b}, queue[1:]...)
			continue
		}
		p.retries++
		sleep(ctx, m.cfg.RetryBackoff)
	}
}

// itemFailures reads a ReportBatchItemFailures response. ok means the
// whole batch succeeded; otherwise from is the index of the lowest failed
// sequence number, the checkpoint Lambda retries from, and a response
// Lambda cannot use (an empty, null or unknown itemIdentifier, or not the
// response shape) fails the whole batch (from 0).
func (m *Mapping) itemFailures(payload []byte, recs []Record) (from int, ok bool, failure string) {
	trimmed := strings.TrimSpace(string(payload))
	if trimmed == "" || trimmed == "null" || trimmed == "{}" {
		return 0, true, ""
	}
	var resp batchResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		// Lambda treats any other response as a success.
		return 0, true, ""
	}
	if len(resp.BatchItemFailures) == 0 {
		return 0, true, ""
	}
	lowest := -1
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == nil || *f.ItemIdentifier == "" {
			return 0, false, "batchItemFailures has an empty itemIdentifier: the whole batch failed"
		}
		idx := -1
		for i, r := range recs {
			if r.DynamoDB.SequenceNumber == *f.ItemIdentifier {
				idx = i
				break
			}
		}
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
		sleep(ctx, m.cfg.RetryBackoff)
	}
}

func (m *Mapping) failureRecord(shardID string, p part, condition string) FailureRecord {
	var f FailureRecord
	f.RequestContext.RequestID = newRequestID()
	f.RequestContext.FunctionArn = m.cfg.FunctionARN
	f.RequestContext.Condition = condition
	f.RequestContext.ApproximateInvokeCount = p.invokes
	f.ResponseContext.StatusCode = 200
	f.ResponseContext.ExecutedVersion = "$LATEST"
	f.ResponseContext.FunctionError = p.lastErr
	f.Version = "1.0"
	f.Timestamp = m.now().UTC().Format(timestampLayout)
	firstRec, lastRec := p.recs[0], p.recs[len(p.recs)-1]
	f.DDBStreamBatchInfo = BatchInfo{
		ShardID:                         shardID,
		StartSequenceNumber:             firstRec.DynamoDB.SequenceNumber,
		EndSequenceNumber:               lastRec.DynamoDB.SequenceNumber,
		ApproximateArrivalOfFirstRecord: firstRec.Created().Format(timestampLayout),
		ApproximateArrivalOfLastRecord:  lastRec.Created().Format(timestampLayout),
		BatchSize:                       len(p.recs),
		StreamArn:                       m.cfg.StreamARN,
	}
	return f
}

func keys(r Record) string {
	b, _ := json.Marshal(r.DynamoDB.Keys)
	return string(b)
}

func first(recs []Record) string {
	if len(recs) == 0 {
		return ""
	}
	return recs[0].DynamoDB.SequenceNumber
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
