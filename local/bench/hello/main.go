// Command hello is the cold-start baseline for `make bench`: the smallest
// aws-lambda-go function, built with the same flags as the real ones, so the
// ratio to it isolates what our own init adds.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

type answer struct {
	Message string `json:"message"`
}

func main() {
	lambda.Start(func(context.Context) (answer, error) {
		return answer{Message: "hello"}, nil
	})
}
