package canonjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A carrier's containers may go as many levels deeper as it carries its
// document down, and no more; everything else is Validate's.
func TestValidateCarrier(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(`{"call":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	if err := ValidateCarrier(nest(MaxDepth+1), MaxGuestBytes, 1); err != nil {
		t.Fatalf("a document of MaxDepth carried one level down: %v", err)
	}
	if err := Validate(nest(MaxDepth+1), MaxGuestBytes); CodeOf(err) != CodeTooDeep {
		t.Fatalf("Validate: %v", err)
	}
	if err := ValidateCarrier(nest(MaxDepth+2), MaxGuestBytes, 1); CodeOf(err) != CodeTooDeep {
		t.Fatalf("one level past the carried document's MaxDepth: %v", err)
	}
	if err := ValidateCarrier([]byte(`{"call":1e400}`), MaxGuestBytes, 1); CodeOf(err) != CodeBadNumber {
		t.Fatalf("the carried document's numbers: %v", err)
	}
}

func TestValidateRefusals(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	okDeep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	cases := []struct {
		name, in, code string
	}{
		{"empty", "", CodeEmpty},
		{"blank", "  \n", CodeEmpty},
		{"invalid utf8", "\"\xff\"", CodeInvalidUTF8},
		{"duplicate key", `{"a":1,"a":2}`, CodeDuplicateKey},
		{"duplicate after unescape", `{"a":1,"\u0061":2}`, CodeDuplicateKey},
		{"nested duplicate", `{"x":[{"k":1,"k":1}]}`, CodeDuplicateKey},
		{"too deep", deep, CodeTooDeep},
		{"trailing", `{} {}`, CodeTrailingData},
		{"lone high surrogate", `"\ud800"`, CodeBadSurrogate},
		{"lone low surrogate", `"\udc00"`, CodeBadSurrogate},
		{"bad pair", `"\ud800\u0041"`, CodeBadSurrogate},
		{"huge number", `1e400`, CodeBadNumber},
		{"leading zero", `01`, CodeTrailingData},
		{"nan", `NaN`, CodeSyntax},
		{"control char", "\"a\x01\"", CodeSyntax},
		{"single quote", `{'a':1}`, CodeSyntax},
		{"trailing comma", `[1,]`, CodeSyntax},
		{"missing colon", `{"a" 1}`, CodeSyntax},
		{"bad escape", `"\x"`, CodeSyntax},
		{"unterminated", `{"a":`, CodeSyntax},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate([]byte(tc.in), MaxGuestBytes)
			if got := CodeOf(err); got != tc.code {
				t.Fatalf("code %q (%v), want %q", got, err, tc.code)
			}
		})
	}
	if err := Validate([]byte(okDeep), MaxGuestBytes); err != nil {
		t.Fatalf("depth %d refused: %v", MaxDepth, err)
	}
	big := `"` + strings.Repeat("a", MaxGuestBytes) + `"`
	if got := CodeOf(Validate([]byte(big), MaxGuestBytes)); got != CodeTooLarge {
		t.Fatalf("oversize: %q", got)
	}
}

func TestValidateAccepts(t *testing.T) {
	for _, in := range []string{`{}`, `[]`, `0`, `-0.5e-3`, `"😀"`, `"\ud83d\ude00"`, `{"a":{"b":[true,false,null]}}`, " 1 "} {
		if err := Validate([]byte(in), MaxGuestBytes); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

// A carrier's document may nest the levels it carries deeper than
// MaxDepth (the run API's request carries a manifest); DecodeStrict holds
// it to MaxDepth, and both refuse what Validate refuses.
func TestDecodeStrictCarrier(t *testing.T) {
	type request struct {
		Manifest json.RawMessage `json:"manifest"`
	}
	deep := []byte(`{"manifest":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`)
	var r request
	if err := DecodeStrictCarrier(deep, len(deep), 1, &r); err != nil {
		t.Fatalf("a carried document at MaxDepth: %v", err)
	}
	if got := CodeOf(DecodeStrict(deep, len(deep), &r)); got != CodeTooDeep {
		t.Fatalf("DecodeStrict of the same: %q, want %s", got, CodeTooDeep)
	}
	for body, want := range map[string]string{`{"manifest":1,"manifest":2}`: CodeDuplicateKey, `{"Manifest":1}`: CodeUnknownField} {
		if got := CodeOf(DecodeStrictCarrier([]byte(body), len(body), 1, &r)); got != want {
			t.Errorf("%s: %q, want %s", body, got, want)
		}
	}
}

func TestDecodeStrict(t *testing.T) {
	type frame struct {
		A string `json:"a"`
	}
	var f frame
	if err := DecodeStrict([]byte(`{"a":"x"}`), MaxGuestBytes, &f); err != nil || f.A != "x" {
		t.Fatalf("%v %+v", err, f)
	}
	if got := CodeOf(DecodeStrict([]byte(`{"a":"x","b":1}`), MaxGuestBytes, &f)); got != CodeUnknownField {
		t.Fatalf("unknown field: %q", got)
	}
	if got := CodeOf(DecodeStrict([]byte(`{"a":1}`), MaxGuestBytes, &f)); got != CodeTypeMismatch {
		t.Fatalf("type mismatch: %q", got)
	}
	if got := CodeOf(DecodeStrict([]byte(`{"a":"x","a":"y"}`), MaxGuestBytes, &f)); got != CodeDuplicateKey {
		t.Fatalf("duplicate: %q", got)
	}
	// encoding/json matches names case-insensitively; the strict decoder
	// does not, at any depth.
	if got := CodeOf(DecodeStrict([]byte(`{"A":"x"}`), MaxGuestBytes, &f)); got != CodeUnknownField {
		t.Fatalf("case variant: %q", got)
	}
	type outer struct {
		In    frame            `json:"in"`
		List  []frame          `json:"list"`
		ByKey map[string]frame `json:"by_key"`
		Raw   any              `json:"raw"`
	}
	var o outer
	if err := DecodeStrict([]byte(`{"in":{"a":"1"},"list":[{"a":"2"}],"by_key":{"K":{"a":"3"}},"raw":{"A":1}}`), MaxGuestBytes, &o); err != nil || o.ByKey["K"].A != "3" {
		t.Fatalf("exact names refused: %v", err)
	}
	for _, bad := range []string{`{"in":{"A":"1"}}`, `{"list":[{"a":"2"},{"A":"2"}]}`, `{"by_key":{"k":{"A":"3"}}}`, `{"In":{}}`} {
		if got := CodeOf(DecodeStrict([]byte(bad), MaxGuestBytes, &o)); got != CodeUnknownField {
			t.Errorf("%s: %q", bad, got)
		}
	}
}

// FuzzValidate: the strict parser never panics, and whatever it accepts can
// be canonicalised, and canonicalisation is a fixed point.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2,{"b":"\u00e9"}]`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, `1e400`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := Validate(data, MaxGuestBytes)
		// A carrier of no levels is Validate; of one, it refuses less, and
		// only for depth.
		if carried := ValidateCarrier(data, MaxGuestBytes, 0); (carried == nil) != (err == nil) || CodeOf(carried) != CodeOf(err) {
			t.Fatalf("ValidateCarrier(0) %v, Validate %v", carried, err)
		}
		if carried := ValidateCarrier(data, MaxGuestBytes, 1); carried != nil && (err == nil || CodeOf(carried) != CodeOf(err)) {
			t.Fatalf("ValidateCarrier(1) %v, Validate %v", carried, err)
		} else if carried == nil && err != nil && CodeOf(err) != CodeTooDeep {
			t.Fatalf("ValidateCarrier(1) accepted what Validate refuses for %v", err)
		}
		if err != nil {
			return
		}
		c1, err := Canonical(data)
		if err != nil {
			t.Fatalf("validated input not canonicalisable: %v", err)
		}
		c2, err := Canonical(c1)
		if err != nil || string(c1) != string(c2) {
			t.Fatalf("canonical form not a fixed point: %s vs %s (%v)", c1, c2, err)
		}
		v, err := ParseStrict(data, MaxGuestBytes)
		if err != nil {
			t.Fatalf("ParseStrict refused validated input: %v", err)
		}
		if want := decodeWithEncodingJSON(t, data); !reflect.DeepEqual(v, want) {
			t.Fatalf("ParseStrict gave %#v, encoding/json %#v", v, want)
		}
	})
}

// decodeWithEncodingJSON is how ParseStrict decoded before it built its
// values itself: encoding/json's Decoder with UseNumber.
func decodeWithEncodingJSON(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json refused validated input: %v", err)
	}
	return v
}

// TestParseStrictDecodesAsEncodingJSON: the values ParseStrict builds are
// encoding/json's, and it refuses exactly what Validate refuses, with the
// same code; so does DecodeCanonical, which has no size bound.
func TestParseStrictDecodesAsEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`, `[]`, `0`, `-0.5e-3`, `1E+2`, `"😀"`, `"\ud83d\ude00"`, `"a\u0000b\n\/"`, " 1 ",
		`{"a":{"b":[true,false,null,{},[]],"c":-1.25},"d":"\u00e9"}`, `[[[1],[2,[3]]],{"":""}]`,
		`{"big":123456789012345678901234567890,"small":1e-300}`,
	} {
		v, err := ParseStrict([]byte(in), MaxGuestBytes)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if want := decodeWithEncodingJSON(t, []byte(in)); !reflect.DeepEqual(v, want) {
			t.Errorf("%s: %#v, want %#v", in, v, want)
		}
		if d, err := DecodeCanonical([]byte(in)); err != nil || !reflect.DeepEqual(d, v) {
			t.Errorf("%s: DecodeCanonical %#v (%v)", in, d, err)
		}
	}
	if v, _ := ParseStrict([]byte(`{"a":[]}`), MaxGuestBytes); v.(map[string]any)["a"] == nil {
		t.Error("[] decoded to a nil slice")
	}
	for _, in := range []string{"", " ", "\"\xff\"", `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[{"k":1,"k":1}]`,
		strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), `{} {}`, `"\ud800"`, `1e400`, `[1,]`, `{"a" 1}`, `"\x"`} {
		want := CodeOf(Validate([]byte(in), MaxGuestBytes))
		if want == "" {
			t.Fatalf("%q: Validate accepts it", in)
		}
		if _, err := ParseStrict([]byte(in), MaxGuestBytes); CodeOf(err) != want {
			t.Errorf("%q: ParseStrict %v, want %s", in, err, want)
		}
		if _, err := DecodeCanonical([]byte(in)); CodeOf(err) != want {
			t.Errorf("%q: DecodeCanonical %v, want %s", in, err, want)
		}
	}
	if _, err := ParseStrict([]byte(`"abc"`), 4); CodeOf(err) != CodeTooLarge {
		t.Errorf("oversize: %v", err)
	}
	if _, err := DecodeCanonical([]byte(`"` + strings.Repeat("a", MaxGuestBytes) + `"`)); err != nil {
		t.Errorf("DecodeCanonical bounded: %v", err)
	}
}

// BenchmarkParseStrict: one pass that validates and decodes, beside what
// ParseStrict did before (Validate, then encoding/json's Decoder), on a
// call's arguments.
func BenchmarkParseStrict(b *testing.B) {
	doc := []byte(`{"city":"Paris","days":[1,2,3],"units":{"temperature":"C","wind":"km/h"},"detail":true,"note":"caf\u00e9"}`)
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseStrict(doc, MaxGuestBytes); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("validate-then-encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := Validate(doc, MaxGuestBytes); err != nil {
				b.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(doc))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFields: the members named, as their bytes stand in the document;
// every refusal Validate makes, and the two of a struct's decoding.
func TestFields(t *testing.T) {
	doc := ` {"b" : [1, {"x":"\u0079"}] ,"a":"s\"q", "c":null} `
	parts, err := Fields([]byte(doc), MaxGuestBytes, "a", "b", "c", "d")
	if err != nil {
		t.Fatal(err)
	}
	if string(parts[0]) != `"s\"q"` || string(parts[1]) != `[1, {"x":"\u0079"}]` || string(parts[2]) != `null` || parts[3] != nil {
		t.Fatalf("%q", parts)
	}
	for in, code := range map[string]string{
		`{"a":1,"e":2}`: CodeUnknownField, `{"A":1}`: CodeUnknownField, `[{"a":1}]`: CodeNotObject, `"a"`: CodeNotObject,
		`{"a":1,"a":1}`: CodeDuplicateKey, `{"a":{"z":1,"z":2}}`: CodeDuplicateKey, `{"a":1} x`: CodeTrailingData, ` `: CodeEmpty,
		"{\"a\":\"\xff\"}": CodeInvalidUTF8, `{"a":1e999}`: CodeBadNumber,
	} {
		if _, err := Fields([]byte(in), MaxGuestBytes, "a"); CodeOf(err) != code {
			t.Errorf("%s: %v, want %s", in, err, code)
		}
	}
	if _, err := Fields([]byte(`{"a":"xyz"}`), 5, "a"); CodeOf(err) != CodeTooLarge {
		t.Errorf("oversize: %v", err)
	}
}

func TestString(t *testing.T) {
	for raw, want := range map[string]string{`"abc"`: "abc", `""`: "", `"\u00e9\n\ud83d\ude00"`: "é\n😀", `"a\/b"`: "a/b"} {
		if got, ok := String([]byte(raw)); !ok || got != want {
			t.Errorf("%s: %q %v", raw, got, ok)
		}
	}
	for _, raw := range []string{``, `abc`, `"abc`, `"a" `, ` "a"`, `"\ud800"`, "\"\xff\"", `null`, `1`, `"a""b"`} {
		if got, ok := String([]byte(raw)); ok {
			t.Errorf("%q accepted as %q", raw, got)
		}
	}
}
