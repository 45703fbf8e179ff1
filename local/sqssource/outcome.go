package sqssource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// deliver invokes the function with one batch and deletes what it handled.
func (m *Mapping) deliver(ctx context.Context, batch []types.Message) {
	ids := make([]string, len(batch))
	for i, msg := range batch {
		ids[i] = aws.ToString(msg.MessageId)
	}
	event, err := Event(batch, m.cfg.QueueARN, m.cfg.Region)
	if err != nil {
		m.cfg.Log.Error("sqssource: building the event failed; the batch stays for redelivery", "error", err)
		return
	}
	payload, err := m.fn.Invoke(ctx, event)
	done, err := Handled(ids, payload, err, m.cfg.ReportBatchItemFailures)
	if err != nil && ctx.Err() == nil {
		// Failures the function reported are its business (a placement
		// not due yet); a failed invocation or unreadable answer is not.
		level := slog.LevelWarn
		if errors.Is(err, ErrReported) {
			level = slog.LevelInfo
		}
		m.cfg.Log.Log(ctx, level, "sqssource: messages stay for redelivery after the visibility timeout",
			"kept", len(ids)-len(done), "batch", len(ids), "reason", err)
	}
	var handles []*string
	for _, msg := range batch {
		if slices.Contains(done, aws.ToString(msg.MessageId)) {
			handles = append(handles, msg.ReceiptHandle)
		}
	}
	m.delete(ctx, handles)
}

// ErrReported is Handled's error when the only messages kept are those the
// function reported as batch item failures.
var ErrReported = errors.New("reported as batch item failures")

// Handled returns the IDs of the batch's messages the function handled,
// to be deleted, by Lambda's rules; err says why the others stay. A failed
// invocation handled none. With reportFailures, an empty or null response
// or batchItemFailures handled all, the failures listed stay, and a
// response Lambda cannot read (invalid JSON, an itemIdentifier missing,
// empty or of no message in the batch) handled none.
func Handled(ids []string, payload []byte, invokeErr error, reportFailures bool) ([]string, error) {
	if invokeErr != nil {
		return nil, fmt.Errorf("invocation failed: %w", invokeErr)
	}
	payload = bytes.TrimSpace(payload)
	if !reportFailures || len(payload) == 0 || string(payload) == "null" {
		return ids, nil
	}
	var res struct {
		BatchItemFailures []struct {
			ItemIdentifier *string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(payload, &res); err != nil {
		return nil, fmt.Errorf("response is no batch item failures, so the batch failed: %v", err)
	}
	failed := map[string]bool{}
	for i, f := range res.BatchItemFailures {
		id := aws.ToString(f.ItemIdentifier)
		if !slices.Contains(ids, id) {
			return nil, fmt.Errorf("batchItemFailures[%d].itemIdentifier %q names no message of the batch, so the batch failed", i, id)
		}
		failed[id] = true
	}
	var done []string
	for _, id := range ids {
		if !failed[id] {
			done = append(done, id)
		}
	}
	if len(failed) > 0 {
		return done, fmt.Errorf("%d %w", len(failed), ErrReported)
	}
	return done, nil
}

// deleteTimeout bounds one DeleteMessageBatch, which outlives Stop.
const deleteTimeout = 10 * time.Second

// delete removes handled messages, ten per request. A delete that fails
// leaves its message to reappear: delivery is at least once, on AWS too.
func (m *Mapping) delete(ctx context.Context, handles []*string) {
	for chunk := range slices.Chunk(handles, receiveMax) {
		in := &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(m.cfg.QueueURL)}
		for i, h := range chunk {
			in.Entries = append(in.Entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: h})
		}
		// Not the poll's context: a batch handled just before Stop is
		// still deleted, or it would be delivered again; bounded instead.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
		out, err := m.api.DeleteMessageBatch(dctx, in)
		cancel()
		if err == nil && len(out.Failed) > 0 {
			err = errors.New(aws.ToString(out.Failed[0].Message))
		}
		if err != nil {
			m.cfg.Log.Warn("sqssource: deleting handled messages failed; they will be delivered again", "error", err)
		}
	}
}
