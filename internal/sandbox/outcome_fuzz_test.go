package sandbox

import (
	"encoding/json"
	"testing"

	"github.com/apysup/apysup/broker"
)

// FuzzParseOutcome: outcome.json is written by the guest. Parsing never
// panics, anything accepted agrees with itself (result_set iff a result),
// and the host-field check never panics on what it accepts.
func FuzzParseOutcome(f *testing.F) {
	for _, s := range []string{
		`{"exit_code":0,"result_set":true,"result":{"a":1}}`,
		`{"exit_code":1,"result_set":false,"error":{"type":"ValueError","message":"m","traceback":"t"}}`,
		`{"exit_code":137,"result_set":false,"signal":9}`,
		`{"exit_code":0,"result_set":true,"result":{"receipts":[]}}`,
		`{"exit_code":0,"result_set":false,"result":1}`, `{"Exit_Code":0}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseOutcome(data)
		if err != nil {
			return
		}
		if o.ResultSet != (o.Result != nil) {
			t.Fatalf("accepted an outcome whose result_set disagrees: %s", data)
		}
		if o.ResultSet && !json.Valid(o.Result) {
			t.Fatalf("accepted a result that is not JSON: %s", data)
		}
		_ = broker.CheckGuestOutput(o.Result)
	})
}
