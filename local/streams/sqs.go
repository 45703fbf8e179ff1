package streams

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SQSDestination is an on-failure destination queue.
type SQSDestination struct {
	Client   *sqs.Client
	QueueURL string
}

// Send puts body on the queue.
func (d SQSDestination) Send(ctx context.Context, body string) error {
	_, err := d.Client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(d.QueueURL), MessageBody: aws.String(body)})
	return err
}
