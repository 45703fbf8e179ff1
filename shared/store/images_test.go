package store

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gamefabric-alloc/allocsvc/shared/gameinstance"
)

func TestDecodeImages(t *testing.T) {
	full, err := Encode(gameinstance.Record{GameInstanceID: "gi-img", State: gameinstance.StateAllocated, Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		av      map[string]types.AttributeValue
		wantErr bool
	}{
		{"stored record", full, false},
		{"no state", map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: "gi-img"}}, true},
		{"no id", map[string]types.AttributeValue{"state": &types.AttributeValueMemberS{Value: "Allocated"}}, true},
		{"wrong type", map[string]types.AttributeValue{"gameInstanceId": &types.AttributeValueMemberS{Value: "gi-img"}, "state": &types.AttributeValueMemberS{Value: "Allocated"}, "version": &types.AttributeValueMemberS{Value: "two"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeGameInstance(tt.av)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err == nil && (r.GameInstanceID != "gi-img" || r.Version != 2) {
				t.Fatalf("decoded %+v", r)
			}
		})
	}
}
