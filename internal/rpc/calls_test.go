package rpc

import "testing"

func TestSameRequest(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{`{"call_id":"c","arguments":{"x":1}}`, `{"arguments":{"x":1.0},"call_id":"c"}`, true},
		{`{"call_id":"c","arguments":{"s":"\u00e9"}}`, `{ "call_id" : "c", "arguments" : { "s" : "é" } }`, true},
		{`{"call_id":"c","arguments":{"x":1}}`, `{"call_id":"c","arguments":{"x":2}}`, false},
		{`{"call_id":"c","arguments":{"x":1}}`, `{"call_id":"c","arguments":{"x":1},"capability":"a"}`, false},
		{`{"call_id":"c"}`, `not json`, false},
	}
	for _, tc := range cases {
		if got := sameRequest([]byte(tc.a), []byte(tc.b)); got != tc.same {
			t.Errorf("sameRequest(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
