package store

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// MaxItemBytes is DynamoDB's item size limit (400 KB).
const MaxItemBytes = 400 << 10

// ItemSize is an item's size by DynamoDB's documented rules (Developer
// Guide, "Item sizes and formats"): attribute names count in UTF-8 bytes;
// strings in UTF-8 bytes; numbers about one byte per two significant digits
// plus one; booleans and nulls one byte; binaries their length; lists and
// maps three bytes plus one per element plus their contents.
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

// numberSize: the significant digits of the mantissa, leading and
// trailing zeros apart (sign, point and exponent do not count).
func numberSize(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	first, last := strings.IndexAny(s, "123456789"), strings.LastIndexAny(s, "123456789")
	digits := 0
	if first >= 0 {
		digits = last - first + 1 - strings.Count(s[first:last+1], ".")
	}
	return (digits+1)/2 + 1
}
